"""The runtime's single-instance lock (an OS file lock held for the runtime's whole life) and the
exclusive lock every config read-modify-write takes (``config_lock``, REFERENCE row 42).

The lock file lives in the data folder (``LidGuardPaths.lock_file``, see :mod:`.paths`), so every
caller of one user finds the same lock whatever its environment. ``flock`` (or ``msvcrt.locking``)
is released by the kernel when the holder dies, so a crashed runtime never leaves a stale lock.
OS modules are imported lazily, inside the calls, so this module imports on every OS.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False  # the hook path (held_by_another_process) imports neither typing nor pathlib (~5 ms)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CONFIG_LOCK_TIMEOUT_SECONDS", "ConfigLockError", "InstanceLock", "LaunchGate", "config_lock",
           "config_lock_path", "describe_lock_error", "held_by_another_process", "lock_holder_record",
           "stop_lock_holder"]

# Windows file locks are mandatory byte ranges: a locked byte cannot be read by anyone else. Every lock
# therefore sits on one byte far past the records the files carry ("<pid> ready", a launch failure), so
# other processes can read the record while the lock is held. Locking past the end of a file is allowed
# there and does not grow the file; records are written at offset 0 explicitly, never at the file
# position the lock left behind.
WINDOWS_LOCK_OFFSET = 1 << 30
ACQUIRE_RETRY_SECONDS = 0.25  # clients probe the lock with a shared lock for a few microseconds
GATE_POLL_SECONDS = 0.05
CONFIG_LOCK_TIMEOUT_SECONDS = 15.0
_CONFIG_LOCK_POLL_SECONDS = 0.02


class InstanceLock:
    """Non-blocking exclusive lock on a file; released by ``release`` or by the process dying."""

    def __init__(self, path: str | Path, *, record_pid: bool = False) -> None:
        self.path = path
        self._fd: int | None = None
        self._record_pid = record_pid  # the runtime writes its pid, for ``stop_lock_holder``

    def try_acquire(self, retry_seconds: float = 0.0) -> bool:
        """False when another process holds the lock. ``retry_seconds``: keep trying that long (a
        client's shared-lock probe holds it for microseconds; only the runtime itself retries)."""
        import time

        deadline = time.monotonic() + retry_seconds
        while not self._try_once():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _try_once(self) -> bool:
        os.makedirs(os.path.dirname(os.fspath(self.path)) or ".", 0o700, exist_ok=True)
        # O_NOFOLLOW: a symlink planted at the lock's name is refused (ELOOP), never followed.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o600)
        except PermissionError:
            if not _restore_own_mode(self.path):
                raise
            fd = os.open(self.path, flags, 0o600)
        try:
            if sys.platform == "win32":
                _windows_locking(fd, "LK_NBLCK")
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.set_inheritable(fd, False)
        self._fd = fd
        if self._record_pid:
            try:
                os.ftruncate(fd, 0)
                _write_at_start(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass
        return True

    def mark_ready(self) -> None:
        """The runtime answers now: clients that find the lock held but no socket stop waiting sooner."""
        if self._fd is not None and self._record_pid:
            try:
                _write_at_start(self._fd, f"{os.getpid()} ready\n".encode())
            except OSError:
                pass

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if sys.platform == "win32":
                _windows_locking(fd, "LK_UNLCK")  # closing frees it too, but not at once on Windows
            else:
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:
            pass
        os.close(fd)


def _restore_own_mode(path: str | Path) -> bool:
    """A lock file of this user's own that this user may not open (mode 000: a backup tool, a stray
    chmod) goes back to 0600 - root would open it anyway, and the lock is only ever ours, in our 0700
    folder. True when the mode was restored; anything else (another owner, not a regular file) is left
    for the caller's error. A holder keeps its lock: the mode changes, the file stays the same."""
    geteuid = getattr(os, "geteuid", None)
    try:
        info = os.lstat(path)
        if geteuid is None or not stat.S_ISREG(info.st_mode) or info.st_uid != geteuid():
            return False
        os.chmod(path, 0o600)
    except OSError:
        return False
    return True


def _windows_locking(fd: int, mode: str) -> None:
    """Locks or unlocks the one byte at ``WINDOWS_LOCK_OFFSET`` (``msvcrt.locking`` works from the
    file position)."""
    os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
    if sys.platform == "win32":  # always, callers check; this line tells the type checker
        import msvcrt

        msvcrt.locking(fd, getattr(msvcrt, mode), 1)


def _write_at_start(fd: int, data: bytes) -> None:
    """Writes ``data`` at offset 0 whatever the file position (Windows has no ``os.pwrite``)."""
    if hasattr(os, "pwrite"):
        os.pwrite(fd, data, 0)
        return
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)


def _read_at_start(fd: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, size)


def describe_lock_error(path: Path, error: OSError) -> str:
    """One line saying why the lock file cannot be used (a symlink, a folder, no permission...)."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        return (f"The runtime lock {path} is a symbolic link; LidGuard never follows one. "
                "Remove it and try again.")
    if stat.S_ISDIR(mode):
        return f"The runtime lock {path} is a folder, not a file. Remove it and try again."
    if mode and not stat.S_ISREG(mode):
        return f"The runtime lock {path} is not a regular file. Remove it and try again."
    return f"Cannot open the runtime lock {path}: {error.strerror or error}."


def held_by_another_process(path: str | Path) -> bool:
    """A cheap look (stdlib only): is a runtime holding the lock now? Never creates the file, and takes
    only a shared lock for an instant, so many clients probing at once never see each other. An
    unreadable lock counts as free: the caller goes on to the step that reports the problem."""
    if sys.platform == "win32":
        lock = InstanceLock(path)
        try:
            if not lock.try_acquire():
                return True
            lock.release()
        except OSError:
            pass
        return False
    import fcntl

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the shared lock
    return False


def lock_holder_record(path: str | Path) -> str:
    """What the runtime wrote in its lock: ``<pid>`` while starting, ``<pid> ready`` once it answers."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
        try:
            return os.read(fd, 64).decode("ascii", "replace")
        finally:
            os.close(fd)
    except OSError:
        return ""


def stop_lock_holder(path: Path, timeout: float = 10.0) -> bool:
    """Asks the runtime holding the lock to exit (SIGTERM: it releases protection and exits) when it
    cannot be reached over its socket; True once the lock is free. Only a pid the holder wrote itself
    while holding the lock is signalled."""
    import signal
    import time

    if not held_by_another_process(path):
        return True
    words = lock_holder_record(path).split()
    text = words[0] if words else ""
    if not (text.isdigit() and 0 < int(text) < 2**31) or int(text) == os.getpid():
        return False
    try:
        os.kill(int(text), signal.SIGTERM)
    except OSError:
        return False
    deadline = time.monotonic() + timeout
    while held_by_another_process(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


class LaunchGate:
    """``<data>/launch.lock``: of many clients finding no runtime, one launches it (the leader, an
    exclusive lock) and the others wait for the leader to let go (the same readiness signal for all),
    then connect. The file's content is the last startup failure, so the waiters can repeat it
    instead of launching a runtime that fails the same way again."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._fd: int | None = None

    def open(self) -> bool:
        """False when the file cannot be used (the caller then launches without coordination)."""
        try:
            os.makedirs(os.path.dirname(os.fspath(self.path)) or ".", 0o700, exist_ok=True)
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(self.path, flags | os.O_NONBLOCK, 0o600)
        except OSError:
            return False
        return True

    def _lock(self, exclusive: bool) -> bool:
        assert self._fd is not None
        try:
            if sys.platform == "win32":
                _windows_locking(self._fd, "LK_NBLCK")
            else:
                import fcntl

                fcntl.flock(self._fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def _unlock(self) -> None:
        assert self._fd is not None
        try:
            if sys.platform == "win32":
                _windows_locking(self._fd, "LK_UNLCK")
            else:
                import fcntl

                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError:
            pass

    def try_lead(self) -> bool:
        return self._lock(exclusive=True)

    def leader_active(self) -> bool:
        """Is a client launching the runtime right now (holding the gate)?"""
        if self._lock(exclusive=False):
            self._unlock()
            return False
        return True

    def wait_for_leader(self, timeout: float) -> bool:
        """Until the leader lets go (True) or ``timeout`` seconds pass (False)."""
        import time

        deadline = time.monotonic() + timeout
        while not self._lock(exclusive=False):
            if time.monotonic() >= deadline:
                return False
            time.sleep(GATE_POLL_SECONDS)
        self._unlock()
        return True

    def read_record(self) -> str:
        assert self._fd is not None
        try:
            return _read_at_start(self._fd, 4096).decode("utf-8", "replace")
        except OSError:
            return ""

    def write_record(self, text: str) -> None:
        """Leader only: the record the waiters read after it lets go ("" = the launch worked)."""
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, 0)
            if text:
                _write_at_start(self._fd, text.encode("utf-8", "replace")[:4096])
        except OSError:
            pass

    def close(self) -> None:
        if self._fd is not None:
            self._unlock()
            fd, self._fd = self._fd, None
            os.close(fd)


class ConfigLockError(OSError):
    """The config lock could not be taken (held too long by another process, or unusable)."""


def config_lock_path(path: Path) -> Path:
    """``<folder>/.<name>.lidguard-lock`` beside the config file: the file itself is replaced by atomic
    writes, so its inode cannot carry the lock; it is removed only by its holder (hook-remove, uninstall),
    and a waiter that then gets the removed inode locks the new sidecar instead (``_still_linked``)."""
    return path.with_name(f".{path.name}.lidguard-lock")


def _try_lock(fd: int) -> bool:
    try:
        if sys.platform == "win32":
            _windows_locking(fd, "LK_NBLCK")
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
            _windows_locking(fd, "LK_UNLCK")
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def config_lock(*paths: str | Path, timeout: float = CONFIG_LOCK_TIMEOUT_SECONDS) -> ConfigLock:
    """Exclusive lock around a read-modify-write of each of ``paths`` (taken in sorted order, so two
    callers locking the same files never deadlock), as a ``with`` block. Waits up to ``timeout`` seconds
    in all, then raises :class:`ConfigLockError` with one readable line; the kernel frees the lock when a
    holder dies."""
    return ConfigLock(paths, timeout)


class ConfigLock:
    """What ``config_lock`` returns (a class, not ``contextlib``: this module is on the hook path)."""

    def __init__(self, paths: tuple[str | Path, ...], timeout: float) -> None:
        self._paths = paths
        self._timeout = timeout
        self._held: list[int] = []

    def __enter__(self) -> None:
        from pathlib import Path

        deadline = time.monotonic() + max(0.0, self._timeout)
        try:
            for path in sorted({Path(os.path.abspath(item)) for item in self._paths}):
                self._held.append(_acquire(path, deadline))
        except BaseException:
            self._release()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        held, self._held = self._held, []
        for fd in reversed(held):
            _unlock(fd)


def _still_linked(fd: int, lock: Path) -> bool:
    """Whether the locked descriptor is still the file at ``lock``: a holder may remove the sidecar
    before it unlocks, and a waiter that got the removed inode must not count it as the lock."""
    try:
        named = os.stat(lock, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


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
        if sys.platform != "win32" and not _still_linked(fd, lock):
            os.close(fd)  # its holder removed the sidecar (hook-remove, uninstall): lock the new one
            return _acquire(path, deadline)
    except ConfigLockError:
        os.close(fd)
        raise
    except OSError as error:
        os.close(fd)
        raise ConfigLockError(f"Cannot lock {path} (lock file {lock}): {error.strerror or error}") from error
    return fd
