"""REFERENCE 1.1 crash recovery before a session starts: restore a lid policy a crashed runtime left.

Shared by the CLI and the hook commands. "No runtime alive" means the single-instance lock in the data
folder is free, never "the socket did not answer": a caller whose environment differs from the
runtime's (no XDG_RUNTIME_DIR) must not restore, and so delete, the backup of a runtime that still
protects a session. The platform is loaded only when a backup exists and the lock is free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..platform.api import Platform
    from ..platform.paths import LidGuardPaths

__all__ = ["RecoveryError", "recover_if_no_runtime"]


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
