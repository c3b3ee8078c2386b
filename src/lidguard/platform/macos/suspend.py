"""Immediate sleep / hibernate on macOS: ``pmset sleepnow`` and the temporary hibernatemode 25 flow.

Sleep is ``pmset sleepnow`` (no root needed, 30 s timeout). Hibernate (REFERENCE 8.3, seed 001):
restore a pending hibernatemode backup left by an earlier hibernate -> read ``hibernatemode``
(only 0, 3 and 25 are supported: the sudoers rule allows exactly those) -> if already 25 just sleep ->
save ``pending-macos-power-state-backup.json`` -> ``sudo -n pmset -a hibernatemode 25`` -> ``pmset
sleepnow``. After a successful request the backup stays for the next CLI recovery (the machine is
asleep when ``sleepnow`` returns, and restoring at once would race the hibernation); when
``sleepnow`` fails the original mode is written back at once.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from ...fileio import write_atomic
from ..api import SuspendBlocker, SuspendBlockerChanges, SuspendMode, SuspendResult, Unsupported
from .commands import describe_tool, run_privileged, run_tool
from .power import parse_pmset_setting, read_pmset_settings

__all__ = [
    "POWER_STATE_BACKUP_NAME",
    "SUPPORTED_HIBERNATE_MODES",
    "MacSuspender",
    "default_power_state_backup_path",
    "read_power_state_backup",
    "restore_pending_power_state",
]

POWER_STATE_BACKUP_NAME = "pending-macos-power-state-backup.json"
SUPPORTED_HIBERNATE_MODES = (0, 3, 25)
HIBERNATE_MODE = 25
SLEEPNOW_TIMEOUT_SECONDS = 30.0
PMSET_TIMEOUT_SECONDS = 10.0


def default_power_state_backup_path() -> Path:
    from ..paths import resolve_paths

    return resolve_paths().data_dir / POWER_STATE_BACKUP_NAME


def read_power_state_backup(path: Path) -> int | None:
    """The backed-up hibernatemode, None when there is no backup; OSError when it is unusable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as error:
        raise OSError(f"The macOS power-state backup {path} cannot be read: {error}") from error
    mode = data.get("HibernateMode") if isinstance(data, dict) and data.get("IncludesHibernateMode") else None
    if not isinstance(mode, int) or isinstance(mode, bool) or mode not in SUPPORTED_HIBERNATE_MODES:
        raise OSError(f"The macOS power-state backup {path} holds no supported HibernateMode.")
    return mode


def _write_power_state_backup(path: Path, mode: int) -> None:
    saved_at = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
    data = {"SavedAt": saved_at, "IncludesHibernateMode": True, "HibernateMode": mode}
    write_atomic(path, json.dumps(data, indent=2) + "\n")


def _write_hibernate_mode(mode: int) -> str | None:
    """None on success, else the failure text (with the sudoers hint when sudo refused)."""
    result = run_privileged("pmset", ["-a", "hibernatemode", str(mode)], capability="suspend",
                            timeout=PMSET_TIMEOUT_SECONDS)
    return None if result.ok else result.failure_text()


def restore_pending_power_state(path: Path) -> bool:
    """Writes the backed-up hibernatemode back and deletes the backup; True if there was one.
    Raises OSError when the restore fails (the backup is kept for the next attempt)."""
    mode = read_power_state_backup(path)
    if mode is None:
        return False
    failure = _write_hibernate_mode(mode)
    if failure is not None:
        raise OSError(f"Failed to restore macOS hibernatemode {mode}: {failure}")
    path.unlink(missing_ok=True)
    return True


class MacSuspender:
    def __init__(self, backup_path: Path | None = None) -> None:
        self._backup_path = backup_path

    @property
    def backup_path(self) -> Path:
        return self._backup_path or default_power_state_backup_path()

    def list_blockers(self) -> list[SuspendBlocker]:
        """PreventSystemSleep / PreventUserIdleSystemSleep holders in ``pmset -g assertions``."""
        from .assertions import read_sleep_assertions

        return read_sleep_assertions()

    def blocker_changes(self) -> SuspendBlockerChanges:
        raise Unsupported("suspend_blocker_changes", "pmset assertions are polled")

    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        """``pmset sleepnow`` is a forced sleep: other programs' assertions are named in status, never
        asked about here (``ignore_other_blockers`` changes nothing on macOS)."""
        if mode is SuspendMode.HIBERNATE:
            return self._hibernate()
        return self._sleepnow(SuspendMode.SLEEP)

    def describe(self) -> str:
        tool = describe_tool("pmset")
        if not tool.startswith("available"):
            return f"unavailable: pmset {tool}"
        return ("available (command-line: pmset sleepnow; Hibernate = sudo -n pmset -a hibernatemode 25, "
                "then pmset sleepnow)")

    def close(self) -> None:
        """Nothing is held between requests."""

    def _sleepnow(self, mode: SuspendMode, note: str = "") -> SuspendResult:
        try:
            result = run_tool("pmset", ["sleepnow"], capability="suspend", timeout=SLEEPNOW_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            return SuspendResult(False, f"pmset sleepnow timed out after {SLEEPNOW_TIMEOUT_SECONDS:.0f} s.")
        if not result.ok:
            return SuspendResult(False, result.failure_text())
        return SuspendResult(True, f"Requested {mode} with pmset sleepnow.{note}")

    def _hibernate(self) -> SuspendResult:
        path = self.backup_path
        try:
            restore_pending_power_state(path)
            current = parse_pmset_setting(read_pmset_settings("suspend"), "hibernatemode")
        except OSError as error:
            return SuspendResult(False, f"Hibernate was not requested: {error}")
        if current == HIBERNATE_MODE:
            return self._sleepnow(SuspendMode.HIBERNATE, " hibernatemode was already 25.")
        if current not in SUPPORTED_HIBERNATE_MODES:
            return SuspendResult(False, f"Hibernate was not requested: pmset reports hibernatemode {current}; "
                                        "only 0, 3 and 25 can be changed and restored.")
        _write_power_state_backup(path, current)
        failure = _write_hibernate_mode(HIBERNATE_MODE)
        if failure is not None:
            path.unlink(missing_ok=True)
            return SuspendResult(False, f"Hibernate was not requested: {failure}")
        result = self._sleepnow(SuspendMode.HIBERNATE)
        if result.succeeded:
            return SuspendResult(True, f"{result.message} macOS hibernatemode restore was deferred through "
                                       f"pending backup: {path}.")
        try:
            restore_pending_power_state(path)
        except OSError as error:
            return SuspendResult(False, f"{result.message} {error}")
        return SuspendResult(False, f"{result.message} hibernatemode {current} was restored.")
