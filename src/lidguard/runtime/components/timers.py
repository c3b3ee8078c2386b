"""Timers that must count the time the machine slept: the inactivity timeout and the cleanup delay.

Both wait for a wall-clock deadline (``clock.sleep_until``), so after a resume they fire within one
check interval instead of waiting out their whole remainder on the stopped monotonic clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import anyio

from ...settings.model import Settings
from .. import policy
from ..clock import sleep_until
from ..sessions import EarliestOf, SessionKey
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["BOOT_GRACE_SECONDS", "TimerComponent"]

BOOT_GRACE_SECONDS = 30.0


class TimerComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._counted_from = EarliestOf(policy.timeout_counted_from)  # followed through each change's keys
        self._timeout_scope: anyio.CancelScope | None = None
        self._timeout_deadline: datetime | None = None
        self._timeout_sleep: anyio.CancelScope | None = None
        self._cleanup_scope: anyio.CancelScope | None = None
        self._cpu_unreadable_logged = False

    def state_changed(self) -> None:
        self._reschedule_timeout()
        self._reevaluate_cleanup()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        self._reschedule_timeout()  # the deadline moves with the timeout minutes
        if self._cleanup_scope is not None:  # the delay may have changed: schedule afresh
            self._cleanup_scope.cancel()
            self._cleanup_scope = None
        self._reevaluate_cleanup()

    def started(self) -> None:
        """A fresh runtime waits for its first request even when the cleanup delay is off."""
        self._reevaluate_cleanup(minimum_seconds=BOOT_GRACE_SECONDS)

    # -- inactivity timeout (also abandons pending provider work) ------------------------------------
    # One long-lived task waits for the current deadline. Activity only ever moves the deadline later,
    # which costs nothing here: the task wakes at the old deadline, sees the new one and sleeps on.
    # Only a deadline that moves earlier interrupts its sleep.
    def _reschedule_timeout(self) -> None:
        runtime = self._runtime
        deadline = policy.timeout_deadline_after(self._counted_from.at(runtime.state),
                                                 runtime.settings.session_timeout_minutes)
        previous = self._timeout_deadline
        if deadline == previous or not runtime.running:
            return
        self._timeout_deadline = deadline
        if self._timeout_scope is None:
            if deadline is not None:
                self._timeout_scope = runtime.spawn(self._wait_for_timeouts)
        elif deadline is not None and (previous is None or deadline < previous) and self._timeout_sleep is not None:
            self._timeout_sleep.cancel()

    async def _wait_for_timeouts(self, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        while True:
            deadline = self._timeout_deadline
            with anyio.CancelScope() as sleep:
                self._timeout_sleep = sleep
                if deadline is None:
                    await anyio.sleep_forever()
                else:
                    await sleep_until(runtime.clock, deadline)
            self._timeout_sleep = None
            if sleep.cancelled_caught or deadline is None or self._timeout_deadline != deadline:
                continue  # the deadline moved while this task slept: wait for the new one
            minutes = runtime.settings.session_timeout_minutes
            tool_cpu = await self._read_tool_cpu(minutes)
            await runtime.run_event(policy.TimeoutCheck(minutes, tool_cpu))

    async def _read_tool_cpu(self, minutes: int | None) -> dict[SessionKey, float | None]:
        """The CPU seconds of the watched agent's descendants, for each due session with a tool in
        flight (off the gate; read only now, when the timer fired). None where it cannot be read."""
        runtime = self._runtime
        if minutes is None:
            return {}
        limit = timedelta(minutes=minutes)
        now = runtime.clock.now()
        due = [(session.key, session.watched_process_identifier) for session in runtime.state.sessions.values()
               if session.tools_in_flight and now - session.last_activity_at >= limit]
        readings: dict[SessionKey, float | None] = {}
        for key, pid in due:
            readings[key] = None
            if not pid:
                continue
            try:
                readings[key] = await runtime.call_platform(runtime.platform.process.descendant_cpu_seconds, pid)
            except Exception as error:  # noqa: BLE001 - Unsupported, OSError: the seeds' path applies
                if not self._cpu_unreadable_logged:
                    self._cpu_unreadable_logged = True
                    runtime.log("running-tool-cpu-unreadable", "session-timeout",
                                f"The CPU time of running tools cannot be read ({error}); the timeout applies "
                                "to sessions with running tools as to any other.", succeeded=False)
        return readings

    # -- cleanup: exit once nothing is left to do ---------------------------------------------------------
    def _reevaluate_cleanup(self, *, minimum_seconds: float = 0.0) -> None:
        runtime = self._runtime
        if runtime.busy():
            if self._cleanup_scope is not None:
                self._cleanup_scope.cancel()
                self._cleanup_scope = None
            return
        if self._cleanup_scope is not None or not runtime.running:
            return
        minutes = runtime.settings.server_runtime_cleanup_delay_minutes
        delay_seconds = max(minimum_seconds, (minutes or 0) * 60)
        if delay_seconds <= 0:
            self._request_exit()
            return
        runtime.log("server-runtime-cleanup-scheduled", "server-runtime-cleanup",
                    f"Scheduled server runtime cleanup in {delay_seconds / 60:g} minute(s).")
        deadline = runtime.clock.now() + timedelta(seconds=delay_seconds)

        async def fire(scope: anyio.CancelScope) -> None:
            await sleep_until(runtime.clock, deadline)
            async with runtime.gate:
                if self._cleanup_scope is scope:
                    self._cleanup_scope = None
                if not runtime.busy():
                    self._request_exit()

        self._cleanup_scope = runtime.spawn(fire)

    def _request_exit(self) -> None:
        self._runtime.log("server-runtime-cleanup-requested", "server-runtime-cleanup",
                          "Requested server runtime cleanup because no active sessions remain.")
        self._runtime.exit_requested.set()
