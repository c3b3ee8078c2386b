"""`lidguard macos-permission status|check|install|remove` over the stand-in tools (REFERENCE 1.5)."""

from __future__ import annotations

import json
import stat

import pytest

MARKERS = ("# Managed by LidGuard macOS permission command.", "# LidGuard macOS sudoers rule v1.")


def expected_rule(mac, user: str) -> str:
    pmset, powermetrics = mac.tools.bin / "pmset", mac.tools.bin / "powermetrics"
    commands = ", ".join([*(f"{pmset} -a {setting}" for setting in (
        "disablesleep 0", "disablesleep 1", "hibernatemode 0", "hibernatemode 3", "hibernatemode 25")),
        f"{powermetrics} --samplers smc -n 1 -i 1000"])
    return f"{MARKERS[0]}\n{MARKERS[1]}\n{user} ALL=(root) NOPASSWD: {commands}\n"


def user_name() -> str:
    import os
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


@pytest.mark.parametrize("as_root", ["0", "1"])
def test_install_validates_with_visudo_writes_0440_and_remove_deletes_it(mac, as_root):
    mac.env["LIDGUARD_MACOS_TEST_ROOT"] = as_root
    result = mac.run("macos-permission", "install")
    assert result.returncode == 0, result.stderr
    path = mac.tools.sudoers
    assert result.stdout.strip() == f"Installed LidGuard sudoers rule for user {user_name()}: {path}"
    assert path.read_text() == expected_rule(mac, user_name())
    assert stat.S_IMODE(path.stat().st_mode) == 0o440
    [visudo] = mac.tools.commands("visudo")
    assert visudo[1] == "-cf" and len(visudo) == 3  # validated before it was moved in place
    if as_root == "0":
        [sudo] = mac.tools.commands("sudo")
        assert sudo[:3] == ["sudo", "/bin/sh", "-c"] and sudo[4:] == [
            "lidguard-sudoers-install", sudo[5], str(path), MARKERS[0][2:], MARKERS[1][2:]]
    else:
        assert mac.tools.commands("sudo") == []
    status = mac.run("macos-permission", "status", check=True).stdout
    assert "Sudoers rule: installed for current user" in status
    removed = mac.run("macos-permission", "remove")
    assert removed.returncode == 0 and removed.stdout.strip() == f"Removed LidGuard sudoers rule: {path}"
    assert not path.exists()
    again = mac.run("macos-permission", "remove")
    assert again.returncode == 0 and again.stdout.strip() == f"LidGuard sudoers rule is not installed: {path}"


@pytest.mark.parametrize("as_root", ["0", "1"])
def test_an_unmanaged_sudoers_file_is_never_overwritten_or_removed(mac, as_root):
    mac.env["LIDGUARD_MACOS_TEST_ROOT"] = as_root
    path = mac.tools.sudoers
    path.parent.mkdir(parents=True)
    path.write_text("alice ALL=(ALL) ALL\n")
    result = mac.run("macos-permission", "install")
    assert result.returncode == 1 and result.stderr.strip() == f"Refusing to overwrite unmanaged sudoers file: {path}"
    result = mac.run("macos-permission", "remove")
    assert result.returncode == 1 and result.stderr.strip() == f"Refusing to remove unmanaged sudoers file: {path}"
    assert path.read_text() == "alice ALL=(ALL) ALL\n"


def test_a_rule_visudo_rejects_is_never_installed(mac):
    mac.tools.set_machine(visudo="reject")
    result = mac.run("macos-permission", "install")
    assert result.returncode == 1 and "visudo rejected the generated rule" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert not mac.tools.sudoers.exists() and mac.tools.commands("sudo") == []


