"""Windows ``ProcessWatcher``: ancestry from one Toolhelp snapshot, exit waiting on a process handle.

``wait_for_exit`` opens the process with SYNCHRONIZE (| PROCESS_QUERY_LIMITED_INFORMATION) and waits
on the handle in a worker thread, in 1 s slices so a cancelled watch ends its thread promptly
(REFERENCE 7.1). The handle keeps referring to the original process, so a reused pid cannot
confuse the watch. A process that cannot be opened because it is gone counts as exited; one that
exists but cannot be opened (ERROR_ACCESS_DENIED) is polled for liveness instead.
"""

from __future__ import annotations

import threading

import anyio

from ..ancestry import windows as ancestry
from ..api import ProcessInfo
from .winapi import ERROR_INVALID_PARAMETER, WAIT_TIMEOUT, WindowsApi, WindowsApiError

__all__ = ["WAIT_SLICE_MS", "WindowsProcessWatcher"]

WAIT_SLICE_MS = 1000
POLL_INTERVAL_SECONDS = 1.0


class WindowsProcessWatcher:
    def __init__(self, api: WindowsApi) -> None:
        self._api = api

    def read_ancestry(self, pid: int) -> list[ProcessInfo]:
        return ancestry.read_ancestry_with(self._api, pid, max_depth=ancestry.DEFAULT_MAX_DEPTH)

    def is_alive(self, pid: int) -> bool:
        return ancestry.is_process_alive_with(self._api, pid)

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        return ancestry.descendant_cpu_seconds_with(self._api, pid)

    async def wait_for_exit(self, pid: int) -> None:
        if pid <= 0:
            return
        try:
            handle = self._api.open_process_for_wait(pid)
        except WindowsApiError as error:
            if error.winerror == ERROR_INVALID_PARAMETER:
                return  # no such process: it has exited
            while self.is_alive(pid):  # ERROR_ACCESS_DENIED and the like: it may exist, poll it
                await anyio.sleep(POLL_INTERVAL_SECONDS)
            return
        stop = threading.Event()
        claim = _HandleClaim()
        try:
            await anyio.to_thread.run_sync(self._wait_on_handle, handle, stop, claim, abandon_on_cancel=True)
        finally:
            stop.set()  # a cancelled watch: the worker sees it within one slice and closes the handle
            if claim.take():  # cancelled before a worker thread ran it (anyio then never runs it): closed here
                self._close(handle)

    def _wait_on_handle(self, handle: int, stop: threading.Event, claim: _HandleClaim) -> None:
        if not claim.take():
            return  # the watch was cancelled before this thread started, and closed the handle itself
        try:
            while not stop.is_set():
                result = self._api.wait_for_single_object(handle, WAIT_SLICE_MS)
                if result != WAIT_TIMEOUT:
                    return  # WAIT_OBJECT_0: exited; WAIT_FAILED: the handle is unusable, stop watching
        finally:
            self._close(handle)

    def _close(self, handle: int) -> None:
        try:
            self._api.close_handle(handle)
        except WindowsApiError:  # an already invalid handle: there is nothing left to release
            pass

    def describe(self) -> str:
        return (f"available (Toolhelp snapshot + PEB command lines; exit waits on a SYNCHRONIZE handle in "
                f"{WAIT_SLICE_MS} ms slices; running tools' CPU from GetProcessTimes)")


class _HandleClaim:
    """Who closes a watch's handle: the worker thread that waits on it, or - when the watch is cancelled
    before any thread ran the wait (anyio skips a cancelled job) - the watch itself. ``take`` is True once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = False

    def take(self) -> bool:
        with self._lock:
            taken, self._taken = self._taken, True
            return not taken
