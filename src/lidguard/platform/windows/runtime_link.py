"""The watchdog's link to its runtime on Windows: a process handle instead of the POSIX pipe.

There is no pipe to inherit through ``pass_fds`` here, so the watchdog opens the runtime's process
(``OpenProcess`` with SYNCHRONIZE, PROCESS_QUERY_LIMITED_INFORMATION and PROCESS_TERMINATE) as
soon as it starts. A handle names one process for good, so a pid Windows reuses later can never be
waited on or terminated through it. The only window is before the open: a runtime that died between
launching the watchdog and this open may have its pid reused by a newer process; that one was
created after the watchdog (the runtime launched the watchdog while alive), so a process created
later than this one is not the runtime and is never touched. Since the handle pins the process, the
watchdog accepts a runtime lock that is held but whose ``<pid> ready`` record it cannot read (the
holder's ``msvcrt.locking`` byte-range lock is mandatory on Windows).

``gone`` waits on the handle (``WaitForSingleObject``); there is no polite end for a process without
a console, so the runtime is ended with ``TerminateProcess`` (the equivalent of SIGKILL). Every call
goes through :class:`~lidguard.platform.windows.winapi.WindowsApi` (the cffi binding is loaded when the
watchdog starts; this module imports only the standard library).
"""

from __future__ import annotations

import contextlib

from .winapi import WAIT_TIMEOUT, WindowsApi, WindowsApiError

__all__ = ["TERMINATED_EXIT_CODE", "ProcessRuntimeLink"]

TERMINATED_EXIT_CODE = 1


class ProcessRuntimeLink:
    polite_end: str | None = None
    force_end = "TerminateProcess"
    pinned = True  # the handle names one process for good

    def __init__(self, api: WindowsApi, runtime_pid: int, own_pid: int) -> None:
        self._api = api
        self._handle: int | None = None
        self.refused = ""  # why there is no handle (the runtime was already gone, or not ours)
        try:
            handle = api.open_process_for_watchdog(runtime_pid)
        except WindowsApiError as error:
            self.refused = str(error)
            return
        try:
            if api.process_creation_time(handle) > api.process_times(own_pid)[0]:
                self.refused = f"pid {runtime_pid} is a process created after the watchdog (a reused pid)"
                self._close(handle)
                return
        except WindowsApiError as error:
            self.refused = str(error)
            self._close(handle)
            return
        self._handle = handle

    def gone(self, timeout: float) -> bool:
        """Waits up to ``timeout`` for the runtime to exit; True once it has (or cannot be waited on)."""
        if self._handle is None:
            return True
        try:
            result = self._api.wait_for_single_object(self._handle, max(0, int(timeout * 1000)))
        except WindowsApiError:
            return True
        return result != WAIT_TIMEOUT

    def request_end(self) -> bool:
        return self._handle is not None  # nothing polite to send: force_end does the work

    def force(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(WindowsApiError):  # already exiting: gone() says so
                self._api.terminate_process(self._handle, TERMINATED_EXIT_CODE)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            self._close(handle)

    def _close(self, handle: int) -> None:
        with contextlib.suppress(WindowsApiError):
            self._api.close_handle(handle)
