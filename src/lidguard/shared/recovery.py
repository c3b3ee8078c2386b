"""REFERENCE 1.1 crash recovery before a session starts: restore a lid policy a crashed runtime left
(and the display brightness it dimmed, seed 004).

Shared by the CLI and the hook commands. "No runtime alive" means the single-instance lock in the data
folder is free, never "the socket did not answer": a caller whose environment differs from the
runtime's (no XDG_RUNTIME_DIR) must not restore, and so delete, the backup of a runtime that still
protects a session. The platform is loaded only when a backup exists and the lock is free.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..platform.api import Platform
    from ..platform.paths import LidGuardPaths

__all__ = ["RecoveryError", "RuntimeHoldsLock", "emergency_restore_without_runtime", "recover_if_no_runtime",
           "restore_failed"]


class RecoveryError(Exception):
    """A recovery step failed; the message is one readable line."""


def recover_if_no_runtime(paths: LidGuardPaths, platform: Callable[[], Platform],
                          warn: Callable[[str], None] | None = None) -> None:
    """``warn`` hears of an unusable backup that was set aside (nothing to restore from; never blocks)."""
    if not any(path.exists() for path in paths.pending_backup_files):
        return
    from ..platform.locking import InstanceLock

    lock = InstanceLock(paths.lock_file)
    try:
        acquired = lock.try_acquire()
    except OSError as error:
        raise RecoveryError(f"Cannot check the runtime lock {paths.lock_file}: {error}") from error
    if not acquired:
        return
    try:
        _restore_pending_backups(paths, platform, warn)
    finally:
        lock.release()


def _restore_pending_backups(paths: LidGuardPaths, platform: Callable[[], Platform],
                             warn: Callable[[str], None] | None) -> None:
    """Lock held: the lid policy first, then what the platform itself left (macOS hibernatemode)."""
    from ..runtime.protection import LidBackupSetAside, restore_pending_lid_backup

    try:
        machine = platform()
    except Exception as error:
        raise RecoveryError(f"Failed to restore the lid policy from the pending backup: {error}") from error
    try:
        restore_pending_lid_backup(machine, paths.lid_backup_file)
    except LidBackupSetAside as error:  # nothing to restore from: warn, never block the command
        if warn is not None:
            warn(str(error))
    except Exception as error:  # a backup or platform error must still be one readable line
        raise RecoveryError(f"Failed to restore the lid policy from the pending backup: {error}") from error
    try:
        machine.restore_pending_state(paths.data_dir)
    except Exception as error:
        raise RecoveryError(f"Failed to restore the power state from the pending backup: {error}") from error
    line = _restore_brightness(machine, paths)
    if line is not None and line.startswith(("Failed", "Brightness backup")) and warn is not None:
        warn(line)  # brightness never blocks the command: the backup stays for the next one


def _restore_brightness(machine: Platform, paths: LidGuardPaths) -> str | None:
    """The display brightness a killed runtime left dimmed (runtime/dimming.py); one line, None when
    there was no backup. Never raises: a failed restore keeps the backup, an unusable one is set aside."""
    from ..runtime.dimming import BrightnessBackupSetAside, restore_pending_brightness

    try:
        return restore_pending_brightness(machine, paths.brightness_backup_file)
    except BrightnessBackupSetAside as error:
        return f"Brightness backup unusable: {error}"
    except Exception as error:
        return f"Failed to restore the display brightness from the pending backup: {error}"


class RuntimeHoldsLock(RecoveryError):
    """A runtime holds the lock (it may be starting or stuck): the restore must go through it."""


def emergency_restore_without_runtime(paths: LidGuardPaths, platform: Callable[[], Platform]) -> list[str]:
    """``lidguard emergency-restore`` with no runtime alive (its lock free, taken for the whole step):
    clear the session journal (a next hook must not bring the sessions back), then restore every pending
    backup (the lid policy, then what the platform left: macOS hibernatemode). Never reads settings.
    Returns one line per step; a failing step is a line too, the other steps still run."""
    from ..platform.locking import InstanceLock

    lock = InstanceLock(paths.lock_file)
    try:
        acquired = lock.try_acquire()
    except OSError as error:
        raise RecoveryError(f"Cannot check the runtime lock {paths.lock_file}: {error}") from error
    if not acquired:
        raise RuntimeHoldsLock(f"A LidGuard runtime holds {paths.lock_file} but did not answer; "
                               "run `lidguard stop-runtime --force`, then emergency-restore again.")
    try:
        return [_clear_journal(paths), *_restore_all(paths, platform)]
    finally:
        lock.release()


def _clear_journal(paths: LidGuardPaths) -> str:
    from ..ipc.limits import SESSION_JOURNAL_FILE_NAME
    from ..runtime.journal_file import read_journal, write_snapshot

    path = paths.data_dir / SESSION_JOURNAL_FILE_NAME
    if not os.path.lexists(path):
        return "No session journal: no sessions to clear."
    count = len(read_journal(path).records)  # sets aside a journal it cannot use
    try:
        if os.path.lexists(path):
            write_snapshot(path, b"")
    except OSError as error:
        return f"Clearing the session journal {path} failed: {error}."
    return f"Cleared the session journal ({count} record(s))."


def _restore_all(paths: LidGuardPaths, platform: Callable[[], Platform]) -> list[str]:
    from ..runtime.protection import LidBackupSetAside, restore_pending_lid_backup

    lines: list[str] = []
    try:
        machine = platform()
    except Exception as error:
        return [f"Failed to load the platform to restore the pending backups: {error}"]
    try:
        restored = restore_pending_lid_backup(machine, paths.lid_backup_file)
        lines.append("Restored the lid policy from the pending backup." if restored
                     else "No pending lid-policy backup.")
    except LidBackupSetAside as error:
        lines.append(str(error))
    except Exception as error:
        lines.append(f"Failed to restore the lid policy from the pending backup: {error}")
    try:
        lines += machine.restore_pending_state(paths.data_dir)
    except Exception as error:
        lines.append(f"Failed to restore the power state from the pending backup: {error}")
    brightness = _restore_brightness(machine, paths)
    if brightness is not None:
        lines.append(brightness)
    return lines


def restore_failed(lines: list[str]) -> bool:
    return any(line.startswith(("Failed", "Clearing")) for line in lines)
