"""`lidguard doctor` probes logind instead of assuming it, the platform extras are on the Protocol,
and `linux-permission` goes through the platform object (the CLI never imports ``platform.linux``).

Every bus here is private or does not exist: ``DBUS_SYSTEM_BUS_ADDRESS`` points at the dbusmock bus
(``system_bus``/``logind_mock`` from tests/linux/conftest.py) or at a socket nobody listens on.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from dbus_harness import LogindMock

from lidguard.platform.api import (
    PERMISSION_SUBCOMMANDS,
    NativeModuleStatus,
    PermissionManager,
    PowerSource,
    Unsupported,
)
from lidguard.platform.fake import FakePlatform
from lidguard.platform.host import host_os_name
from lidguard.platform.unsupported import UnsupportedPlatform

LOGIND_CAPABILITIES = ("power", "lid_policy", "suspend")
BACKENDS = {"binding": {}, "helpers": {"LIDGUARD_LOGIND_BINDING": "off"}}
linux_only = pytest.mark.skipif(host_os_name() != "linux", reason="linux-permission exists in Linux builds only")


def linux_env(lidguard, tmp_path: Path, address: str, backend: str) -> None:
    root = tmp_path / "machine"
    root.mkdir(exist_ok=True)
    lidguard.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(root),
                         "DBUS_SYSTEM_BUS_ADDRESS": address, **BACKENDS[backend]})
    if backend == "binding":
        lidguard.env.pop("LIDGUARD_LOGIND_BINDING", None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_doctor_says_unavailable_with_the_reason_when_no_system_bus_answers(lidguard, tmp_path, backend):
    socket = tmp_path / "no-system-bus-socket"
    linux_env(lidguard, tmp_path, f"unix:path={socket}", backend)
    report = json.loads(lidguard.run("doctor", "--json").stdout)
    for capability in LOGIND_CAPABILITIES:
        text = capability_texts(report)[capability]
        assert text.startswith("unavailable: "), (capability, text)
        assert len(text) > len("unavailable: logind cannot be reached ()"), text  # a reason follows
    result = lidguard.run("doctor")
    assert result.returncode == 1  # power unavailable: nothing can be protected
    text = result.stdout
    assert "  suspend: unavailable: " in text and "  power: unavailable: " in text
    assert text.splitlines()[-1].startswith("Verdict: cannot protect anything on this machine")


@pytest.mark.dbus
@pytest.mark.parametrize("backend", BACKENDS)
def test_doctor_says_available_when_logind_answers_and_changes_nothing(lidguard, tmp_path, backend,
                                                                         logind_mock: LogindMock):
    linux_env(lidguard, tmp_path, logind_mock_address(), backend)
    capabilities = capability_texts(lidguard.json("doctor"))
    for capability in LOGIND_CAPABILITIES:
        assert not capabilities[capability].startswith(("unavailable", "unsupported")), capabilities
    assert capabilities["suspend"].endswith("logind CanSuspend: yes")
    assert logind_mock.list_inhibitors() == []
    assert logind_mock.get_method_calls("Suspend") == [] and logind_mock.get_method_calls("Hibernate") == []


@pytest.mark.dbus
def test_doctor_says_suspend_is_unavailable_when_logind_says_no(lidguard, tmp_path,
                                                                start_logind_mock: Callable[..., LogindMock]):
    start_logind_mock(CanSuspend="na")
    linux_env(lidguard, tmp_path, logind_mock_address(), "binding")
    capabilities = capability_texts(lidguard.json("doctor"))
    assert capabilities["suspend"].startswith("unavailable: logind CanSuspend answered 'na'")
    assert not capabilities["power"].startswith("unavailable")


def logind_mock_address() -> str:
    import os

    return os.environ["DBUS_SYSTEM_BUS_ADDRESS"]  # set by the system_bus fixture


# -- platform extras on the Protocol -------------------------------------------------------------

def test_power_source_is_a_value_with_json_and_text():
    source = PowerSource(on_ac=True, battery_percent=80, battery_status="Charging")
    assert source.to_json() == {"onAc": True, "batteryPercent": 80, "batteryStatus": "Charging"}
    assert source.describe() == "AC, battery 80%, Charging"
    assert PowerSource(False, 15).describe() == "battery, battery 15%"
    assert PowerSource(None).describe() == "unknown"
    with pytest.raises(AttributeError):
        source.on_ac = False  # type: ignore[misc]  # frozen


def test_fake_and_unsupported_platforms_offer_every_extra():
    fake = FakePlatform()
    with pytest.raises(Unsupported):
        fake.describe_power_source()
    fake.machine.power_source = PowerSource(True, 50, "Full")
    assert fake.describe_power_source().describe() == "AC, battery 50%, Full"
    assert fake.native_module_statuses() == []
    assert isinstance(fake.permission, PermissionManager)
    out, err = io.StringIO(), io.StringIO()
    assert fake.permission.run("install", out=out, err=err) == 0
    assert fake.actions[-1]["action"] == "permission-install"
    assert "permission" in fake.describe_capabilities()

    other = UnsupportedPlatform("macos")
    with pytest.raises(Unsupported):
        other.describe_power_source()
    with pytest.raises(Unsupported):
        other.permission.run("status", out=out, err=err)
    assert other.native_module_statuses() == []
    assert other.describe_capabilities()["permission"].startswith("unsupported: ")


def test_linux_platform_offers_every_extra(tmp_path, monkeypatch, unreachable_system_bus):
    from lidguard.platform.linux import LinuxPlatform

    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(tmp_path))
    platform = LinuxPlatform()
    with pytest.raises(Unsupported):
        platform.describe_power_source()  # no power supply listed at all
    supplies = tmp_path / "sys" / "class" / "power_supply"
    for name, files in {"AC": {"type": "Mains", "online": "0"},
                        "BAT0": {"type": "Battery", "status": "Discharging", "capacity": "42"}}.items():
        (supplies / name).mkdir(parents=True)
        for file_name, value in files.items():
            (supplies / name / file_name).write_text(f"{value}\n")
    assert platform.describe_power_source() == PowerSource(False, 42, "Discharging")
    statuses = platform.native_module_statuses()
    assert statuses and all(isinstance(status, NativeModuleStatus) for status in statuses)
    assert isinstance(platform.permission, PermissionManager)
    monkeypatch.setenv("LIDGUARD_POLKIT_RULE_PATH", str(tmp_path / "49-lidguard.rules"))
    assert "not installed" in platform.describe_capabilities()["permission"]


def test_doctor_prints_the_power_source_as_text_and_camel_case_json(lidguard):
    assert "Power source: unavailable: the simulated machine has no powerSource" in \
        lidguard.run("doctor", check=True).stdout
    assert lidguard.json("doctor")["powerSource"] is None
    lidguard.set_machine(powerSource={"onAc": True, "batteryPercent": 80, "batteryStatus": "Charging"})
    assert "Power source: AC, battery 80%, Charging" in lidguard.run("doctor", check=True).stdout
    assert lidguard.json("doctor")["powerSource"] == {"onAc": True, "batteryPercent": 80,
                                                      "batteryStatus": "Charging"}


def test_cli_never_imports_the_linux_package():
    cli = Path(__import__("lidguard.cli", fromlist=["x"]).__file__).parent
    for source in cli.glob("*.py"):
        text = source.read_text()
        assert "platform.linux" not in text and "from ..platform import linux" not in text, source
    assert "getattr(" not in (cli / "doctor.py").read_text()


# -- linux-permission ----------------------------------------------------------------------------

@linux_only
def test_linux_permission_goes_through_the_platform(lidguard):
    result = lidguard.run("linux-permission", "status", check=True)
    assert result.stdout.strip() == "Fake platform: permission status changes nothing."
    assert [action["action"] for action in lidguard.actions()] == ["permission-status"]
    code = ("import sys; from lidguard.cli import main; code = main(['linux-permission', 'check']); "
            "print(json.dumps([code, sorted(m for m in sys.modules if m.startswith('lidguard.platform.linux'))]))")
    probe = subprocess.run([sys.executable, "-c", "import json; " + code], env=lidguard.env, text=True,
                           capture_output=True, check=True)
    assert json.loads(probe.stdout.splitlines()[-1]) == [0, []]


@linux_only
def test_linux_permission_on_a_platform_without_it_is_one_line(lidguard):
    lidguard.env["LIDGUARD_PLATFORM"] = "macos"
    result = lidguard.run("linux-permission", "status")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "lidguard: The linux-permission command needs the linux backend; the selected platform is macos."]


@linux_only
@pytest.mark.parametrize("args", [("linux-permission", "--help"), ("help", "linux-permission")])
def test_linux_permission_help_lists_its_subcommands(lidguard, args):
    lidguard.env["COLUMNS"] = "80"
    result = lidguard.run(*args, check=True)
    lines = result.stdout.splitlines()
    for name in PERMISSION_SUBCOMMANDS:
        found = [index for index, line in enumerate(lines) if line.strip().startswith(f"{name} ")]
        assert len(found) == 1, (name, result.stdout)
        assert len(lines[found[0]].split(None, 1)[1]) > 20  # a description follows the name ...
        following = lines[found[0] + 1] if found[0] + 1 < len(lines) else ""
        assert following.strip().split(" ", 1)[0] in (*PERMISSION_SUBCOMMANDS, ""), result.stdout  # ... on one line
    missing = lidguard.run("linux-permission")
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1


def capability_texts(report):
    """doctor --json capabilities as the human lines' texts (the one formatter doctor uses)."""
    from lidguard.cli.doctor import capability_text

    return {item["name"]: capability_text(item) for item in report["capabilities"]}
