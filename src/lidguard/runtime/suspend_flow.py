"""The post-stop suspend flow (seed 001 "Lid State And Suspend", REFERENCE 9.3).

Once nobody wants protection: check closed-lid eligibility, schedule a pending suspend, keep
protection during the delay and the sound, re-check, release protection right before the real
request, record the result in suspend-history. Any start or activity cancels the pending suspend.
Webhooks and ask-before-sleep plug in between the delay and the sound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ..platform.api import SuspendResult, Unsupported
from . import policy
from .eligibility import closed_lid_eligibility
from .logs import SuspendHistoryEntry

if TYPE_CHECKING:
    from .daemon import Runtime

__all__ = ["PendingSuspend", "SuspendFlow"]


@dataclass
class PendingSuspend:
    trigger: policy.EvaluateSuspend
    delay_seconds: int
    scope: anyio.CancelScope | None = None


class SuspendFlow:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.pending: PendingSuspend | None = None

    def _log(self, trigger: policy.EvaluateSuspend, step: str, message: str, **details: Any) -> str:
        """Logs ``<trigger command>-suspend-<step>`` (REFERENCE 3.3 names) and returns the event name."""
        event_name = f"{trigger.command}-suspend-{step}"
        self._runtime.log(event_name, trigger.command, message, **details)
        return event_name

    def cancel(self, reason: str) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if pending.scope is not None:
            pending.scope.cancel()
        self._log(pending.trigger, "canceled", f"Canceled the pending suspend because of {reason}.")

    async def _eligibility_text(self) -> tuple[bool, str]:
        lid = await self._runtime.read_lid_state()
        displays = await self._runtime.read_displays()
        result = closed_lid_eligibility(lid, displays)
        return result.eligible, result.why_not

    async def evaluate(self, trigger: policy.EvaluateSuspend) -> None:
        """Called with the gate held when protection stopped being wanted."""
        runtime = self._runtime
        mode = runtime.settings.suspend_mode.value
        eligible, why_not = await self._eligibility_text()
        if not eligible:
            self._log(trigger, "skipped", f"Skipped {mode} because {why_not}", session=trigger.trigger_session)
            return
        if self.pending is not None and trigger.cancel_path:
            return  # a cancel path keeps the suspend that is already scheduled or running
        self.cancel("a newer suspend trigger")
        delay = runtime.settings.post_stop_suspend_delay_seconds
        when = "immediately" if delay == 0 else f"in {delay} second(s)"
        why = ("the last session stopped" if trigger.reason == "Completed"
               else "all remaining sessions are soft-locked")
        self._log(trigger, "scheduled",
                  f"Scheduled {mode} {when} because the lid is closed, no suspend-blocking visible display "
                    f"monitors remain, and {why}.", session=trigger.trigger_session)
        pending = PendingSuspend(trigger, delay)
        self.pending = pending

        async def run(scope: anyio.CancelScope) -> None:
            try:
                await self._run_pending(pending)
            finally:
                if self.pending is pending:
                    self.pending = None
                if not scope.cancel_called:  # a canceller holds the gate and re-syncs by itself
                    with anyio.CancelScope(shield=True):
                        async with runtime.gate:
                            await runtime.sync_protection()
                            runtime.reevaluate_cleanup()

        pending.scope = runtime.spawn(run)

    async def _still_wanted(self, pending: PendingSuspend) -> bool:
        """Re-check (gate held): no session works again and the lid is still closed with no display."""
        runtime = self._runtime
        if self.pending is not pending:
            return False
        if runtime.state.protection_wanted:
            self.pending = None
            self._log(pending.trigger, "canceled",
                      "Skipped pending suspend because a session became active before suspend ran.")
            return False
        eligible, why_not = await self._eligibility_text()
        if not eligible:
            self.pending = None
            self._log(pending.trigger, "canceled", f"Skipped pending suspend because {why_not}")
            return False
        return True

    async def _run_pending(self, pending: PendingSuspend) -> None:
        runtime = self._runtime
        await anyio.sleep(pending.delay_seconds)
        async with runtime.gate:
            if not await self._still_wanted(pending):
                return
            sound = runtime.settings.post_stop_suspend_sound
            volume = runtime.settings.post_stop_suspend_sound_volume_override_percent
        if sound:
            await self._play_sound(pending, sound, volume)
        async with runtime.gate:
            if not await self._still_wanted(pending):
                return
            await self._request_suspend(pending)

    async def _play_sound(self, pending: PendingSuspend, sound: str, volume: int | None) -> None:
        runtime = self._runtime
        try:
            warnings = await runtime.call_platform(
                lambda: runtime.platform.sound.play(sound, volume_percent=volume))
        except Exception as error:  # sound failures are warnings, never a reason not to suspend
            self._log(pending.trigger, "sound-failed", f"Post-stop sound {sound} failed: {error}", succeeded=False)
            return
        for warning in warnings:
            self._log(pending.trigger, "sound-volume-warning", warning, succeeded=False)

    async def _request_suspend(self, pending: PendingSuspend) -> None:
        """Gate held. Releases protection, then asks the platform to suspend, then records it."""
        runtime = self._runtime
        trigger = pending.trigger
        mode = runtime.settings.suspend_mode
        self._log(trigger, "requesting", f"Requesting {mode.value}.", session=trigger.trigger_session)
        with anyio.CancelScope(shield=True):
            await runtime._release_protection()
            try:
                result = await runtime.call_platform(runtime.platform.suspend.suspend, mode)
            except Unsupported as error:
                result = SuspendResult(False, str(error))
            except Exception as error:
                runtime.exception_log.record("suspend-request-failed", error)
                result = SuspendResult(False, f"The {mode.value} request failed: {error}")
        event_name = self._log(trigger, "requested" if result.succeeded else "failed", result.message,
                               succeeded=result.succeeded, session=trigger.trigger_session)
        runtime.suspend_history.append(SuspendHistoryEntry(
            recorded_at=runtime.clock.now(), suspend_mode=mode.value, reason=trigger.reason,
            succeeded=result.succeeded, message=result.message, event_name=event_name,
            command_name=trigger.command, active_session_count=len(runtime.state.sessions),
            suspend_trigger_session_count=trigger.soft_locked_session_count, session=trigger.trigger_session,
            session_state_reason=trigger.trigger_session.soft_lock_reason if trigger.trigger_session else None,
        ), keep=runtime.settings.suspend_history_entry_count)
        self.pending = None
