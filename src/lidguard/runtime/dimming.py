"""Reversible built-in display dimming (seed 004): the pure decisions and the pending backup file.

While sessions are protected, the lid is open and the user has been idle for
``DimDisplayWhenIdleMinutes``, the runtime (``components/dimming.py``) dims the built-in display to
``DimDisplayBrightnessPercent`` of its maximum. Before the first change the brightness it found is
saved to ``pending-brightness-backup.json`` (atomic, 0600; ``Device``, ``Brightness``,
``MaxBrightness`` and the value it dims to, ``DimmedTo``), and the file is deleted once the brightness
is back. A runtime killed while the display is dimmed leaves the file: the next lidguard command's
recovery step (``shared/recovery.py``, only while no runtime holds the lock) and ``emergency-restore``
put the brightness back from it.

Only brightness lidguard owns is restored: when the display no longer shows ``DimmedTo`` (the user or
the desktop changed it since) the backup is dropped and the brightness left alone. A backup that cannot
be used (not JSON, the wrong shape, numbers out of range, a FIFO, a directory, a symlink) is set aside
as ``pending-brightness-backup.unusable-<UTC>.json`` and its values are never guessed; dimming then
stays off until that file is gone (the user checked the brightness and deleted it). Protection never
waits for any of this.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..fileio import UnusableFileError, read_json_object, write_atomic
from ..platform.api import BrightnessLevel, IdleReading, LidState, Platform, Unsupported
from ..shared.text import has_lone_surrogate

__all__ = [
    "BrightnessBackup",
    "BrightnessBackupError",
    "BrightnessBackupSetAside",
    "dim_target",
    "idle_for",
    "read_brightness_backup",
    "restore_pending_brightness",
    "set_aside_brightness_backups",
    "should_dim",
    "write_brightness_backup",
]

BACKUP_LIMIT_BYTES = 16 * 1024  # a backup is about 150 bytes
DEVICE_NAME_LIMIT = 256
_UINT32_MAX = 0xFFFFFFFF
_SET_ASIDE_MARK = ".unusable-"


# -- pure decisions ------------------------------------------------------------------------------------

def idle_for(reading: IdleReading | None, first_seen_idle: datetime | None, now: datetime) -> timedelta | None:
    """How long the user has been idle (None: not idle, or unknown). Without the OS's own start of the
    idle period, from when this runtime first saw it idle; a start in the future counts from now."""
    if reading is None or not reading.idle:
        return None
    since = reading.since or first_seen_idle or now
    return max(now - since, timedelta(0))


def should_dim(*, idle_minutes: int | None, protecting: bool, lid: LidState, idle: timedelta | None) -> bool:
    """Dim only when it is on, sessions are protected, the lid is known open and the user is away long enough."""
    if idle_minutes is None or not protecting or lid is not LidState.OPEN or idle is None:
        return False
    return idle >= timedelta(minutes=idle_minutes)


def dim_target(level: BrightnessLevel, percent: int) -> int | None:
    """The value to dim to (at least 1: some panels switch off at 0), None when the display is already at
    or below it (dimming never brightens)."""
    if level.maximum <= 0:
        return None
    target = max(1, min(level.maximum, round(level.maximum * percent / 100)))
    return target if target < level.value else None


# -- the pending backup --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class BrightnessBackup:
    original: BrightnessLevel
    dimmed_to: int


class BrightnessBackupError(Exception):
    """The pending brightness backup exists but cannot be used."""


class BrightnessBackupSetAside(BrightnessBackupError):
    """An unusable backup was renamed aside (``aside``; None when even that failed)."""

    def __init__(self, message: str, aside: Path | None) -> None:
        super().__init__(message)
        self.aside = aside


def _uint32(value: object) -> int | None:
    return value if type(value) is int and 0 <= value <= _UINT32_MAX else None


def read_brightness_backup(path: Path) -> BrightnessBackup | None:
    """The saved brightness, None when there is no backup, BrightnessBackupError when it is unusable."""
    try:
        data = read_json_object(path, limit=BACKUP_LIMIT_BYTES, follow_symlinks=False)
    except UnusableFileError as error:
        raise BrightnessBackupError(f"The brightness backup {path} cannot be used: {error.reason}.") from error
    except OSError as error:
        raise BrightnessBackupError(
            f"The brightness backup {path} cannot be read: {error.strerror or error}.") from error
    if data is None:
        return None
    device = data.get("Device")
    if (not isinstance(device, str) or not device or len(device) > DEVICE_NAME_LIMIT
            or has_lone_surrogate(device) or not device.isprintable()):
        raise BrightnessBackupError(f"The brightness backup {path} is not a lidguard brightness backup.")
    value, maximum, dimmed_to = (_uint32(data.get(key)) for key in ("Brightness", "MaxBrightness", "DimmedTo"))
    if value is None or maximum is None or dimmed_to is None or maximum == 0 or value > maximum \
            or dimmed_to > maximum:
        raise BrightnessBackupError(f"The brightness backup {path} holds an unusable brightness.")
    return BrightnessBackup(BrightnessLevel(device, value, maximum), dimmed_to)


def write_brightness_backup(path: Path, backup: BrightnessBackup) -> None:
    """Atomic, 0600, not fsynced: it has to outlive the runtime process, not a power loss (a reboot
    resets the backlight anyway)."""
    data = {
        "SavedAt": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "Device": backup.original.device,
        "Brightness": backup.original.value,
        "MaxBrightness": backup.original.maximum,
        "DimmedTo": backup.dimmed_to,
    }
    write_atomic(path, json.dumps(data, indent=2) + "\n", durable=False)


def set_aside_brightness_backup(path: Path, error: BrightnessBackupError) -> BrightnessBackupSetAside:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.stem}{_SET_ASIDE_MARK}{stamp}{path.suffix}")
    aside: Path | None = target
    try:
        os.rename(path, target)
    except OSError:
        aside = None
    where = f"it was set aside as {aside}" if aside else "it could not even be renamed aside"
    return BrightnessBackupSetAside(f"{error} Its values were not used; {where}. Check the display "
                                    "brightness, then delete that file.", aside)


def set_aside_brightness_backups(path: Path) -> list[Path]:
    """Backups set aside so far: each waits for the user to check the brightness and delete it."""
    try:
        return sorted(path.parent.glob(f"{path.stem}{_SET_ASIDE_MARK}*{path.suffix}"))
    except OSError:
        return []


def restore_brightness(platform: Platform, backup: BrightnessBackup) -> str:
    """Puts the saved brightness back when the display still shows what lidguard set; one line saying
    what happened. Raises ``OSError``/``Unsupported`` when the platform refuses (the caller keeps the
    backup)."""
    original = backup.original
    try:
        current: BrightnessLevel | None = platform.brightness.read_brightness()
    except (OSError, Unsupported):
        current = None  # cannot tell: put it back (the set call says whether the device is still there)
    if current is not None and (current.device != original.device or current.value != backup.dimmed_to):
        return (f"Left the display brightness alone: it changed since lidguard dimmed it "
                f"({current.value}/{current.maximum} now, lidguard set {backup.dimmed_to}).")
    platform.brightness.set_brightness(original)
    return f"Restored the display brightness to {original.value}/{original.maximum} ({original.device})."


def restore_pending_brightness(platform: Platform, path: Path) -> str | None:
    """Crash recovery: restores from a pending backup and deletes it; None when there is none.

    An unusable backup is set aside and raises BrightnessBackupSetAside (nothing restored)."""
    try:
        backup = read_brightness_backup(path)
    except BrightnessBackupError as error:
        raise set_aside_brightness_backup(path, error) from error
    if backup is None:
        return None
    line = restore_brightness(platform, backup)
    path.unlink(missing_ok=True)
    return line
