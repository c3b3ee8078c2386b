"""What every CLI command shares: paths, the platform, the runtime client, the recovery step."""

from __future__ import annotations

import sys
from functools import cached_property
from typing import Any

from ..ipc.client import send_request
from ..platform import load_platform
from ..platform.api import Platform
from ..platform.locking import InstanceLock
from ..platform.paths import LidGuardPaths, RuntimeDirError, resolve_paths
from .output import CliError, escape_control

__all__ = ["CliContext"]


class CliContext:
    def __init__(self) -> None:
        try:
            self.paths: LidGuardPaths = resolve_paths()
        except RuntimeDirError as error:
            raise CliError(str(error)) from error

    @cached_property
    def platform(self) -> Platform:
        try:
            return load_platform()
        except ValueError as error:
            raise CliError(str(error)) from error

    def request(self, command: str, *, auto_start: bool = False, **fields: Any) -> dict[str, Any]:
        body = {"Command": command, **{key: value for key, value in fields.items() if value is not None}}
        return send_request(self.paths.socket_file, body, auto_start=auto_start)

    def recover_if_no_runtime(self) -> None:
        """REFERENCE 1.1: with no runtime alive, restore a lid policy left behind by a crash.

        "No runtime alive" means the single-instance lock in the data folder is free, never "the socket
        did not answer": a caller whose environment differs from the runtime's (no XDG_RUNTIME_DIR) must
        not restore, and so delete, the backup of a runtime that still protects a session.
        """
        if not any(path.exists() for path in self.paths.pending_backup_files):
            return
        lock = InstanceLock(self.paths.lock_file)
        try:
            acquired = lock.try_acquire()
        except OSError as error:
            raise CliError(f"Cannot check the runtime lock {self.paths.lock_file}: {error}") from error
        if not acquired:
            return
        try:
            self._restore_pending_backups()
        finally:
            lock.release()

    def _restore_pending_backups(self) -> None:
        """Lock held: the lid policy first, then what the platform itself left (macOS hibernatemode)."""
        from ..runtime.protection import LidBackupSetAside, restore_pending_lid_backup

        try:
            restore_pending_lid_backup(self.platform, self.paths.lid_backup_file)
        except LidBackupSetAside as error:  # nothing to restore from: warn, never block the command
            sys.stderr.write(f"lidguard: warning: {escape_control(str(error))}\n")
        except Exception as error:  # a backup or platform error must still be one readable line
            raise CliError(f"Failed to restore the lid policy from the pending backup: {error}") from error
        try:
            self.platform.restore_pending_state(self.paths.data_dir)
        except Exception as error:
            raise CliError(f"Failed to restore the power state from the pending backup: {error}") from error
