"""The Linux brightness capability (seed 004 dimming, issue 21) against python-dbusmock's logind on a
private system bus and a temporary /sys tree, and the whole runtime dimming and restoring the backlight.

The logind template has sessions (``Mock.AddSession``) with ``IdleHint``/``IdleSinceHint`` but no
``Session.SetBrightness`` and a ``GetSession`` that does not know ``auto``; the fixture adds both the way
real logind behaves: ``GetSession("auto")`` is the caller's session, and ``SetBrightness`` writes the
device's sysfs ``brightness`` (the mock records every call). ``SetIdleForTest`` stands in for the desktop
setting the session's idle hint.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from dbus_harness import LOGIND_NAME, LOGIND_PATH, MOCK_INTERFACE

from lidguard.platform.api import BrightnessLevel, IdleReading, Unsupported
from lidguard.platform.linux._binding import LOGIND_SESSION_INTERFACE, binding_status
from lidguard.platform.linux.brightness import LinuxBrightness, choose_backlight, read_backlights

pytestmark = pytest.mark.dbus

SESSION_ID = "c2"
SESSION_PATH = f"/org/freedesktop/login1/session/{SESSION_ID}"

_GET_SESSION = (f"ret = dbus.ObjectPath('/org/freedesktop/login1/session/' + "
                f"({SESSION_ID!r} if args[0] in ('auto', 'self', '') else args[0]))")
_NO_SESSION = ("raise dbus.exceptions.DBusException('Caller does not belong to any known session', "
               "name='org.freedesktop.login1.NoSessionForPID')")
_SET_BRIGHTNESS = """
if args[0] not in ('backlight', 'leds') or '/' in args[1]:
    raise dbus.exceptions.DBusException('Invalid subsystem or device', name='org.freedesktop.DBus.Error.InvalidArgs')
with open({root!r} + '/sys/class/backlight/' + args[1] + '/brightness', 'w') as _attribute:
    _attribute.write('%d\\n' % args[2])
"""
_REFUSE = ("raise dbus.exceptions.DBusException('Not allowed', "
           "name='org.freedesktop.DBus.Error.AccessDenied')")
_SET_IDLE = ("self.UpdateProperties('org.freedesktop.login1.Session', "
             "{'IdleHint': dbus.Boolean(args[0]), 'IdleSinceHint': dbus.UInt64(args[1])})")


def _backlight(root: Path, name: str, kind: str, brightness: int | str, maximum: int | str) -> Path:
    device = root / "sys" / "class" / "backlight" / name
    device.mkdir(parents=True, exist_ok=True)
    (device / "type").write_text(f"{kind}\n")
    (device / "brightness").write_text(f"{brightness}\n")
    (device / "max_brightness").write_text(f"{maximum}\n")
    return device


def _microseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000)


class BrightnessLogind:
    """The logind mock with a session of this user, SetBrightness and a drivable idle hint."""

    def __init__(self, mock, root: Path) -> None:
        self.mock = mock
        self.root = root
        mock.call(LOGIND_NAME, LOGIND_PATH, MOCK_INTERFACE, "AddSession",
                  [SESSION_ID, "seat0", os.getuid(), "tester", True], "ssusb")
        mock.add_method("GetSession", "s", "o", _GET_SESSION)
        self.set_brightness_code(_SET_BRIGHTNESS.format(root=str(root)))
        mock.call(LOGIND_NAME, SESSION_PATH, MOCK_INTERFACE, "AddMethod",
                  [LOGIND_SESSION_INTERFACE, "SetIdleForTest", "bt", "", _SET_IDLE], "sssss")

    def set_brightness_code(self, code: str) -> None:
        self.mock.call(LOGIND_NAME, SESSION_PATH, MOCK_INTERFACE, "AddMethod",
                       [LOGIND_SESSION_INTERFACE, "SetBrightness", "ssu", "", code], "sssss")

    def set_idle(self, idle: bool, since: datetime | None = None) -> None:
        self.mock.call(LOGIND_NAME, SESSION_PATH, LOGIND_SESSION_INTERFACE, "SetIdleForTest",
                       [idle, _microseconds(since) if since else 0], "bt")

    def brightness_calls(self) -> list[list]:
        calls = self.mock.call(LOGIND_NAME, SESSION_PATH, MOCK_INTERFACE, "GetMethodCalls", ["SetBrightness"], "s")
        return [list(args) for _, args in calls]

    def sysfs_brightness(self, name: str) -> int:
        """The value the mock's SetBrightness wrote; -1 while it is writing (it truncates, then writes)."""
        text = (self.root / "sys" / "class" / "backlight" / name / "brightness").read_text()
        return int(text) if text.strip() else -1


