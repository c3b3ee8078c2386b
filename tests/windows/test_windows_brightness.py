"""Windows display dimming at its seams (issue 21): WMI brightness through a recording PowerShell runner
and the idle time through the fake binding's GetLastInputInfo; then the runtime dimming and restoring
over that backend."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import anyio
import pytest
import trio.testing
from fake_winapi import FakeWindowsApi

from lidguard.platform.api import BrightnessLevel, IdleReading, Unsupported
from lidguard.platform.windows.backend import WindowsPlatform
from lidguard.platform.windows.brightness import READ_SCRIPT, WindowsBrightness, parse_brightness_output, set_script
from lidguard.platform.windows.thermal import CommandResult
from lidguard.platform.windows.winapi import ERROR_ACCESS_DENIED

PANEL = r"DISPLAY\BOE0812\4&2ad6e8ca&0&UID8388688_0"


class FakeWmi:
    """Answers the two scripts like the WMI classes would, and records each one."""

    def __init__(self, brightness: int | None = 80) -> None:
        self.brightness = brightness
        self.scripts: list[str] = []
        self.fail: CommandResult | Exception | None = None

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        assert list(argv[:4]) == ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command"]
        script = argv[4]
        self.scripts.append(script)
        if isinstance(self.fail, Exception):
            raise self.fail
        if self.fail is not None:
            return self.fail
        if script == READ_SCRIPT:
            out = "" if self.brightness is None else f"{PANEL}\t{self.brightness}\r\n"
            return CommandResult(0, out, "")
        if self.brightness is None or f"'{PANEL}'" not in script:
            return CommandResult(3, "", "")
        self.brightness = int(script.rsplit("[byte]", 1)[1].split("}", 1)[0])
        return CommandResult(0, "", "")


def test_reads_and_sets_the_panel_through_wmi():
    wmi = FakeWmi()
    control = WindowsBrightness(FakeWindowsApi(), wmi)
    level = control.read_brightness()
    assert level == BrightnessLevel("wmi/" + PANEL, 80, 100)
    control.set_brightness(BrightnessLevel(level.device, 20, 100))
    assert wmi.brightness == 20 and control.read_brightness().value == 20
    assert "WmiSetBrightness" in wmi.scripts[1] and "Brightness=[byte]20" in wmi.scripts[1]
    assert control.describe().startswith(r"available (DISPLAY\BOE0812")


def test_no_panel_is_unsupported_and_a_failing_query_is_an_oserror():
    wmi = FakeWmi(brightness=None)
    control = WindowsBrightness(FakeWindowsApi(), wmi)
    with pytest.raises(Unsupported):
        control.read_brightness()
    assert control.describe().startswith("unsupported: no active WmiMonitorBrightness")
    with pytest.raises(OSError, match="not there any more"):
        control.set_brightness(BrightnessLevel("wmi/" + PANEL, 20, 100))
    for failure in (CommandResult(1, "", "Get-CimInstance : Access denied\r\n"),
                    subprocess.TimeoutExpired("powershell.exe", 15), FileNotFoundError("powershell.exe")):
        wmi.fail = failure
        with pytest.raises(OSError):
            control.read_brightness()


@pytest.mark.parametrize("device, value", [
    ("wmi/x' ; Remove-Item C:\\ -Recurse ; '", 10),  # nothing from a backup file ever reaches a script raw
    ("wmi/" + PANEL, 101), ("wmi/" + PANEL, -1), ("backlight/intel_backlight", 10), ("wmi/", 10),
    ("wmi/" + "A" * 300, 10),
])
def test_set_refuses_anything_but_a_plain_instance_and_a_percent(device, value):
    wmi = FakeWmi()
    with pytest.raises(OSError):
        WindowsBrightness(FakeWindowsApi(), wmi).set_brightness(BrightnessLevel(device, value, 100))
    assert wmi.scripts == []
    with pytest.raises(ValueError):
        set_script("a'b", 5)


def test_parse_keeps_only_well_formed_lines():
    text = f"garbage\n{PANEL}\t101\n{PANEL}\tx\n\t5\nDISPLAY\\A B\t5\n{PANEL}\t35\n"
    assert parse_brightness_output(text) == [(PANEL, 35)]


def test_idle_is_the_time_since_the_last_input():
    api = FakeWindowsApi()
    api.idle_ms = 7 * 60 * 1000
    fixed = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return fixed

    control = WindowsBrightness(api, FakeWmi(), clock=Clock)
    assert control.read_idle() == IdleReading(True, fixed - timedelta(minutes=7))
    api.fail("GetLastInputInfo", ERROR_ACCESS_DENIED)
    with pytest.raises(OSError):
        control.read_idle()


def test_without_the_binding_idle_is_unsupported_and_doctor_says_what_it_would_use():
    platform = WindowsPlatform(None, binding_reason="not Windows", command_runner=FakeWmi())
    with pytest.raises(Unsupported):
        platform.brightness.read_idle()
    assert "WmiMonitorBrightness" in platform.describe_capabilities()["brightness"]


def test_the_runtime_dims_and_restores_over_the_windows_backend():
    from lidguard.platform.paths import resolve_paths
    from lidguard.runtime.app import Runtime
    from lidguard.settings.model import Settings

    api, wmi = FakeWindowsApi(), FakeWmi()
    platform = WindowsPlatform(api, binding_reason="fake", command_runner=wmi)
    settings = Settings.from_raw({"DimDisplayWhenIdleMinutes": 5, "ChangeLidAction": False})
    runtime = Runtime(platform=platform, paths=resolve_paths(), settings=settings, offload_platform_calls=False)

    async def body() -> None:
        platform.lid.read_lid_state()  # registers for lid notifications; then the lid reports open
        api.broadcast_lid(1)
        api.idle_ms = 10 * 60 * 1000
        async with anyio.create_task_group() as group:
            await runtime.run(group)
            reply = await runtime.handle_message({"v": 1, "Command": "start", "Provider": "Claude",
                                                  "SessionIdentifier": "w1"})
            assert reply["Succeeded"]
            await anyio.sleep(1)
            assert wmi.brightness == 20 and runtime.paths.brightness_backup_file.exists()
            api.idle_ms = 200  # a key press
            await anyio.sleep(1.5)
            assert wmi.brightness == 80 and not runtime.paths.brightness_backup_file.exists()
            group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(body, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
