"""The whole runtime on the Linux backend: real `lidguard` processes, a private system bus with
python-dbusmock's logind, and a temporary /proc + /sys tree (LIDGUARD_SYSFS_ROOT).

Nothing here can reach the machine's real logind: every process gets DBUS_SYSTEM_BUS_ADDRESS of
the private bus.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.platform.linux._binding import binding_status
from lidguard.platform.linux.power import INHIBITOR_WHO, LID_SWITCH_WHY
from lidguard.settings.model import DEFAULT_POWER_REQUEST_REASON

pytestmark = pytest.mark.dbus


def binding_active() -> bool:
    return binding_status()[0]


def install_fake_systemctl(lidguard, folder: Path) -> Path:
    """With the binding off the backend falls back to `systemctl`: give it a recording fake."""
    folder.mkdir(exist_ok=True)
    calls = folder / "systemctl-calls"
    fake = folder / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\n')
    fake.chmod(0o755)
    lidguard.env["PATH"] = f"{folder}:{lidguard.env['PATH']}"
    lidguard.env["LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS"] = "1"
    return calls


def suspend_requests(lidguard) -> list[str]:
    """What reached the suspend backend: logind calls through the binding, else the fake systemctl."""
    if binding_active():
        return [f"{name}{args}" for name in ("Suspend", "Hibernate")
                for _, args in lidguard.logind.get_method_calls(name)]
    calls = lidguard.systemctl_calls
    return calls.read_text().split("\n")[:-1] if calls.exists() else []


def build_machine(root: Path, *, lid: str, connectors: dict[str, str]) -> None:
    state = root / "proc" / "acpi" / "button" / "lid" / "LID0" / "state"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(f"state:      {lid}\n")
    drm = root / "sys" / "class" / "drm"
    drm.mkdir(parents=True, exist_ok=True)
    for name, status in connectors.items():
        (drm / name).mkdir(exist_ok=True)
        (drm / name / "status").write_text(f"{status}\n")


@pytest.fixture
def linux_lidguard(logind_mock, lidguard, tmp_path):
    """The `lidguard` process helper switched to the Linux backend on the private bus."""
    root = tmp_path / "machine"
    build_machine(root, lid="open", connectors={"card0-eDP-1": "connected", "card0-HDMI-A-1": "disconnected"})
    lidguard.env.update({
        "LIDGUARD_PLATFORM": "linux",
        "LIDGUARD_SYSFS_ROOT": str(root),
        "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"],
    })
    lidguard.env.pop("LIDGUARD_LOGIND_BINDING", None)
    lidguard.systemctl_calls = install_fake_systemctl(lidguard, tmp_path / "fake-bin")
    lidguard.machine_root = root
    lidguard.logind = logind_mock
    return lidguard


def lidguard_inhibitors(mock) -> list[tuple]:
    return ours(mock.list_inhibitors())


def ours(entries: list[tuple]) -> list[tuple]:
    """LidGuard's entries of a ListInhibitors answer (what, who, why, mode, uid, pid)."""
    return [entry for entry in entries if entry[1] == INHIBITOR_WHO]


def described(entries: list[tuple]) -> list[tuple[str, str, str, str]]:
    """(what, who, why, mode) of LidGuard's entries, sorted: compared exactly, duplicates included."""
    return sorted(tuple(entry[:4]) for entry in ours(entries))


# What a session under the default settings holds: a sleep and an idle block inhibitor for the power request
# and one handle-lid-switch block inhibitor for the lid policy, each with its own reason.
PROTECTED = sorted([
    ("handle-lid-switch", INHIBITOR_WHO, LID_SWITCH_WHY, "block"),
    ("idle", INHIBITOR_WHO, DEFAULT_POWER_REQUEST_REASON, "block"),
    ("sleep", INHIBITOR_WHO, DEFAULT_POWER_REQUEST_REASON, "block"),
])


def wait_until_protected(lg) -> None:
    held = lg.logind.wait_for_inhibitors(lambda entries: described(entries) == PROTECTED)
    assert described(held) == PROTECTED


def wait_until_unprotected(lg) -> None:
    released = lg.logind.wait_for_inhibitors(lambda entries: not ours(entries))
    assert described(released) == []


def test_protection_holds_sleep_idle_and_lid_inhibitors_and_releases_them(linux_lidguard):
    lg = linux_lidguard
    assert described(lg.logind.list_inhibitors()) == []
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    wait_until_protected(lg)
    # A second session shares the same protection: no second set of inhibitors.
    lg.run("start", "--provider", "codex", "--session", "s2", check=True)
    lg.run("stop", "--provider", "codex", "--session", "s2", check=True)
    assert described(lg.logind.list_inhibitors()) == PROTECTED
    lg.run("stop", "--provider", "claude", "--session", "s1", check=True)
    wait_until_unprotected(lg)
    assert not (lg.data_dir / "pending-lid-action-backup.json").exists()


