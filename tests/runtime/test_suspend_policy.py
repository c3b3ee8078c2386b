"""The pending suspend's decisions (``suspend_policy``), pure like ``policy.transition``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lidguard.platform.api import DisplayConnector, LidState
from lidguard.runtime import policy, suspend_policy
from lidguard.runtime.eligibility import closed_lid_eligibility
from lidguard.runtime.sessions import AgentProvider, SessionKey
from lidguard.runtime.suspend_policy import KeepPending, Schedule, Skip

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
KEY = SessionKey.create(AgentProvider.CLAUDE, "s1")
ELIGIBLE = closed_lid_eligibility(LidState.CLOSED, [DisplayConnector("eDP-1", True)])
LID_OPEN = closed_lid_eligibility(LidState.OPEN, [])
EXTERNAL = closed_lid_eligibility(LidState.CLOSED, [DisplayConnector("HDMI-A-1", False)])


def trigger(reason: str = "Completed", *, cancel_path: bool = False) -> policy.EvaluateSuspend:
    return policy.EvaluateSuspend(reason, "stop", None, 0, cancel_path)


def decide(event: policy.EvaluateSuspend | None = None, **changes):
    arguments = {"mode": "Sleep", "eligibility": ELIGIBLE, "pending": False, "delay_seconds": 10, "now": T0,
                 **changes}
    return suspend_policy.on_trigger(event or trigger(), **arguments)


def test_eligible_trigger_schedules_at_the_wall_clock_deadline():
    decision = decide()
    assert isinstance(decision, Schedule) and decision.deadline == T0 + timedelta(seconds=10)
    assert decision.message.startswith("Scheduled Sleep in 10 second(s) because the lid is closed")
    assert decision.message.endswith("the last session stopped.")


def test_zero_delay_is_immediately_and_soft_locked_reason_is_named():
    decision = decide(trigger("SoftLocked"), delay_seconds=0)
    assert isinstance(decision, Schedule) and decision.deadline == T0
    assert "immediately" in decision.message and "all remaining sessions are soft-locked" in decision.message


@pytest.mark.parametrize("eligibility, why", [(LID_OPEN, "the lid is open."),
                                              (EXTERNAL, "1 visible display monitor(s) are active")])
def test_not_eligible_is_skipped_with_the_reason(eligibility, why):
    decision = decide(eligibility=eligibility, mode="Hibernate")
    assert isinstance(decision, Skip) and decision.message.startswith("Skipped Hibernate because ")
    assert why in decision.message


def test_a_cancel_path_keeps_the_suspend_already_pending_but_a_stop_replaces_it():
    assert isinstance(decide(trigger(cancel_path=True), pending=True), KeepPending)
    assert isinstance(decide(pending=True), Schedule)
    assert isinstance(decide(trigger(cancel_path=True), pending=False), Schedule)


def test_not_eligible_wins_over_keeping_a_pending_suspend():
    assert isinstance(decide(trigger(cancel_path=True), pending=True, eligibility=LID_OPEN), Skip)


def test_recheck():
    assert suspend_policy.recheck(is_current=True, protection_wanted=False, eligibility=ELIGIBLE).proceed
    gone = suspend_policy.recheck(is_current=False, protection_wanted=False, eligibility=ELIGIBLE)
    assert not gone.proceed and gone.message == ""
    active = suspend_policy.recheck(is_current=True, protection_wanted=True, eligibility=ELIGIBLE)
    assert not active.proceed and "a session became active" in active.message
    opened = suspend_policy.recheck(is_current=True, protection_wanted=False, eligibility=LID_OPEN)
    assert opened.message == "Skipped pending suspend because the lid is open."


def test_stages_run_delay_sound_requesting():
    assert suspend_policy.next_stage("delay", has_sound=True) == "sound"
    assert suspend_policy.next_stage("delay", has_sound=False) == "requesting"
    assert suspend_policy.next_stage("sound", has_sound=True) == "requesting"
    with pytest.raises(ValueError):
        suspend_policy.next_stage("requesting", has_sound=False)


@pytest.mark.parametrize("event, expected", [
    (policy.Stop(KEY), True), (policy.MarkSoftLocked(KEY, "x"), True), (policy.RemoveSessions(match_all=True), True),
    (policy.TimeoutCheck(12), True), (policy.Start(KEY), False), (policy.MarkActive(KEY), False),
])
def test_events_that_may_schedule_a_suspend_read_the_machine_afresh(event, expected):
    assert suspend_policy.may_trigger_suspend(event) is expected
