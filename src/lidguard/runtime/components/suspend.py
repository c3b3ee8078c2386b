"""The pending suspend (seed 001 "Lid State And Suspend", REFERENCE 9.3: the seed order wins).

Once nobody wants protection: check closed-lid eligibility, schedule a pending suspend, then with
protection still applied: wait the post-stop delay (0 = immediate; a continued Stop with
RepeatClosedLidStopFollowUp off skips it), POST PreSuspend (5 s bound, a failure never stops the
suspend), play the post-stop sound to completion, re-check lid, displays and sessions, release
protection right before the real request, record the result in suspend-history. Any start,
activity or new prompt cancels the pending suspend; a canceled one whose PreSuspend was never
attempted lets its suppressed session end fall back to PostSessionEnd.

Each stage is decided under the gate (``suspend_policy``), the slow part (fresh machine reading,
webhook, sound, protection release, the request) runs off the gate, and the result is recorded
under the gate again. Ask-before-sleep (``followup.py``) is the ``follow-up`` stage between the delay
and the webhook, for a stop whose hook waits for it: a reply ends this suspend and restores the
session; Canceled or Expired go on to the webhook at once. Every way a pending suspend ends releases
its waiting hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio

from ...platform.api import SuspendMode, play_sound
from .. import policy, suspend_policy
from ..clock import sleep_until
from ..logs import SuspendHistoryEntry, format_utc
from ..machine import MachineReading
from . import ComponentBase, webhooks

if TYPE_CHECKING:
    from ..app import Runtime
    from .followup import FollowUpComponent, FollowUpWaiter

__all__ = ["PendingSuspend", "SuspendComponent"]


@dataclass
class PendingSuspend:
    trigger: policy.EvaluateSuspend
    mode: SuspendMode
    deadline: datetime
    stage: suspend_policy.Stage = "delay"
    scope: anyio.CancelScope | None = None
    notify: bool = True  # sends PreSuspend (never for a cancel-path trigger)
    session_end: dict[str, Any] | None = None  # the provider-reported end it notifies (webhook fields)
    pre_suspend_attempted: bool = False
    waiter: FollowUpWaiter | None = None  # the blocking Stop hook of an ask-before-sleep wait
    follow_up_done: bool = False

    def release_waiter(self, outcome: str) -> None:
        if self.waiter is not None:
            self.waiter.finish(outcome)

    def to_wire(self) -> dict[str, Any]:
        return {"Mode": self.mode.value, "Reason": self.trigger.reason, "Stage": self.stage,
                "DeadlineUtc": format_utc(self.deadline)}


class SuspendComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.pending: PendingSuspend | None = None
        self.follow_up: FollowUpComponent | None = None
        self.last_failure: dict[str, str] | None = None  # the newest refused request (status: LastSuspendFailure)

    def attach_follow_up(self, component: FollowUpComponent) -> None:
        """The ask-before-sleep component plugs its stage in here."""
        self.follow_up = component

    # -- the component questions --------------------------------------------------------------------
    def handles(self) -> tuple[type, ...]:
        return (policy.CancelPendingSuspend, policy.EvaluateSuspend)

    def apply(self, effect: policy.Effect) -> None:
        if isinstance(effect, policy.CancelPendingSuspend):
            self.cancel(effect.reason)
        elif isinstance(effect, policy.EvaluateSuspend):
            self._evaluate(effect)

    def wants_protection(self) -> bool:
        """Protection stays during the delay and the sound; it goes right before the request."""
        return self.pending is not None and self.pending.stage != "requesting"

    def busy(self) -> bool:
        return self.pending is not None

    def describe(self) -> dict[str, Any] | None:
        return self.pending.to_wire() if self.pending is not None else None

    # -- decisions (gate held) -----------------------------------------------------------------------
    def _log(self, trigger: policy.EvaluateSuspend, step: str, message: str, **details: Any) -> str:
        """Logs ``<trigger command>-suspend-<step>`` (REFERENCE 3.3 names) and returns the event name."""
        event_name = f"{trigger.command}-suspend-{step}"
        self._runtime.log(event_name, trigger.command, message, **details)
        return event_name

    def cancel(self, reason: str, *, fallback: bool = True) -> None:
        """Cancels the pending suspend (gate held). ``fallback``: its suppressed session end may
        still notify PostSessionEnd (not while the runtime exits)."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        if pending.scope is not None:
            pending.scope.cancel()
        pending.release_waiter("Ended")
        self._log(pending.trigger, "canceled", f"Canceled the pending suspend because of {reason}.")
        if fallback:
            self._fall_back_to_post_session_end(pending)

    def _fall_back_to_post_session_end(self, pending: PendingSuspend) -> None:
        if pending.session_end is not None and not pending.pre_suspend_attempted:
            self._runtime.webhooks.post_session_end(pending.session_end, pending.trigger.command)

    def _evaluate(self, trigger: policy.EvaluateSuspend) -> None:
        """Uses the reading taken afresh right before this event (``suspend_policy.may_trigger_suspend``)."""
        runtime = self._runtime
        settings = runtime.settings
        delay = suspend_policy.delay_seconds_for(trigger, delay_seconds=settings.post_stop_suspend_delay_seconds,
                                                 repeat_follow_up=settings.repeat_closed_lid_stop_follow_up)
        decision = suspend_policy.on_trigger(
            trigger, mode=settings.suspend_mode.value, eligibility=runtime.machine.latest.eligibility,
            pending=self.pending is not None, delay_seconds=delay, now=runtime.clock.now())
        session_end = runtime.webhooks.session_end_details(trigger.ended) if trigger.ended is not None else None
        held = self.held_back()
        if isinstance(decision, suspend_policy.Schedule) and held:
            decision = suspend_policy.Skip(f"Skipped {settings.suspend_mode.value} because {held[0]}")
        if not isinstance(decision, suspend_policy.Schedule):
            if isinstance(decision, suspend_policy.Skip):
                self._log(trigger, "skipped", decision.message, session=trigger.trigger_session)
            if session_end is not None:  # no suspend scheduled: the normal end notifies PostSessionEnd
                runtime.webhooks.post_session_end(session_end, trigger.command)
            return
        self.cancel("a newer suspend trigger")
        self._log(trigger, "scheduled", decision.message, session=trigger.trigger_session)
        pending = PendingSuspend(trigger, settings.suspend_mode, decision.deadline,
                                 notify=suspend_policy.notifies(trigger), session_end=session_end,
                                 waiter=self.follow_up.claim(trigger) if self.follow_up is not None else None)
        self.pending = pending
        pending.scope = runtime.spawn(lambda scope: self._run(pending))

    def held_back(self) -> list[str]:
        """Why no suspend may be scheduled or requested now (a pause); empty when nothing holds it back."""
        reasons = (component.holds_back_suspend() for component in self._runtime.answering("holds_back_suspend"))
        return [reason for reason in reasons if reason]

    def _still_wanted(self, pending: PendingSuspend, reading: MachineReading) -> bool:
        check = suspend_policy.recheck(is_current=self.pending is pending,
                                       protection_wanted=self._runtime.state.protection_wanted,
                                       eligibility=reading.eligibility)
        held = self.held_back()
        if check.proceed and held:
            check = suspend_policy.Recheck(False, f"Canceled the pending suspend because {held[0]}")
        if not check.proceed:
            pending.release_waiter("Ended")
        if not check.proceed and check.message:
            self.pending = None
            self._log(pending.trigger, "canceled", check.message)
            self._fall_back_to_post_session_end(pending)
        return check.proceed

    # -- the background flow ---------------------------------------------------------------------------
    async def _run(self, pending: PendingSuspend) -> None:
        runtime = self._runtime
        try:
            await sleep_until(runtime.clock, pending.deadline)
            while pending.stage != "requesting":
                reading = await runtime.machine.fresh()
                async with runtime.gate:
                    if not self._still_wanted(pending, reading):
                        return
                    settings = runtime.settings
                    url = settings.pre_suspend_webhook_url if pending.notify else ""
                    sound = settings.post_stop_suspend_sound
                    volume = settings.post_stop_suspend_sound_volume_override_percent
                    pending.stage = suspend_policy.next_stage(
                        pending.stage, has_follow_up=self._follow_up_due(pending), has_webhook=bool(url),
                        has_sound=bool(sound))
                    if pending.stage != "follow-up":
                        pending.release_waiter("NotAsked")
                    if pending.stage == "webhook":
                        pending.pre_suspend_attempted = True
                    elif pending.stage == "requesting":
                        pending.mode = settings.suspend_mode
                        self._log(pending.trigger, "requesting", f"Requesting {pending.mode.value}.",
                                  session=pending.trigger.trigger_session)
                if pending.stage == "follow-up":
                    if await self._follow_up_replied(pending):
                        return
                elif pending.stage == "webhook":
                    await self._pre_suspend(pending, url)
                elif pending.stage == "sound":
                    await self._play_sound(pending, sound, volume)
            await self._request(pending)
        finally:
            with anyio.CancelScope(shield=True):
                pending.release_waiter("Ended")
                if self.pending is pending:
                    self.pending = None
                async with runtime.gate:
                    runtime.state_changed()
                await runtime.protection.reconcile()

    def request_after_blockers(self, trigger: policy.EvaluateSuspend, mode: SuspendMode,
                               session_end: dict[str, Any] | None) -> None:
        """The one request after another program's sleep blocker went away (``blocked_suspend.py``;
        gate held, lid and sessions re-checked): no delay, webhook or sound again."""
        runtime = self._runtime
        self.cancel("a suspend after the sleep blocker ended", fallback=False)
        pending = PendingSuspend(trigger, mode, runtime.clock.now(), stage="requesting", notify=False,
                                 session_end=session_end, pre_suspend_attempted=True, follow_up_done=True)
        self.pending = pending
        self._log(trigger, "requesting", f"Requesting {mode.value} now that the sleep blocker is gone.",
                  session=trigger.trigger_session)

        async def retry(scope: anyio.CancelScope) -> None:
            try:
                await self._request(pending)
            finally:
                with anyio.CancelScope(shield=True):
                    if self.pending is pending:
                        self.pending = None
                    async with runtime.gate:
                        runtime.state_changed()
                    await runtime.protection.reconcile()

        pending.scope = runtime.spawn(retry)

    def _follow_up_due(self, pending: PendingSuspend) -> bool:
        return (not pending.follow_up_done and self.follow_up is not None
                and self.follow_up.still_enabled(pending))

    async def _follow_up_replied(self, pending: PendingSuspend) -> bool:
        """The ask-before-sleep wait; True when a reply ended this suspend and restored the session."""
        assert self.follow_up is not None and pending.waiter is not None
        result = await self.follow_up.wait(pending)
        async with self._runtime.gate:
            pending.follow_up_done = True
            if result.outcome == "Replied" and result.reply is not None and self.pending is pending:
                self.pending = None  # not canceled: the session goes on, so no PostSessionEnd fallback
                self.follow_up.restore(pending, result.reply)
                pending.waiter.finish("Replied", result.reply)
                return True
            pending.release_waiter(result.outcome)
            if result.outcome == "Canceled":
                pending.deadline = self._runtime.clock.now()  # the same suspend with a 0 s delay
        return False

    async def _pre_suspend(self, pending: PendingSuspend, url: str) -> None:
        """PreSuspend after the delay and before the sound; off the gate, at most 5 s, never fatal."""
        trigger = pending.trigger
        body = webhooks.pre_suspend_body(trigger.reason, soft_locked_session_count=trigger.soft_locked_session_count,
                                         session_end=pending.session_end)

        def failed(message: str) -> None:
            self._log(trigger, "webhook-failed", message, succeeded=False, session=trigger.trigger_session)

        await self._runtime.webhooks.send("PreSuspend", url, body, failed)

    async def _play_sound(self, pending: PendingSuspend, sound: str, volume: int | None) -> None:
        runtime = self._runtime
        outcome = await runtime.call_platform(lambda: play_sound(runtime.platform.sound, sound, volume))
        for warning in outcome.warnings:
            self._log(pending.trigger, "sound-volume-warning", warning, succeeded=False)
        if outcome.failure is not None:  # sound failures are warnings, never a reason not to suspend
            self._log(pending.trigger, "sound-failed", f"Post-stop sound {sound} failed: {outcome.failure}",
                      succeeded=False)

    async def _request(self, pending: PendingSuspend) -> None:
        """Releases protection (nothing wants it in this stage), then asks the platform to suspend."""
        runtime = self._runtime
        with anyio.CancelScope(shield=True):
            # The lid hold (Linux) goes only after the request: see ProtectionComponent.keep_lid_for_suspend.
            runtime.protection.keep_lid_for_suspend(True)
            try:
                await self._request_unprotected(pending)
            finally:
                runtime.protection.keep_lid_for_suspend(False)

    async def _request_unprotected(self, pending: PendingSuspend) -> None:
        """Keep-awake released (a held lid change may stay), the request, its record."""
        runtime = self._runtime
        trigger, mode = pending.trigger, pending.mode
        await runtime.protection.reconcile()
        await runtime.journal.suspend_requesting()  # journaled before the request (issue 39)
        if self.pending is not pending or runtime.state.protection_wanted or self.held_back():
            return  # a start, activity or pause canceled it while protection was released
        result, blockers = await runtime.blocked.request(mode)
        async with runtime.gate:
            step = "requested" if result.succeeded else "blocked" if blockers else "failed"
            event_name = self._log(trigger, step, result.message, succeeded=result.succeeded,
                                   session=trigger.trigger_session)
            runtime.suspend_history.append(SuspendHistoryEntry(
                recorded_at=runtime.clock.now(), suspend_mode=mode.value, reason=trigger.reason,
                succeeded=result.succeeded, message=result.message, event_name=event_name,
                command_name=trigger.command, active_session_count=len(runtime.state.sessions),
                suspend_trigger_session_count=trigger.soft_locked_session_count,
                session=trigger.trigger_session,
                session_state_reason=trigger.trigger_session.soft_lock_reason if trigger.trigger_session else None,
                blockers=tuple(blocker.to_wire() for blocker in blockers),
            ), keep=runtime.settings.suspend_history_entry_count)
            # The newest request's failure stays in every status reply until one succeeds (issue 34).
            self.last_failure = None if result.succeeded else {
                "RecordedAt": runtime.clock.now().isoformat(), "SuspendMode": mode.value,
                "Reason": trigger.reason, "Message": result.message}
            if blockers and not result.succeeded and self.pending is pending:
                runtime.blocked.start(trigger, mode, blockers, pending.session_end, notify=pending.notify)
            if self.pending is pending:
                self.pending = None
