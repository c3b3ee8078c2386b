"""The built-in display's backlight (sysfs) set through logind, and the user's idle state from logind.

Reading: ``/sys/class/backlight/<name>/`` holds ``type`` (``firmware``, ``platform`` or ``raw``),
``brightness`` (the value last requested, 0..max) and ``max_brightness`` (Documentation/ABI/stable/
sysfs-class-backlight). With several devices the kernel's own advice is followed: ``firmware`` first,
then ``platform``, then ``raw`` (a raw device such as ``intel_backlight`` is often the only one).

Setting: ``org.freedesktop.login1.Session.SetBrightness("backlight", name, value)`` on the caller's
session (``Manager.GetSession("auto")``: the caller's session, else the user's display session); logind
writes sysfs for the session's owner, so no root and no udev rule are needed (systemd >= 243).

Idle: the session's ``IdleHint`` and ``IdleSinceHint`` (CLOCK_REALTIME microseconds of the last change;
0 = unknown), which the desktop sets; without a session, the Manager's (idle only when every session is).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..api import BrightnessLevel, IdleReading, Unsupported
from .sysfs import path_under_root, read_attribute_text, resolve_root

__all__ = ["BACKLIGHT_CLASS_DIRECTORY", "BacklightDevice", "LinuxBrightness", "choose_backlight",
           "idle_since_from_microseconds", "read_backlights"]

BACKLIGHT_CLASS_DIRECTORY = "/sys/class/backlight"
SUBSYSTEM = "backlight"
_TYPE_ORDER = ("firmware", "platform", "raw")
_MAX_VALUE = 0xFFFFFFFF  # SetBrightness takes a uint32
_MAX_SINCE_MICROSECONDS = 253402300799 * 1_000_000  # 9999-12-31: anything later is not a time


@dataclass(frozen=True, slots=True)
class BacklightDevice:
    name: str
    type: str
    brightness: int
    maximum: int


def _integer(text: str | None) -> int | None:
    if text is None or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= _MAX_VALUE else None


def read_backlights(root: Path | None = None) -> list[BacklightDevice]:
    """Every backlight device with a known type and readable values (unreadable entries are skipped)."""
    directory = path_under_root(resolve_root(root), BACKLIGHT_CLASS_DIRECTORY)
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    devices = []
    for entry in entries:
        kind = read_attribute_text(entry / "type")
        brightness = _integer(read_attribute_text(entry / "brightness"))
        maximum = _integer(read_attribute_text(entry / "max_brightness"))
        if kind not in _TYPE_ORDER or brightness is None or maximum is None or maximum <= 0:
            continue
        devices.append(BacklightDevice(entry.name, kind, min(brightness, maximum), maximum))
    return devices


def choose_backlight(devices: list[BacklightDevice]) -> BacklightDevice | None:
    """firmware, then platform, then raw; by name within a type."""
    ranked = sorted(devices, key=lambda device: (_TYPE_ORDER.index(device.type), device.name))
    return ranked[0] if ranked else None


def idle_since_from_microseconds(value: int) -> datetime | None:
    if value <= 0 or value > _MAX_SINCE_MICROSECONDS:
        return None
    return datetime.fromtimestamp(value / 1_000_000, UTC)


class LinuxBrightness:
    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    def _device(self) -> BacklightDevice:
        device = choose_backlight(read_backlights(self._root))
        if device is None:
            directory = path_under_root(resolve_root(self._root), BACKLIGHT_CLASS_DIRECTORY)
            raise Unsupported("brightness", f"no readable backlight device in {directory}")
        return device

    def read_brightness(self) -> BrightnessLevel:
        device = self._device()
        return BrightnessLevel(f"{SUBSYSTEM}/{device.name}", device.brightness, device.maximum)

    def set_brightness(self, level: BrightnessLevel) -> None:
        subsystem, _, name = level.device.partition("/")
        devices = {device.name: device for device in read_backlights(self._root)}
        device = devices.get(name) if subsystem == SUBSYSTEM else None
        if device is None:
            raise OSError(f"the backlight {level.device!r} is not there any more")
        if not 0 <= level.value <= device.maximum:
            raise OSError(f"brightness {level.value} is outside 0-{device.maximum} for {level.device}")
        from ._binding import LogindConnection, LogindError, LogindUnavailable

        try:
            with LogindConnection() as connection:
                session = connection.get_session("auto")
                connection.set_brightness(session, SUBSYSTEM, name, level.value)
        except LogindUnavailable as error:
            raise Unsupported("brightness", f"logind cannot be reached: {error}") from error
        except LogindError as error:
            raise OSError(f"logind refused SetBrightness: {error}") from error

    def read_idle(self) -> IdleReading:
        from ._binding import (
            LOGIND_MANAGER_INTERFACE,
            LOGIND_PATH,
            LOGIND_SESSION_INTERFACE,
            LogindConnection,
            LogindError,
            LogindUnavailable,
        )

        try:
            with LogindConnection() as connection:
                try:
                    path, interface = connection.get_session("auto"), LOGIND_SESSION_INTERFACE
                except LogindUnavailable:
                    raise
                except LogindError:  # no session of this user: the Manager's hint covers all of them
                    path, interface = LOGIND_PATH, LOGIND_MANAGER_INTERFACE
                idle = connection.read_property(path, interface, "IdleHint", "b")
                since = connection.read_property(path, interface, "IdleSinceHint", "t")
        except LogindUnavailable as error:
            raise Unsupported("brightness", f"logind cannot be reached: {error}") from error
        except LogindError as error:
            raise OSError(f"logind did not give the idle hint: {error}") from error
        return IdleReading(bool(idle), idle_since_from_microseconds(since))

    def describe(self) -> str:
        try:
            device = self._device()
        except Unsupported as error:
            return f"unsupported: {error.reason}"
        from ._binding import binding_status

        active, reason = binding_status()
        if not active:
            return f"unavailable: SetBrightness needs the logind binding ({reason})"
        percent = BrightnessLevel(device.name, device.brightness, device.maximum).percent()
        return (f"available (backlight {device.name}, {device.type}, {device.brightness}/{device.maximum} "
                f"= {percent} %; set through logind Session.SetBrightness)")
