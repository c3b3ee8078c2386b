"""Linux ``ProcessWatcher``: ancestry from /proc, exit waiting through a pidfd.

``wait_for_exit`` opens a pidfd for the watched process (pidfd_open(2), Linux 5.3+). The descriptor
"becomes readable when the process terminates", also for processes that are not our children, so
one ``anyio.wait_readable`` call waits without polling and without racing pid reuse: the pidfd
keeps referring to the original process even if its pid number is recycled.

When pidfds are unavailable (kernel older than 5.3 gives ENOSYS, a seccomp filter may give EPERM,
Python without ``os.pidfd_open``, anyio older than 4.7 without ``wait_readable`` for plain file
descriptors) it falls back to polling :func:`lidguard.proctree.is_process_alive` once a second.
``describe()`` says which mode is in use, for ``lidguard doctor``.
"""

from __future__ import annotations

import errno
import os

import anyio

from lidguard import proctree
from lidguard.platform.api import ProcessInfo

__all__ = ["DEFAULT_POLL_INTERVAL_SECONDS", "LinuxProcessWatcher"]

DEFAULT_POLL_INTERVAL_SECONDS = 1.0
_PERMANENT_PIDFD_ERRORS = frozenset({errno.ENOSYS, errno.EPERM})


class LinuxProcessWatcher:
    """Implements :class:`lidguard.platform.api.ProcessWatcher` for Linux."""

    def __init__(self, *, poll_interval_seconds: float = DEFAULT_POLL_INTERVAL_SECONDS) -> None:
        self._poll_interval_seconds = poll_interval_seconds
        self._polling_reason: str | None = _probe_pidfd_support()

    def describe(self) -> str:
        """``"pidfd"`` or ``"polling (<reason>)"``."""
        if self._polling_reason is None:
            return "pidfd"
        return f"polling ({self._polling_reason})"

    def read_ancestry(self, pid: int) -> list[ProcessInfo]:
        return proctree.read_ancestry(pid)

    def is_alive(self, pid: int) -> bool:
        return proctree.is_process_alive(pid)

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        return proctree.descendant_cpu_seconds(pid)

    async def wait_for_exit(self, pid: int) -> None:
        """Returns once ``pid`` has exited (a zombie counts as exited); at once if it is gone."""
        if pid <= 0:
            return
        if self._polling_reason is None:
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                return  # ESRCH: already gone
            except OSError as error:
                # ENOSYS (old kernel) and EPERM (seccomp) will not change: poll from now on.
                # EINVAL (a thread id before Linux 6.9) and EMFILE/ENFILE: poll for this pid only.
                if error.errno in _PERMANENT_PIDFD_ERRORS:
                    self._polling_reason = _describe_pidfd_error(error)
            else:
                try:
                    await anyio.wait_readable(pidfd)
                finally:
                    os.close(pidfd)
                return
        await self._poll_until_exit(pid)

    async def _poll_until_exit(self, pid: int) -> None:
        while proctree.is_process_alive(pid):
            await anyio.sleep(self._poll_interval_seconds)


def _probe_pidfd_support() -> str | None:
    """None when pidfds work here, else why not (checked once, on this process's own pid)."""
    if not hasattr(anyio, "wait_readable"):
        return "anyio < 4.7 cannot wait on a plain file descriptor"
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return "this Python has no os.pidfd_open"
    try:
        probe = pidfd_open(os.getpid())
    except OSError as error:
        return _describe_pidfd_error(error)
    os.close(probe)
    return None


def _describe_pidfd_error(error: OSError) -> str:
    code = errno.errorcode.get(error.errno or 0, str(error.errno))
    return f"pidfd_open failed with {code}"