def test_kill_9_of_the_runtime_drops_its_inhibitors(linux_lidguard):
    lg = linux_lidguard
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    wait_until_protected(lg)
    assert (lg.data_dir / "pending-lid-action-backup.json").exists()
    pids = lg.runtime_pids()
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)
    assert lg.wait_until(lambda: not Path(f"/proc/{pids[0]}").exists() or _is_zombie(pids[0]))
    # logind drops an inhibitor when the last copy of its fd closes: the killed runtime's were the only ones.
    wait_until_unprotected(lg)
    # The next command finds the lid backup left behind, clears it, and takes no inhibitor of its own.
    status = lg.json("status")
    assert status["runtimeRunning"] is False
    assert not (lg.data_dir / "pending-lid-action-backup.json").exists()
    assert described(lg.logind.list_inhibitors()) == []


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _stop_and_wait_for_history(lg, expected_entries: int = 1) -> list[dict]:
    lg.run("settings", "--post-stop-suspend-delay-seconds", "1", check=True)
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    lg.run("stop", "--provider", "claude", "--session", "s1", check=True)
    assert lg.wait_until(lambda: len(lg.json("suspend-history")["entries"]) >= expected_entries)
    return lg.json("suspend-history")["entries"]


def test_closed_lid_with_only_the_internal_panel_suspends_once(linux_lidguard):
    lg = linux_lidguard
    build_machine(lg.machine_root, lid="closed", connectors={"card0-eDP-1": "connected"})
    [entry] = _stop_and_wait_for_history(lg)
    assert entry["Succeeded"] is True and entry["SuspendMode"] == "Sleep"
    assert suspend_requests(lg) == (["Suspend[False]"] if binding_active() else ["suspend"])
    assert not lidguard_inhibitors(lg.logind)


@pytest.mark.parametrize("lid, connectors", [
    ("closed", {"card0-eDP-1": "connected", "card0-HDMI-A-1": "connected"}),
    ("open", {"card0-eDP-1": "connected"}),
])
def test_external_display_or_open_lid_never_suspends(linux_lidguard, lid, connectors):
    lg = linux_lidguard
    build_machine(lg.machine_root, lid=lid, connectors=connectors)
    lg.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    lg.run("stop", "--provider", "claude", "--session", "s1", check=True)
    log = lg.data_dir / "session-execution.log"
    assert lg.wait_until(lambda: log.exists() and "stop-suspend-skipped" in log.read_text())
    assert suspend_requests(lg) == []
    assert lg.json("suspend-history")["entries"] == []


def test_hibernate_mode_calls_hibernate(linux_lidguard):
    lg = linux_lidguard
    build_machine(lg.machine_root, lid="closed", connectors={"card0-eDP-1": "connected"})
    lg.run("settings", "--suspend-mode", "hibernate", check=True)
    [entry] = _stop_and_wait_for_history(lg)
    assert entry["SuspendMode"] == "Hibernate" and entry["Succeeded"] is True
    assert suspend_requests(lg) == (["Hibernate[False]"] if binding_active() else ["hibernate"])


def test_can_suspend_no_is_a_logged_failure_without_a_crash(start_logind_mock, lidguard, tmp_path):
    if not binding_active():
        pytest.skip("CanSuspend is asked through the sd-bus binding; the systemctl fallback has no such query")
    install_fake_systemctl(lidguard, tmp_path / "fake-bin")
    mock = start_logind_mock(CanSuspend="no")
    root = tmp_path / "machine"
    build_machine(root, lid="closed", connectors={"card0-eDP-1": "connected"})
    lidguard.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(root),
                         "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"]})
    [entry] = _stop_and_wait_for_history(lidguard)
    assert entry["Succeeded"] is False
    assert mock.get_method_calls("Suspend") == []
    assert "stop-suspend-failed" in (lidguard.data_dir / "session-execution.log").read_text()
    assert lidguard.json("status")["runtimeRunning"] is True


def test_access_denied_suspend_is_a_logged_failure_without_a_crash(linux_lidguard):
    if not binding_active():
        pytest.skip("the mock's AccessDenied reaches only the sd-bus binding; systemctl talks to systemd")
    lg = linux_lidguard
    build_machine(lg.machine_root, lid="closed", connectors={"card0-eDP-1": "connected"})
    lg.logind.add_method(
        "Suspend", "b", "",
        "raise dbus.exceptions.DBusException('Permission denied', "
        "name='org.freedesktop.DBus.Error.AccessDenied')")
    [entry] = _stop_and_wait_for_history(lg)
    assert entry["Succeeded"] is False
    assert "AccessDenied" in entry["Message"]
    assert lg.json("status")["runtimeRunning"] is True