@pytest.fixture
def machine_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "machine"
    root.mkdir()
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(root))
    return root


@pytest.fixture
def brightness_logind(logind_mock, machine_root: Path) -> BrightnessLogind:
    return BrightnessLogind(logind_mock, machine_root)


# -- sysfs: which backlight --------------------------------------------------------------------------------

def test_the_firmware_backlight_wins_then_platform_then_raw(machine_root):
    _backlight(machine_root, "intel_backlight", "raw", 96000, 120000)
    _backlight(machine_root, "acpi_video0", "firmware", 7, 15)
    _backlight(machine_root, "thinkpad_screen", "platform", 3, 7)
    assert choose_backlight(read_backlights()).name == "acpi_video0"
    assert LinuxBrightness().read_brightness() == BrightnessLevel("backlight/acpi_video0", 7, 15)
    (machine_root / "sys/class/backlight/acpi_video0/type").write_text("gadget\n")  # unknown type: skipped
    assert LinuxBrightness().read_brightness() == BrightnessLevel("backlight/thinkpad_screen", 3, 7)


@pytest.mark.parametrize("brightness, maximum", [
    ("x", 100), ("-1", 100), ("1e3", 100), (5, 0), (5, "99999999999"), ("\u0661", 100), ("", 100)])
def test_unusable_backlight_values_are_skipped(machine_root, brightness, maximum):
    _backlight(machine_root, "bad", "raw", brightness, maximum)
    _backlight(machine_root, "good", "raw", 40, 100)
    assert [device.name for device in read_backlights()] == ["good"]


def test_a_directory_in_place_of_an_attribute_and_no_backlight_at_all(machine_root):
    device = _backlight(machine_root, "intel_backlight", "raw", 40, 100)
    (device / "brightness").unlink()
    (device / "brightness").mkdir()
    with pytest.raises(Unsupported):
        LinuxBrightness().read_brightness()
    assert LinuxBrightness().describe().startswith("unsupported: no readable backlight device")


# -- logind: SetBrightness and the idle hint ----------------------------------------------------------------

def test_set_brightness_goes_through_the_callers_session(brightness_logind, machine_root, binding_active):
    _backlight(machine_root, "intel_backlight", "raw", 96000, 120000)
    control = LinuxBrightness()
    control.set_brightness(BrightnessLevel("backlight/intel_backlight", 24000, 120000))
    assert brightness_logind.brightness_calls() == [["backlight", "intel_backlight", 24000]]
    assert control.read_brightness().value == 24000  # logind wrote sysfs
    assert "available (backlight intel_backlight, raw, 24000/120000 = 20 %" in control.describe()


@pytest.mark.parametrize("level", [
    BrightnessLevel("backlight/gone", 1, 100),  # the device vanished
    BrightnessLevel("leds/intel_backlight", 1, 100),  # another subsystem
    BrightnessLevel("backlight/intel_backlight", 101, 100),  # above the maximum sysfs says now
    BrightnessLevel("backlight/intel_backlight", -1, 100),
    BrightnessLevel("backlight/../intel_backlight", 1, 100),
])
def test_set_brightness_refuses_what_is_not_there_without_calling_logind(brightness_logind, machine_root,
                                                                         binding_active, level):
    _backlight(machine_root, "intel_backlight", "raw", 50, 100)
    with pytest.raises(OSError):
        LinuxBrightness().set_brightness(level)
    assert brightness_logind.brightness_calls() == []


def test_logind_refusing_set_brightness_is_an_oserror(brightness_logind, machine_root, binding_active):
    _backlight(machine_root, "intel_backlight", "raw", 50, 100)
    brightness_logind.set_brightness_code(_REFUSE)
    with pytest.raises(OSError, match="AccessDenied"):
        LinuxBrightness().set_brightness(BrightnessLevel("backlight/intel_backlight", 10, 100))
    assert brightness_logind.sysfs_brightness("intel_backlight") == 50


def test_read_idle_from_the_session_hint(brightness_logind, binding_active):
    control = LinuxBrightness()
    assert control.read_idle() == IdleReading(False, None)
    since = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    brightness_logind.set_idle(True, since)
    assert control.read_idle() == IdleReading(True, since)
    brightness_logind.set_idle(False, since + timedelta(minutes=7))
    assert control.read_idle() == IdleReading(False, since + timedelta(minutes=7))


