"""The runtime's single-instance lock (an OS file lock held for the runtime's whole life) and the
exclusive lock every config read-modify-write takes (``config_lock``, REFERENCE row 42).

The lock file lives in the data folder (``LidGuardPaths.lock_file``, see :mod:`.paths`), so every
caller of one user finds the same lock whatever its environment. ``flock`` (or ``msvcrt.locking``)
is released by the kernel when the holder dies, so a crashed runtime never leaves a stale lock.
OS modules are imported lazily, inside the calls, so this module imports on every OS.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["CONFIG_LOCK_TIMEOUT_SECONDS", "ConfigLockError", "InstanceLock", "config_lock", "config_lock_path",
           "held_by_another_process"]

CONFIG_LOCK_TIMEOUT_SECONDS = 15.0
_CONFIG_LOCK_POLL_SECONDS = 0.02


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


class ConfigLockError(OSError):
    """The config lock could not be taken (held too long by another process, or unusable)."""


def config_lock_path(path: Path) -> Path:
    """``<folder>/.<name>.lidguard-lock`` beside the config file: the file itself is replaced by atomic
    writes, so its inode cannot carry the lock; the sidecar is never removed (removing would race)."""
    return path.with_name(f".{path.name}.lidguard-lock")


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    except OSError as error:
        if sys.platform == "win32" and error.errno in (13, 36):  # EACCES/EDEADLOCK: held by another process
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    try:
        if sys.platform == "win32":
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def config_lock(*paths: Path, timeout: float = CONFIG_LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Exclusive lock around a read-modify-write of each of ``paths`` (taken in sorted order, so two
    callers locking the same files never deadlock). Waits up to ``timeout`` seconds in all, then raises
    :class:`ConfigLockError` with one readable line; the kernel frees the lock when a holder dies."""
    deadline = time.monotonic() + max(0.0, timeout)
    held: list[int] = []
    try:
        for path in sorted({Path(os.path.abspath(item)) for item in paths}):
            held.append(_acquire(path, deadline))
        yield
    finally:
        for fd in reversed(held):
            _unlock(fd)


def _acquire(path: Path, deadline: float) -> int:
    lock = config_lock_path(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # O_NOFOLLOW refuses a planted symlink; O_NONBLOCK keeps a FIFO from hanging the open.
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NONBLOCK", 0))
        fd = os.open(lock, flags, 0o600)
    except OSError as error:
        raise ConfigLockError(f"Cannot lock {path} (lock file {lock}): {error.strerror or error}") from error
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigLockError(f"Cannot lock {path}: the lock file {lock} is not a regular file.")
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise ConfigLockError(f"Another process is changing {path}; try again.")
            time.sleep(_CONFIG_LOCK_POLL_SECONDS)
    except ConfigLockError:
        os.close(fd)
        raise
    except OSError as error:
        os.close(fd)
        raise ConfigLockError(f"Cannot lock {path} (lock file {lock}): {error.strerror or error}") from error
    return fd
