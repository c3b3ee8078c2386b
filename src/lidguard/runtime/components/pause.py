"""Pause and resume (seed 004, issue 19 item 4): ``lidguard pause [--for 30m|2h]`` / ``lidguard resume``.

While paused this component holds wanted protection back (``holds_back_protection``: the keep-awake
request and the lid policy are released, the lid policy restored from its backup) and holds every
suspend back (``holds_back_suspend``: a pending suspend is canceled, none is scheduled; Emergency
Hibernation never runs without protection applied). Sessions keep being tracked, so resuming applies
protection again for the sessions that still work; resuming schedules no suspend by itself.

A pause with a duration ends by itself at its wall-clock deadline (``clock.sleep_until``: it survives
a suspend of the machine); a pause without one lasts until ``resume``. A paused runtime stays up
(``busy``): the pause lives in its memory only, so nothing on disk can take protection away.
``emergency-restore`` (handlers) pauses without a deadline, then clears every session.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio

from ...shared.pause import MAX_PAUSE_SECONDS
from ..clock import sleep_until
from ..logs import format_utc
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["COMMAND", "MAX_PAUSE_SECONDS", "PauseComponent"]

COMMAND = "pause"
HELD_BACK = ("lidguard is paused: protection, the lid policy and suspends are off until `lidguard resume`"
             "{until}; sessions are still tracked.")


class PauseComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.paused = False
        self.until: datetime | None = None  # None while paused: until resume
        self._scope: anyio.CancelScope | None = None

    # -- the component questions ---------------------------------------------------------------------
    def _reason(self) -> str | None:
        if not self.paused:
            return None
        return HELD_BACK.format(until=" or the pause ends" if self.until is not None else "")

    def holds_back_protection(self) -> str | None:
        return self._reason()

    def holds_back_suspend(self) -> str | None:
        return self._reason()

    def busy(self) -> bool:
        return self.paused

    def describe(self) -> dict[str, Any] | None:
        if not self.paused:
            return None
        return {"UntilUtc": format_utc(self.until)}

    # -- commands (gate held) ----------------------------------------------------------------------------
    def pause(self, seconds: int | None, command: str = COMMAND) -> str:
        """Pauses (again: the new duration replaces the old one); returns the reply message."""
        runtime = self._runtime
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        self.paused = True
        self.until = runtime.clock.now() + timedelta(seconds=seconds) if seconds is not None else None
        runtime.suspend.cancel(f"lidguard {command}")
        if self.until is not None:
            deadline = self.until
            self._scope = runtime.spawn(lambda scope: self._end_at(deadline, scope))
            message = (f"Paused for {_duration(seconds or 0)}: protection, the lid policy and suspends are off "
                       "until then or `lidguard resume`.")
        else:
            message = "Paused: protection, the lid policy and suspends are off until `lidguard resume`."
        runtime.log("runtime-paused", command, message, extra={"PausedUntilUtc": format_utc(self.until)})
        runtime.state_changed()
        return message

    def resume(self, command: str = "resume", message: str = "Resumed: protection follows the sessions again.") -> str:
        runtime = self._runtime
        if not self.paused:
            return "LidGuard is not paused."
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        self.paused, self.until = False, None
        runtime.log("runtime-resumed", command, message)
        runtime.state_changed()
        return message

    async def _end_at(self, deadline: datetime, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        await sleep_until(runtime.clock, deadline)
        async with runtime.gate:
            if self._scope is not scope:
                return
            self._scope = None
            self.resume("pause", "The pause ended: protection follows the sessions again.")
        await runtime.protection.reconcile()


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"