def test_read_idle_without_a_session_uses_the_managers_hint(start_logind_mock, binding_active):
    mock = start_logind_mock(IdleHint=True, IdleSinceHint=1_700_000_000_000_000)
    mock.add_method("GetSession", "s", "o", _NO_SESSION)
    assert LinuxBrightness().read_idle() == IdleReading(True, datetime.fromtimestamp(1_700_000_000, UTC))


def test_no_logind_means_unsupported(unreachable_system_bus, machine_root, binding_active):
    _backlight(machine_root, "intel_backlight", "raw", 50, 100)
    control = LinuxBrightness()
    with pytest.raises(Unsupported):
        control.read_idle()
    with pytest.raises(Unsupported):
        control.set_brightness(BrightnessLevel("backlight/intel_backlight", 10, 100))


# -- the whole runtime ----------------------------------------------------------------------------------------

def _build_machine(root: Path) -> None:
    state = root / "proc" / "acpi" / "button" / "lid" / "LID0" / "state"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("state:      open\n")
    connector = root / "sys" / "class" / "drm" / "card0-eDP-1"
    connector.mkdir(parents=True, exist_ok=True)
    (connector / "status").write_text("connected\n")
    _backlight(root, "intel_backlight", "raw", 96000, 120000)


def test_the_runtime_dims_restores_on_activity_and_a_kill_9_is_repaired_by_the_next_command(
        brightness_logind, machine_root, lidguard):
    if not binding_status()[0]:
        pytest.skip("SetBrightness goes through the sd-bus binding (LIDGUARD_NO_EXTENSIONS=1 on this run)")
    lg, logind = lidguard, brightness_logind
    _build_machine(machine_root)
    lg.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(machine_root),
                   "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"], "LIDGUARD_WATCHDOG": "off"})
    lg.env.pop("LIDGUARD_LOGIND_BINDING", None)
    backup = lg.data_dir / "pending-brightness-backup.json"
    lg.run("settings", "--dim-display-when-idle-minutes", "5", "--dim-display-brightness-percent", "25", check=True)
    logind.set_idle(True, datetime.now(UTC) - timedelta(minutes=10))  # away for ten minutes already
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)

    # Saved, then dimmed to 25 % of 120000.
    assert lg.wait_until(lambda: logind.sysfs_brightness("intel_backlight") == 30000, timeout=30)
    assert backup.exists() and oct(backup.stat().st_mode & 0o777) == "0o600"
    assert '"Brightness": 96000' in backup.read_text() and '"DimmedTo": 30000' in backup.read_text()

    # The user is back: restored within the dimmed poll, the backup gone.
    logind.set_idle(False, datetime.now(UTC))
    assert lg.wait_until(lambda: logind.sysfs_brightness("intel_backlight") == 96000, timeout=30)
    assert lg.wait_until(lambda: not backup.exists(), timeout=10)
    assert logind.brightness_calls() == [["backlight", "intel_backlight", 30000],
                                         ["backlight", "intel_backlight", 96000]]

    # Away again: dimmed again; then the runtime is killed outright.
    logind.set_idle(True, datetime.now(UTC) - timedelta(minutes=6))
    assert lg.wait_until(lambda: logind.sysfs_brightness("intel_backlight") == 30000, timeout=40)
    assert lg.wait_until(backup.exists)
    [pid] = lg.runtime_pids()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while lg.runtime_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not lg.runtime_pids()
    assert logind.sysfs_brightness("intel_backlight") == 30000 and backup.exists()  # nobody restored it yet

    # The next lidguard command restores it from the backup and deletes the backup.
    status = lg.json("status")
    assert status["runtimeRunning"] is False
    assert logind.sysfs_brightness("intel_backlight") == 96000 and not backup.exists()
    assert logind.brightness_calls()[-1] == ["backlight", "intel_backlight", 96000]


def test_without_the_binding_dimming_is_unsupported_and_doctor_says_why(machine_root, monkeypatch,
                                                                         unreachable_system_bus):
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    _backlight(machine_root, "intel_backlight", "raw", 50, 100)
    control = LinuxBrightness()
    assert control.read_brightness() == BrightnessLevel("backlight/intel_backlight", 50, 100)  # sysfs alone
    assert control.describe().startswith("unavailable: SetBrightness needs the logind binding (disabled by ")
    with pytest.raises(Unsupported):
        control.read_idle()
    with pytest.raises(Unsupported):
        control.set_brightness(BrightnessLevel("backlight/intel_backlight", 10, 100))
