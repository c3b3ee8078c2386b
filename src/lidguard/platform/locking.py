"""The runtime's single-instance lock: an OS file lock held for the runtime's whole life.

The lock file lives in the data folder (``LidGuardPaths.lock_file``, see :mod:`.paths`), so every
caller of one user finds the same lock whatever its environment. ``flock`` (or ``msvcrt.locking``)
is released by the kernel when the holder dies, so a crashed runtime never leaves a stale lock.
OS modules are imported lazily, inside the calls, so this module imports on every OS.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["InstanceLock", "held_by_another_process"]


class InstanceLock:
    """Non-blocking exclusive lock on a file; released by ``release`` or by the process dying."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # O_NOFOLLOW: a symlink planted at the lock's name is refused (ELOOP), never followed.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.set_inheritable(fd, False)
        self._fd = fd
        return True

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def held_by_another_process(path: Path) -> bool:
    """A cheap look (stdlib only): is a runtime holding the lock now? An unreadable lock counts as
    free, so the caller goes on to the full step that reports the problem as one line."""
    lock = InstanceLock(path)
    try:
        if not lock.try_acquire():
            return True
        lock.release()
    except OSError:
        pass
    return False