def test_status_lists_rule_tools_and_values_and_tries_sudo_n_with_the_same_value(mac):
    mac.tools.set_machine(sleep_disabled=0, hibernatemode=3)
    result = mac.run("macos-permission", "status")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[:4] == ["macOS permission status:", f"User: {user_name()}", f"Sudoers path: {mac.tools.sudoers}",
                         "Sudoers rule: not installed"]
    assert "Privileged pmset usability: ok" in lines
    assert f"caffeinate: available ({mac.tools.bin / 'caffeinate'})" in lines
    assert "SleepDisabled: 0" in lines and "hibernatemode: 3" in lines
    assert mac.tools.commands("sudo") == [["sudo", "-n", "pmset", "-a", "disablesleep", "0"]]
    assert mac.tools.machine()["sleep_disabled"] == 0


def test_check_is_non_destructive_and_fails_with_the_hint_without_the_rule(mac):
    mac.tools.set_machine(hibernatemode=25)
    result = mac.run("macos-permission", "check")
    assert result.returncode == 0, result.stdout
    assert mac.tools.commands("sudo") == [
        ["sudo", "-n", "pmset", "-a", "disablesleep", "0"],
        ["sudo", "-n", "pmset", "-a", "hibernatemode", "25"],
        ["sudo", "-n", "powermetrics", "--samplers", "smc", "-n", "1", "-i", "1000"],
    ]
    assert ["pmset", "sleepnow"] not in mac.tools.commands("pmset")
    assert mac.tools.machine()["hibernatemode"] == 25
    mac.tools.set_machine(sudo="password")
    failed = mac.run("macos-permission", "check")
    assert failed.returncode == 1
    assert "lidguard macos-permission install" in failed.stdout


def test_the_real_sudoers_path_is_refused_under_test(mac):
    del mac.env["LIDGUARD_MACOS_SUDOERS_PATH"]
    result = mac.run("macos-permission", "install")
    assert result.returncode == 1 and "refusing the real sudoers file under test" in result.stderr
    assert mac.tools.commands("sudo") == [] and mac.tools.commands("visudo") == []


def test_doctor_lists_every_capability_with_its_source_or_reason(mac):
    report = mac.json("doctor")
    assert report["platform"] == "macos"
    capabilities = capability_texts(report)
    assert set(capabilities) == {"power", "lid_policy", "lid", "display", "suspend", "thermal", "process",
                                 "sound", "permission", "brightness"}
    assert capabilities["brightness"].startswith("unsupported: the DisplayServices binding is inactive")
    for name in ("power", "lid_policy", "lid", "display", "suspend", "thermal", "sound"):
        assert capabilities[name].startswith("available (command-line:"), (name, capabilities[name])
    assert "IOHID binding inactive" in capabilities["thermal"]
    assert "ps -axo pid=,ppid=,comm=,command=" in capabilities["process"]
    assert capabilities["permission"].startswith(f"sudoers rule {mac.tools.sudoers}: not installed")
    [native] = [module for module in report["nativeModules"] if module["name"] == "macos"]
    assert native["active"] is False and native["reason"]
    assert report["powerSource"] == {"onAc": True, "batteryPercent": 100, "batteryStatus": "Charged"}
    # doctor never changes anything: no pmset write, no sleep (sudo -n powermetrics is a read).
    assert all(call[:2] != ["pmset", "-a"] and call != ["pmset", "sleepnow"] for call in mac.tools.commands("pmset"))


def test_doctor_says_why_when_the_tools_are_missing(mac):
    for tool in ("ioreg", "system_profiler", "caffeinate", "powermetrics"):
        (mac.tools.bin / tool).unlink()
    result = mac.run("doctor", "--json")
    assert result.returncode == 1  # no caffeinate: nothing keeps the Mac awake
    capabilities = capability_texts(json.loads(result.stdout))
    assert capabilities["lid"].startswith("unavailable: ioreg missing")
    assert capabilities["display"].startswith("unavailable: system_profiler missing")
    assert capabilities["power"].startswith("unavailable: caffeinate missing")
    assert capabilities["thermal"].startswith("unavailable: no temperature from powermetrics (missing)")


def capability_texts(report):
    """doctor --json capabilities as the human lines' texts (the one formatter doctor uses)."""
    from lidguard.cli.doctor import capability_text

    return {item["name"]: capability_text(item) for item in report["capabilities"]}
