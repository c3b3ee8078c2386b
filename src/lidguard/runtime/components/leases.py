"""Session leases: ``SessionLeaseHours`` after its provider's last event a session ends, whatever happens.

Every provider event renews the lease (a start, activity, a soft-lock, a deferred stop; not the
runtime's own reading of a running tool's CPU time): a session still working keeps it, one whose
events stopped loses it. The hard bound on a session that never stops (a lost Stop hook, a tool that
never finishes, a pending work that never ends): it ends with the reason ``session-lease-expired`` and no
PostSessionEnd (like a watched-process exit). One task waits for the earliest lease deadline on the
wall clock (a resume past it fires within one check interval); ``null`` turns leases off.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import anyio

from ...settings.model import Settings
from .. import policy
from ..clock import sleep_until
from ..sessions import EarliestOf
from ..turns import lease_counted_from, lease_deadline_after
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["LeaseComponent"]


class LeaseComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._started = EarliestOf(lease_counted_from)  # the earliest renewal, followed through each change's keys
        self._deadline: datetime | None = None
        self._task: anyio.CancelScope | None = None
        self._sleep: anyio.CancelScope | None = None

    def state_changed(self) -> None:
        self._reschedule()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        self._reschedule()

    def _reschedule(self) -> None:
        runtime = self._runtime
        if not runtime.running:
            return
        hours = runtime.settings.session_lease_hours
        deadline = lease_deadline_after(self._started.at(runtime.state) if hours is not None else None, hours)
        previous, self._deadline = self._deadline, deadline
        if deadline == previous:
            return
        if self._task is None:
            if deadline is not None:
                self._task = runtime.spawn(self._wait)
        elif self._sleep is not None and deadline is not None and (previous is None or deadline < previous):
            self._sleep.cancel()  # wake up and wait for the new, earlier deadline
        # A later deadline (or none) costs nothing here: the task wakes at the old one, sees the new one and
        # sleeps on (cancelling a scope costs a task repr on asyncio, on every session's start and stop).

    async def _wait(self, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        while True:
            deadline = self._deadline
            with anyio.CancelScope() as sleep:
                self._sleep = sleep
                if deadline is None:
                    await anyio.sleep_forever()
                else:
                    await sleep_until(runtime.clock, deadline)
            self._sleep = None
            if sleep.cancelled_caught or deadline is None or self._deadline != deadline:
                continue
            await runtime.run_event(policy.LeaseCheck(runtime.settings.session_lease_hours))
            if self._deadline == deadline:  # nothing changed (cannot happen: an expired session ended)
                self._deadline = None
