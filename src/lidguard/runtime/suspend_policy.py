"""The pending suspend's decisions as pure functions (REFERENCE 9.1-9.3), tested like ``policy.transition``.

- ``on_trigger``: nobody wants protection any more: skip (not eligible), keep the suspend already
  pending (a cancel path), or schedule one with its wall-clock deadline;
- ``delay_seconds_for``: the post-stop delay, or 0 for a continued Stop (``stop_hook_active``) when
  RepeatClosedLidStopFollowUp is off (seed 001);
- ``recheck``: before each slow stage, is the pending suspend still wanted;
- ``next_stage``: seed order (REFERENCE 9.3): delay -> PreSuspend webhook (when one is configured and
  the trigger may notify) -> sound (when one is configured) -> requesting;
- ``notifies``: a cancel path (watched-process exit, orphan cleanup) never sends a new PreSuspend.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from . import policy
from .eligibility import Eligibility

__all__ = ["STAGES", "KeepPending", "Recheck", "Schedule", "Skip", "Stage", "delay_seconds_for",
           "may_trigger_suspend", "next_stage", "notifies", "on_trigger", "recheck"]

Stage = Literal["delay", "webhook", "sound", "requesting"]
STAGES: tuple[Stage, ...] = ("delay", "webhook", "sound", "requesting")


@dataclass(frozen=True, slots=True)
class Skip:
    message: str  # "Skipped Sleep because ..."


@dataclass(frozen=True, slots=True)
class KeepPending:
    """A cancel path (watched-process exit, orphan cleanup) keeps the suspend already scheduled."""


@dataclass(frozen=True, slots=True)
class Schedule:
    deadline: datetime
    message: str


def may_trigger_suspend(event: policy.Event) -> bool:
    """Events whose outcome can carry ``EvaluateSuspend``: read the machine afresh before them."""
    return isinstance(event, policy.Stop | policy.MarkSoftLocked | policy.RemoveSessions | policy.TimeoutCheck)


def delay_seconds_for(trigger: policy.EvaluateSuspend, *, delay_seconds: int, repeat_follow_up: bool) -> int:
    """A continued Stop with RepeatClosedLidStopFollowUp off is an immediate attempt (no second wait)."""
    if trigger.stop_hook_active and not repeat_follow_up:
        return 0
    return max(0, delay_seconds)


def notifies(trigger: policy.EvaluateSuspend) -> bool:
    """Whether a suspend scheduled by this trigger sends PreSuspend (never from a cancel path)."""
    return not trigger.cancel_path


def on_trigger(trigger: policy.EvaluateSuspend, *, mode: str, eligibility: Eligibility, pending: bool,
               delay_seconds: int, now: datetime) -> Skip | KeepPending | Schedule:
    if not eligibility.eligible:
        return Skip(f"Skipped {mode} because {eligibility.why_not}")
    if pending and trigger.cancel_path:
        return KeepPending()
    when = "immediately" if delay_seconds <= 0 else f"in {delay_seconds} second(s)"
    why = ("the last session stopped" if trigger.reason == "Completed"
           else "all remaining sessions are soft-locked")
    message = (f"Scheduled {mode} {when} because the lid is closed, no suspend-blocking visible display "
               f"monitors remain, and {why}.")
    return Schedule(now + timedelta(seconds=max(0, delay_seconds)), message)


@dataclass(frozen=True, slots=True)
class Recheck:
    proceed: bool
    message: str = ""  # why it was canceled; empty when it was already gone (nothing to log)


def recheck(*, is_current: bool, protection_wanted: bool, eligibility: Eligibility) -> Recheck:
    """Before a slow stage: still the pending suspend, nobody works again, lid closed with no display."""
    if not is_current:
        return Recheck(False)
    if protection_wanted:
        return Recheck(False, "Skipped pending suspend because a session became active before suspend ran.")
    if not eligibility.eligible:
        return Recheck(False, f"Skipped pending suspend because {eligibility.why_not}")
    return Recheck(True)


def next_stage(stage: Stage, *, has_webhook: bool = False, has_sound: bool) -> Stage:
    order = STAGES.index(stage)
    if stage == "requesting":
        raise ValueError("the requesting stage is the last one")
    for candidate in STAGES[order + 1:]:
        if candidate == "webhook" and not has_webhook:
            continue
        if candidate == "sound" and not has_sound:
            continue
        return candidate
    return "requesting"
