"""The built-in panel's brightness through CoreGraphics + DisplayServices, and idle time from ioreg.

Brightness: the online display for which ``CGDisplayIsBuiltin`` is true, read and set with the private
DisplayServices calls (0.0-1.0; kept here as 0-1000) through the cffi binding (``_binding.py``). No
built-in display online (clamshell mode, a desktop Mac) or an inactive binding is ``Unsupported``.

Idle: ``ioreg -c IOHIDSystem -r -d 1 -k HIDIdleTime`` prints ``"HIDIdleTime" = <nanoseconds since the
last keyboard/mouse/trackpad input>`` (IOHIDSystem, ioreg(8)); the user counts as idle since then.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ..api import BrightnessLevel, IdleReading, Unsupported
from ._binding import BindingInactive, MacDisplayBinding, active_display_binding
from .commands import RealToolRefused, ToolMissing, run_tool

__all__ = ["IOREG_IDLE_ARGUMENTS", "MacBrightness", "SCALE", "parse_hid_idle_nanoseconds"]

IOREG_IDLE_ARGUMENTS = ["-c", "IOHIDSystem", "-r", "-d", "1", "-k", "HIDIdleTime"]
IOREG_TIMEOUT_SECONDS = 3.0
SCALE = 1000  # DisplayServices' 0.0-1.0 as an integer level
DEVICE_PREFIX = "display/"
_HID_IDLE = re.compile(r'"HIDIdleTime"\s*=\s*(\d{1,20})\b')
_MAX_IDLE_NANOSECONDS = 10 * 365 * 24 * 3600 * 10**9  # ten years: anything above is not an idle time


def parse_hid_idle_nanoseconds(text: str) -> int | None:
    match = _HID_IDLE.search(text)
    if match is None:
        return None
    value = int(match.group(1))
    return value if value <= _MAX_IDLE_NANOSECONDS else None


class MacBrightness:
    def __init__(self, binding: Callable[[], MacDisplayBinding] = active_display_binding, *,
                 clock: type[datetime] = datetime) -> None:
        self._binding = binding
        self._clock = clock

    def _display(self) -> tuple[MacDisplayBinding, int]:
        try:
            binding = self._binding()
        except BindingInactive as error:
            raise Unsupported("brightness", f"the DisplayServices binding is inactive: {error}") from error
        display = binding.builtin_display()
        if display is None:
            raise Unsupported("brightness", "no built-in display is online (clamshell mode or a desktop Mac)")
        return binding, display

    def read_brightness(self) -> BrightnessLevel:
        binding, display = self._display()
        value = binding.get_brightness(display)
        if not 0.0 <= value <= 1.0:  # NaN included
            raise OSError(f"DisplayServices answered a brightness of {value!r}")
        return BrightnessLevel(f"{DEVICE_PREFIX}{display}", round(value * SCALE), SCALE)

    def set_brightness(self, level: BrightnessLevel) -> None:
        binding, display = self._display()
        if level.device != f"{DEVICE_PREFIX}{display}":
            raise OSError(f"the display {level.device!r} is not the built-in one now")
        if level.maximum != SCALE or not 0 <= level.value <= SCALE:
            raise OSError(f"brightness {level.value}/{level.maximum} is not a DisplayServices level")
        binding.set_brightness(display, level.value / SCALE)

    def read_idle(self) -> IdleReading:
        try:
            result = run_tool("ioreg", IOREG_IDLE_ARGUMENTS, capability="brightness", timeout=IOREG_TIMEOUT_SECONDS)
        except (ToolMissing, RealToolRefused) as error:
            raise Unsupported("brightness", f"ioreg cannot run: {error}") from error
        except subprocess.TimeoutExpired as error:
            raise OSError(f"ioreg did not answer within {IOREG_TIMEOUT_SECONDS:g} s") from error
        nanoseconds = parse_hid_idle_nanoseconds(result.stdout) if result.ok else None
        if nanoseconds is None:
            raise OSError("ioreg printed no HIDIdleTime")
        return IdleReading(True, self._clock.now(UTC) - timedelta(microseconds=nanoseconds // 1000))

    def describe(self) -> str:
        try:
            level = self.read_brightness()
        except Unsupported as error:
            return f"unsupported: {error.reason}"
        except OSError as error:
            return f"unavailable: {error}"
        return (f"available (built-in display {level.device.removeprefix(DEVICE_PREFIX)} at "
                f"{level.percent()} % via DisplayServices; idle from ioreg HIDIdleTime)")