@pytest.mark.parametrize("agent_name, provider", [
    ("claude", "claude"), ("codex", "codex"), ("copilot", "copilot"), ("opencode", "opencode"),
])
def test_agent_in_a_real_process_chain_is_watched_until_it_exits(linux_lidguard, tmp_path, agent_name, provider):
    lg = linux_lidguard
    bin_dir = tmp_path / "agent-bin"
    bin_dir.mkdir()
    agent = bin_dir / agent_name
    agent.symlink_to(sys.executable)  # a fake agent binary: its comm and exe carry the provider's name
    hook = (f"{sys.executable} -m lidguard start --provider {provider} --session chain --parent-pid auto"
            " >/dev/null; sleep 30")
    # shell -> fake agent -> sh -c -> lidguard (the hook); the fake agent runs the hook like an agent does.
    script = ("import subprocess, sys; subprocess.run(['/bin/sh', '-c', sys.argv[1]])")
    shell = subprocess.Popen(["/bin/sh", "-c", f'"{agent}" -c "{script}" "{hook}"'], env=lg.env,
                             start_new_session=True)
    try:
        assert lg.wait_until(lambda: lg.json("status")["activeSessionCount"] == 1)
        [session] = lg.json("status")["sessions"]
        watched = session["watchedProcessIdentifier"]
        assert watched, "the agent process must be resolved from the hook's ancestry"
        comm = Path(f"/proc/{watched}/comm").read_text().strip()
        assert comm == agent_name[:15]
        os.kill(watched, signal.SIGKILL)
        assert lg.wait_until(lambda: lg.json("status")["activeSessionCount"] == 0)
        log = (lg.data_dir / "session-execution.log").read_text()
        assert "watched-process-exited" in log
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()


def test_status_and_doctor_report_the_power_source(linux_lidguard):
    lg = linux_lidguard
    supplies = lg.machine_root / "sys" / "class" / "power_supply"
    for name, files in {"AC": {"type": "Mains", "online": "1"},
                        "BAT0": {"type": "Battery", "status": "Charging", "capacity": "80"}}.items():
        (supplies / name).mkdir(parents=True)
        for file_name, value in files.items():
            (supplies / name / file_name).write_text(f"{value}\n")
    status = lg.json("status")
    assert status["powerSource"] == {"onAc": True, "batteryPercent": 80, "batteryStatus": "Charging"}
    assert "Power source: AC, battery 80%, Charging" in lg.run("status", check=True).stdout
    assert lg.json("doctor")["powerSource"]["batteryPercent"] == 80
    assert "--prevent-away-mode-sleep" not in lg.run("settings", "--help", check=True).stdout


def test_linux_permission_commands_through_the_cli(linux_lidguard, tmp_path):
    lg = linux_lidguard
    rule = tmp_path / "rules.d" / "49-lidguard.rules"
    rule.parent.mkdir()
    lg.env["LIDGUARD_POLKIT_RULE_PATH"] = str(rule)
    sudo_log = tmp_path / "sudo-calls.txt"
    if os.geteuid() != 0:  # a normal user installs and removes through `sudo sh -c`: a sudo that just runs it
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "sudo").write_text(f'#!/bin/sh\necho "$1 $2 $4" >> "{sudo_log}"\nexec "$@"\n')
        (bin_dir / "sudo").chmod(0o755)
        lg.env["PATH"] = f"{bin_dir}{os.pathsep}{lg.env['PATH']}"
    status = lg.run("linux-permission", "status", check=True).stdout
    assert "Polkit rule: not installed" in status
    assert "logind CanSuspend: yes" in status
    installed = lg.run("linux-permission", "install", check=True).stdout
    assert "Installed LidGuard polkit rule for user" in installed
    assert "org.freedesktop.login1.inhibit-handle-lid-switch" in rule.read_text()
    assert "installed for current user" in lg.run("linux-permission", "status", check=True).stdout
    check = lg.run("linux-permission", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert not lidguard_inhibitors(lg.logind), "check acquires and releases, never keeps"
    assert "Removed LidGuard polkit rule" in lg.run("linux-permission", "remove", check=True).stdout
    assert not rule.exists()
    expected_sudo = [] if os.geteuid() == 0 else ["sh -c lidguard-rule-install", "sh -c lidguard-rule-remove"]
    assert (sudo_log.read_text().splitlines() if sudo_log.exists() else []) == expected_sudo
    bad = lg.run("linux-permission", "explode")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
