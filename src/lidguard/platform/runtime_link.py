"""How the watchdog (``runtime/watchdog.py``) is launched beside its runtime and knows it went away.

POSIX: the runtime keeps the write end of a pipe whose read end the watchdog inherits (``pass_fds``);
end of file means the runtime is gone, whatever the reason. The runtime is ended with SIGTERM, then
SIGKILL. Windows: no pipe is inherited; the watchdog opens the runtime's process itself
(``windows/runtime_link.py``: a process handle, guarded against pid reuse by the creation time) and
ends it with TerminateProcess. Stdlib only (the Windows binding loads when a Windows watchdog starts).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["PipeRuntimeLink", "RuntimeLink", "launch_watchdog", "open_runtime_link"]

_HELD_PIPES: list[int] = []  # write ends held for the runtime's life: their end of file tells the watchdog
_DETACHED_PROCESS = 0x00000008  # winbase.h process creation flags
_CREATE_NEW_PROCESS_GROUP = 0x00000200


class RuntimeLink(Protocol):
    """The watchdog's view of its runtime. ``polite_end`` names the polite request (None: none on this
    OS), ``force_end`` the forced one, for the log; ``pinned``: the link holds the runtime's process
    itself (a handle), so a reused pid can never be hit through it."""

    polite_end: str | None
    force_end: str
    pinned: bool

    def gone(self, timeout: float) -> bool: ...
    def request_end(self) -> bool: ...  # False: the runtime is already gone
    def force(self) -> None: ...
    def close(self) -> None: ...


class PipeRuntimeLink:
    """POSIX: end of file on the inherited pipe; SIGTERM, then SIGKILL, to the pid."""

    polite_end: str | None = "SIGTERM"
    force_end = "SIGKILL"
    pinned = False  # signals go to a pid: only the one the lock names

    def __init__(self, runtime_pid: int, pipe_fd: int) -> None:
        self._pid = runtime_pid
        self._fd = pipe_fd

    def gone(self, timeout: float) -> bool:
        """Waits up to ``timeout`` for end of file on the pipe (the runtime's write end closed)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            try:
                ready, _, _ = select.select([self._fd], [], [], remaining)
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return True
            if ready:
                try:
                    if not os.read(self._fd, 64):
                        return True
                except OSError:
                    return True
            if time.monotonic() >= deadline:
                return False

    def request_end(self) -> bool:
        try:
            os.kill(self._pid, signal.SIGTERM)
        except OSError:
            return False
        return True

    def force(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self._pid, getattr(signal, "SIGKILL", signal.SIGTERM))

    def close(self) -> None:
        return None  # the pipe is the process's for its whole life


def open_runtime_link(runtime_pid: int, pipe_fd: int | None) -> RuntimeLink:
    """The link of this OS; ``ValueError`` on POSIX without a pipe, ``OSError`` without the Windows binding."""
    if sys.platform == "win32":
        from .windows._binding import load_windows_api
        from .windows.runtime_link import ProcessRuntimeLink

        api, reason = load_windows_api()
        if api is None:
            raise OSError(f"the Windows API binding is unavailable: {reason}")
        return ProcessRuntimeLink(api, runtime_pid, os.getpid())
    if pipe_fd is None:
        raise ValueError("the watchdog needs --pipe-fd on this OS")
    return PipeRuntimeLink(runtime_pid, pipe_fd)


def launch_watchdog(command: Sequence[str], *, windows: bool = sys.platform == "win32",
                    popen: Callable[..., Any] = subprocess.Popen) -> None:
    """Starts the detached watchdog (``command`` without ``--pipe-fd``). POSIX: a new session holding
    the read end of a pipe whose write end this process keeps for its life. Windows: a detached
    process in its own group, inheriting no handle."""
    quiet: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                             "stderr": subprocess.DEVNULL}
    if windows:
        popen(list(command), close_fds=True, creationflags=_DETACHED_PROCESS | _CREATE_NEW_PROCESS_GROUP, **quiet)
        return
    read_end, write_end = os.pipe()  # neither end is inherited by anything else the runtime starts
    try:
        popen([*command, "--pipe-fd", str(read_end)], pass_fds=(read_end,), start_new_session=True, **quiet)
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    _HELD_PIPES.append(write_end)
