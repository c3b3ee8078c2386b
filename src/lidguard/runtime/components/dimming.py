"""Reversible built-in display dimming (seed 004, issue 21): ``DimDisplayWhenIdleMinutes``.

While it is on and sessions are protected (wanted and not held back: no pause, no power-policy hold,
the runtime not stopping), a watch task reads the user's idle state (``platform.brightness.read_idle``)
and the lid; once the lid is open and the user has been idle for the set minutes it saves the current
brightness to the pending backup (``runtime/dimming.py``; an existing one is never overwritten) and
dims to ``DimDisplayBrightnessPercent``. Activity (idle ends), the lid closing, the last session
ending, a pause, the power policy holding protection back, the setting turning off and the runtime
exiting all put the saved brightness back (if the display still shows what lidguard set) and delete
the backup. The watch polls every ``DIMMED_POLL_SECONDS`` while dimmed (activity is seen within about a
second) and at most every ``WATCH_POLL_SECONDS`` otherwise.

Nothing here ever touches protection: a platform without a backlight (``Unsupported``) turns dimming off
for this runtime (logged once); a failed read or write is logged once per kind and retried at the next
poll; an unusable or unwritable backup leaves the display alone.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio

from ...platform.api import BrightnessLevel, IdleReading, LidState, Unsupported
from ..dimming import (
    BrightnessBackup,
    BrightnessBackupError,
    dim_target,
    idle_for,
    read_brightness_backup,
    restore_brightness,
    set_aside_brightness_backup,
    set_aside_brightness_backups,
    should_dim,
    write_brightness_backup,
)
from . import ComponentBase

if TYPE_CHECKING:
    from ...settings.model import Settings
    from ..app import Runtime

__all__ = ["COMMAND", "DIMMED_POLL_SECONDS", "WATCH_POLL_SECONDS", "DimmingComponent"]

COMMAND = "dimming"
DIMMED_POLL_SECONDS = 1.0
WATCH_POLL_SECONDS = 10.0


class DimmingComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._scope: anyio.CancelScope | None = None
        self._lock = anyio.Lock()  # one dim/restore at a time (an ending watch restores while a new one starts)
        self._dimmed: BrightnessBackup | None = None
        self._dimmed_at: datetime | None = None
        self._first_seen_idle: datetime | None = None
        self._unsupported: str | None = None
        self._noted: set[str] = set()  # failures logged once per kind

    # -- the component questions ---------------------------------------------------------------------
    def state_changed(self) -> None:
        self._sync()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        self._sync()

    def describe(self) -> dict[str, Any] | None:
        """What a reply may show: dimmed now (from what, to what, since when), else None."""
        if self._dimmed is None:
            return None
        original = self._dimmed.original
        from ..logs import format_utc

        return {"Device": original.device, "Brightness": original.value, "MaxBrightness": original.maximum,
                "DimmedTo": self._dimmed.dimmed_to, "SinceUtc": format_utc(self._dimmed_at)}

    def _wanted(self) -> bool:
        runtime = self._runtime
        return (runtime.running and not runtime.stopping and self._unsupported is None
                and runtime.settings.dim_display_when_idle_minutes is not None
                and runtime.state.protection_wanted and not runtime.protection.held_back())

    def _sync(self) -> None:
        wanted = self._wanted()
        if wanted and self._scope is None:
            self._first_seen_idle = None
            self._scope = self._runtime.spawn(self._watch)
        elif not wanted and self._scope is not None:
            self._scope.cancel()  # its cleanup restores the brightness
            self._scope = None

    # -- the watch ----------------------------------------------------------------------------------------
    def _note(self, kind: str, message: str) -> None:
        if kind not in self._noted:
            self._noted.add(kind)
            self._runtime.log(f"dimming-{kind}", COMMAND, message, succeeded=False)

    async def _read_idle(self) -> IdleReading | None:
        runtime = self._runtime
        try:
            return await runtime.call_platform(runtime.platform.brightness.read_idle)
        except Unsupported as error:
            self._unsupported = str(error)
            self._note("unsupported", f"Display dimming is off for this runtime: {error}")
        except Exception as error:  # OSError or a backend bug: not idle as far as we know
            if not isinstance(error, OSError):
                runtime.exception_log.record("dimming-idle-read-failed", error)
            self._note("idle-read-failed", f"Reading the idle state failed: {error}")
        return None

    async def _watch(self, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        try:
            while True:
                reading = await self._read_idle()
                if self._unsupported is not None:
                    return
                lid = (await runtime.machine.cached()).lid
                now = runtime.clock.now()
                if reading is not None and reading.idle:
                    self._first_seen_idle = self._first_seen_idle or now
                else:
                    self._first_seen_idle = None
                idle = idle_for(reading, self._first_seen_idle, now)
                minutes = runtime.settings.dim_display_when_idle_minutes
                dim = should_dim(idle_minutes=minutes, protecting=True, lid=lid, idle=idle)
                if dim and self._dimmed is None:
                    await self._dim()
                elif not dim and self._dimmed is not None:
                    await self._restore("activity" if lid is LidState.OPEN else "lid-not-open")
                await anyio.sleep(self._next_poll(idle, minutes))
        finally:
            with anyio.CancelScope(shield=True):
                await self._restore("dimming-ended")
            if self._scope is scope:
                self._scope = None

    def _next_poll(self, idle: timedelta | None, minutes: int | None) -> float:
        if self._dimmed is not None:
            return DIMMED_POLL_SECONDS
        if idle is not None and minutes is not None:
            remaining = (timedelta(minutes=minutes) - idle).total_seconds()
            return max(DIMMED_POLL_SECONDS, min(WATCH_POLL_SECONDS, remaining))
        return WATCH_POLL_SECONDS

    async def _dim(self) -> None:
        runtime = self._runtime
        path = runtime.paths.brightness_backup_file
        async with self._lock:
            if self._dimmed is not None:
                return
            try:
                level: BrightnessLevel = await runtime.call_platform(runtime.platform.brightness.read_brightness)
            except Unsupported as error:
                self._unsupported = str(error)
                self._note("unsupported", f"Display dimming is off for this runtime: {error}")
                return
            except Exception as error:
                self._note("brightness-read-failed", f"Reading the display brightness failed: {error}")
                return
            target = dim_target(level, runtime.settings.dim_display_brightness_percent)
            if target is None:
                return  # already at or below the dim level: nothing to do, nothing to restore
            found = self._backup_for(level, target)
            if found is None:
                return
            backup, adopted = found
            try:
                await runtime.call_platform(runtime.platform.brightness.set_brightness,
                                            BrightnessLevel(level.device, target, level.maximum))
            except Exception as error:
                if not adopted:
                    path.unlink(missing_ok=True)  # nothing changed: nothing to restore
                if isinstance(error, Unsupported):
                    self._unsupported = str(error)
                    self._note("unsupported", f"Display dimming is off for this runtime: {error}")
                else:
                    self._note("set-failed", f"Dimming the display failed: {error}")
                return
            self._dimmed, self._dimmed_at = backup, runtime.clock.now()
            runtime.status_changed()
            runtime.log("display-dimmed", COMMAND, f"Dimmed the display from {level.value}/{level.maximum} to "
                        f"{target}/{level.maximum} ({level.device}): the user is away.")

    def _backup_for(self, level: BrightnessLevel, target: int) -> tuple[BrightnessBackup, bool] | None:
        """Saves the brightness before the change, or adopts a predecessor's backup for the same device
        (its value is the user's; True); None when the display must be left alone."""
        runtime = self._runtime
        path = runtime.paths.brightness_backup_file
        try:
            existing = read_brightness_backup(path)
        except BrightnessBackupError as error:
            self._note("backup-set-aside", str(set_aside_brightness_backup(path, error)))
            return None
        unsettled = set_aside_brightness_backups(path)
        if unsettled:
            self._note("skipped", f"Left the display brightness alone: the brightness backup set aside as "
                                  f"{unsettled[0]} is not settled; check the brightness and delete that file.")
            return None
        adopted = existing is not None and existing.original.device == level.device
        backup = BrightnessBackup(existing.original if existing is not None and adopted else level, target)
        try:
            write_brightness_backup(path, backup)
        except OSError as error:
            self._note("skipped", f"Left the display brightness alone: the brightness backup {path} cannot be "
                                  f"written: {error.strerror or error}.")
            return None
        return backup, adopted

    async def _restore(self, reason: str) -> None:
        runtime = self._runtime
        async with self._lock:
            backup = self._dimmed
            if backup is None:
                return
            try:
                line = await runtime.call_platform(restore_brightness, runtime.platform, backup)
            except Exception as error:  # kept: the next poll (or the next lidguard command) tries again
                self._note("restore-failed", f"Restoring the display brightness failed ({reason}): {error}; "
                                             "the backup stays for the next try.")
                return
            self._dimmed = self._dimmed_at = None
            runtime.status_changed()
            runtime.paths.brightness_backup_file.unlink(missing_ok=True)
            runtime.log("display-restored", COMMAND, f"{line} ({reason})")
