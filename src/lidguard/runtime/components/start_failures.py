"""The last failed start, and an early exit for a runtime whose every start failed (issue 33.6).

A start whose protection cannot be applied (no logind in a container, a refused inhibitor) is
rolled back; the hook still exits 0, so the user would only see ``Active sessions: 0``. This
component keeps ``LastStartFailure`` (``At``, ``Session``, ``Reason``) for the status reply and writes
it to ``last-start-failure.json`` (0600, off the gate) so ``lidguard status`` can say it after the
runtime is gone; a later successful start deletes the file. A runtime none of whose starts succeeded
asks to exit ``FAILED_START_EXIT_SECONDS`` after the last failure (not after the cleanup delay of
minutes): nothing it could do here works, and a later hook launches a new one anyway.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import anyio

from ... import switches
from ..clock import sleep_until
from ..logs import format_utc
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime
    from ..sessions import SessionKey

__all__ = ["FAILED_START_EXIT_SECONDS", "LAST_START_FAILURE_FILE_NAME", "StartFailureComponent"]

FAILED_START_EXIT_SECONDS = switches.FAILED_START_EXIT_SECONDS
LAST_START_FAILURE_FILE_NAME = "last-start-failure.json"
MAX_REASON_CHARS = 2000


class StartFailureComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._last: dict[str, Any] | None = None
        self._protected_once = False
        self._exit_scope: anyio.CancelScope | None = None
        self.path = runtime.paths.data_dir / LAST_START_FAILURE_FILE_NAME

    def describe(self) -> dict[str, Any] | None:
        """``LastStartFailure`` of the status reply (None: no start failed since the last success)."""
        return self._last

    def failed(self, key: SessionKey, reason: str) -> None:
        """Gate held: a start was rolled back because its protection could not be applied."""
        runtime = self._runtime
        self._last = {"At": format_utc(runtime.clock.now()), "Session": str(key), "Reason": reason[:MAX_REASON_CHARS]}
        runtime.status_changed()
        if runtime.running:
            record = dict(self._last)
            runtime.spawn(lambda scope: self._write(record))
            if not self._protected_once:
                self._schedule_exit()

    def succeeded(self) -> None:
        """Gate held: a start is protected; the runtime has work, and the failure is history."""
        first, self._protected_once = not self._protected_once, True
        if self._exit_scope is not None:
            self._exit_scope.cancel()
            self._exit_scope = None
        had = self._last is not None
        if had:
            self._last = None
            self._runtime.status_changed()
        if (had or first) and self._runtime.running:  # also a file an earlier runtime left
            self._runtime.spawn(lambda scope: self._write(None))

    def _schedule_exit(self) -> None:
        runtime = self._runtime
        if self._exit_scope is not None:
            self._exit_scope.cancel()
        seconds = switches.failed_start_exit_seconds()
        deadline = runtime.clock.now() + timedelta(seconds=seconds)

        async def fire(scope: anyio.CancelScope) -> None:
            await sleep_until(runtime.clock, deadline)
            async with runtime.gate:
                if self._exit_scope is scope:
                    self._exit_scope = None
                if self._protected_once or runtime.busy():
                    return
                runtime.log("server-runtime-exit-after-failed-starts", "server-runtime-cleanup",
                            f"Requested exit: every start failed ({self._last['Reason'] if self._last else ''}); "
                            f"the next hook launches the runtime again.")
                runtime.exit_requested.set()

        self._exit_scope = runtime.spawn(fire)

    async def _write(self, record: dict[str, Any] | None) -> None:
        """The file the CLI reads once the runtime is gone (written off the gate; failures only logged)."""
        from ...fileio import write_atomic

        def write() -> None:
            if record is None:
                self.path.unlink(missing_ok=True)
            else:
                write_atomic(self.path, json.dumps(record, ensure_ascii=True) + "\n", durable=False)

        try:
            await anyio.to_thread.run_sync(write)
        except Exception as error:  # noqa: BLE001 - status only: never in the way of anything
            self._runtime.exception_log.record("last-start-failure-write-failed", error)
