"""macOS display dimming at its seams (issue 21): the built-in panel through the CoreGraphics +
DisplayServices binding over fake frameworks (the cdef parsed by a real cffi.FFI), the idle time through
the ioreg stand-in, and the runtime dimming and restoring over that backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import cffi
import pytest
import trio.testing

from lidguard.platform.api import BrightnessLevel, IdleReading, Unsupported
from lidguard.platform.macos import MacOSPlatform
from lidguard.platform.macos._binding import BindingInactive, MacDisplayBinding
from lidguard.platform.macos.brightness import MacBrightness, parse_hid_idle_nanoseconds

CDEF = (Path(__file__).resolve().parents[2] / "native" / "macos_cdef.h").read_text()
EXTERNAL, BUILTIN = 0x2, 0x1


class FakeDisplayFrameworks:
    """CGGetOnlineDisplayList / CGDisplayIsBuiltin / DisplayServices{Get,Set}Brightness over plain state."""

    def __init__(self, ffi: cffi.FFI, online: list[int], brightness: float = 0.75) -> None:
        self.ffi = ffi
        self.online = online
        self.brightness = brightness
        self.calls: list[tuple] = []
        self.error = 0

    def CGGetOnlineDisplayList(self, maximum, displays, count):  # noqa: N802 - the C names
        for index, display in enumerate(self.online[:maximum]):
            displays[index] = display
        count[0] = min(len(self.online), maximum)
        return 0

    def CGDisplayIsBuiltin(self, display):  # noqa: N802
        return 1 if display == BUILTIN else 0

    def DisplayServicesGetBrightness(self, display, value):  # noqa: N802
        self.calls.append(("get", display))
        value[0] = self.brightness
        return self.error

    def DisplayServicesSetBrightness(self, display, value):  # noqa: N802
        self.calls.append(("set", display, round(value, 6)))
        if self.error == 0:
            self.brightness = value
        return self.error


@pytest.fixture
def frameworks() -> FakeDisplayFrameworks:
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return FakeDisplayFrameworks(ffi, [EXTERNAL, BUILTIN])


def _control(frameworks: FakeDisplayFrameworks) -> MacBrightness:
    binding = MacDisplayBinding(frameworks.ffi, frameworks, frameworks)
    return MacBrightness(lambda: binding)


def test_reads_and_sets_the_builtin_panel_not_the_external_one(frameworks):
    control = _control(frameworks)
    assert control.read_brightness() == BrightnessLevel("display/1", 750, 1000)
    control.set_brightness(BrightnessLevel("display/1", 200, 1000))
    assert frameworks.calls[-1] == ("set", BUILTIN, 0.2)
    assert control.read_brightness().value == 200
    assert control.describe() == ("available (built-in display 1 at 20 % via DisplayServices; idle from ioreg "
                                  "HIDIdleTime)")


def test_clamshell_mode_or_an_inactive_binding_is_unsupported(frameworks):
    frameworks.online = [EXTERNAL]
    with pytest.raises(Unsupported, match="no built-in display is online"):
        _control(frameworks).read_brightness()

    def inactive() -> MacDisplayBinding:
        raise BindingInactive("disabled by LIDGUARD_MACOS_BINDING=off")

    with pytest.raises(Unsupported, match="binding is inactive"):
        MacBrightness(inactive).read_brightness()


@pytest.mark.parametrize("level", [BrightnessLevel("display/2", 100, 1000), BrightnessLevel("display/1", 1001, 1000),
                                   BrightnessLevel("display/1", 5, 100), BrightnessLevel("backlight/x", 5, 1000)])
def test_set_refuses_another_display_or_a_level_out_of_range(frameworks, level):
    with pytest.raises(OSError):
        _control(frameworks).set_brightness(level)
    assert not any(call[0] == "set" for call in frameworks.calls)


@pytest.mark.parametrize("value", [float("nan"), -0.1, 1.5])
def test_a_nonsense_brightness_is_an_oserror(frameworks, value):
    frameworks.brightness = value
    with pytest.raises(OSError):
        _control(frameworks).read_brightness()


def test_displayservices_errors_are_oserrors(frameworks):
    frameworks.error = 1001
    control = _control(frameworks)
    with pytest.raises(OSError, match="DisplayServicesGetBrightness"):
        control.read_brightness()
    with pytest.raises(OSError, match="DisplayServicesSetBrightness"):
        control.set_brightness(BrightnessLevel("display/1", 100, 1000))


@pytest.mark.parametrize("text, expected", [
    ('    "HIDIdleTime" = 1500000000\n', 1_500_000_000),
    ('"HIDIdleTime"=0', 0),
    ("nothing here", None),
    ('"HIDIdleTime" = 999999999999999999999', None),
    ('"HIDIdleTime" = -5', None),
])
def test_parse_hid_idle(text, expected):
    assert parse_hid_idle_nanoseconds(text) == expected


def test_idle_from_the_ioreg_standin(standins, frameworks):
    fixed = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return fixed

    binding = MacDisplayBinding(frameworks.ffi, frameworks, frameworks)
    control = MacBrightness(lambda: binding, clock=Clock)
    standins.set_machine(hid_idle_ns=420_000_000_000)
    assert control.read_idle() == IdleReading(True, fixed - timedelta(minutes=7))
    assert ["ioreg", "-c", "IOHIDSystem", "-r", "-d", "1", "-k", "HIDIdleTime"] in standins.commands("ioreg")
    standins.set_machine(hid_idle_ns=None)
    with pytest.raises(OSError, match="no HIDIdleTime"):
        control.read_idle()


def test_the_runtime_dims_and_restores_over_the_macos_backend(standins, frameworks):
    from lidguard.platform.paths import resolve_paths
    from lidguard.runtime.app import Runtime
    from lidguard.settings.model import Settings

    platform = MacOSPlatform()
    binding = MacDisplayBinding(frameworks.ffi, frameworks, frameworks)
    platform.brightness = MacBrightness(lambda: binding)
    settings = Settings.from_raw({"DimDisplayWhenIdleMinutes": 5, "ChangeLidAction": False,
                                        "PowerRequest": {"PreventSystemSleep": True}})
    runtime = Runtime(platform=platform, paths=resolve_paths(), settings=settings, offload_platform_calls=False)
    standins.set_machine(hid_idle_ns=600 * 10**9)

    async def body() -> None:
        async with anyio.create_task_group() as group:
            await runtime.run(group)
            reply = await runtime.handle_message({"v": 1, "Command": "start", "Provider": "Claude",
                                                  "SessionIdentifier": "m1"})
            assert reply["Succeeded"]
            await anyio.sleep(1)
            assert round(frameworks.brightness, 3) == 0.2 and runtime.paths.brightness_backup_file.exists()
            standins.set_machine(hid_idle_ns=100_000_000)  # the trackpad moved
            await anyio.sleep(1.5)
            assert round(frameworks.brightness, 3) == 0.75 and not runtime.paths.brightness_backup_file.exists()
            group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(body, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
