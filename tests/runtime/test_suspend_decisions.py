"""The pure decisions of the suspend flow and the webhooks: stage order, delay, who notifies, bodies."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lidguard.runtime import policy, suspend_policy
from lidguard.runtime.components.webhooks import (
    failure_message,
    post_session_end_body,
    pre_suspend_body,
    session_end_fields,
    wants_post_session_end,
)
from lidguard.runtime.sessions import AgentProvider, RegistryState, SessionKey

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
CLAUDE = SessionKey.create(AgentProvider.CLAUDE, "s1")
MCP = SessionKey.create(AgentProvider.MCP, "m1", " tool ")


@pytest.mark.parametrize("has_webhook, has_sound, expected", [
    (False, False, ["delay", "requesting"]),
    (True, False, ["delay", "webhook", "requesting"]),
    (False, True, ["delay", "sound", "requesting"]),
    (True, True, ["delay", "webhook", "sound", "requesting"]),
])
def test_stages_follow_the_seed_order(has_webhook, has_sound, expected):
    stages: list[suspend_policy.Stage] = ["delay"]
    while stages[-1] != "requesting":
        stages.append(suspend_policy.next_stage(stages[-1], has_webhook=has_webhook, has_sound=has_sound))
    assert stages == expected
    with pytest.raises(ValueError):
        suspend_policy.next_stage("requesting", has_sound=True)


def _stop_outcome(stop: policy.Stop, *others: SessionKey) -> policy.Outcome:
    state = RegistryState()
    for key in (CLAUDE, *others):
        state = policy.transition(state, policy.Start(key, working_directory="/w"), T0).state
    return policy.transition(state, stop, T0 + timedelta(seconds=30))


def _effects(outcome: policy.Outcome, kind: type) -> list:
    return [effect for effect in outcome.effects if isinstance(effect, kind)]


def test_a_normal_end_that_evaluates_a_suspend_hands_its_notification_to_the_suspend_path():
    outcome = _stop_outcome(policy.Stop(CLAUDE, provider_session_end=True, end_reason="Stop",
                                        last_assistant_message="bye", stop_hook_active=True))
    [ended] = _effects(outcome, policy.SessionEnded)
    [evaluate] = _effects(outcome, policy.EvaluateSuspend)
    assert ended.handed_to_suspend and not wants_post_session_end(ended)
    assert evaluate.ended == ended and evaluate.stop_hook_active
    assert ended.ended_at == T0 + timedelta(seconds=30) and ended.active_session_count == 0


def test_a_normal_end_while_others_keep_protection_notifies_post_session_end():
    other = SessionKey.create(AgentProvider.CODEX, "s2")
    outcome = _stop_outcome(policy.Stop(CLAUDE, provider_session_end=True), other)
    [ended] = _effects(outcome, policy.SessionEnded)
    assert not _effects(outcome, policy.EvaluateSuspend)
    assert wants_post_session_end(ended) and ended.active_session_count == 1


@pytest.mark.parametrize("stop", [
    policy.Stop(CLAUDE),  # manual stop
    policy.Stop(CLAUDE, provider_session_end=True, cancel_path=True, command="watched-process-exited"),
    policy.Stop(CLAUDE, provider_session_end=False, end_reason="interrupt"),
])
def test_manual_stops_and_cancel_paths_never_notify(stop):
    other = SessionKey.create(AgentProvider.CODEX, "s2")
    for outcome in (_stop_outcome(stop), _stop_outcome(stop, other)):
        [ended] = _effects(outcome, policy.SessionEnded)
        assert not wants_post_session_end(ended)
        assert all(evaluate.ended is None for evaluate in _effects(outcome, policy.EvaluateSuspend))


def test_cancel_paths_never_send_pre_suspend_and_a_continued_stop_skips_the_delay_only_with_repeat_off():
    cancel = policy.EvaluateSuspend("Completed", "watched-process-exited", None, 0, cancel_path=True)
    normal = policy.EvaluateSuspend("Completed", "stop", None, 0)
    continued = policy.EvaluateSuspend("Completed", "stop", None, 0, stop_hook_active=True)
    assert not suspend_policy.notifies(cancel) and suspend_policy.notifies(normal)
    assert suspend_policy.delay_seconds_for(continued, delay_seconds=10, repeat_follow_up=False) == 0
    assert suspend_policy.delay_seconds_for(continued, delay_seconds=10, repeat_follow_up=True) == 10
    assert suspend_policy.delay_seconds_for(normal, delay_seconds=10, repeat_follow_up=False) == 10


def test_bodies_are_camel_case_with_empty_fields_omitted():
    outcome = _stop_outcome(policy.Stop(MCP, provider_session_end=True, input_prompt_preview="hi"), MCP)
    [ended] = _effects(outcome, policy.SessionEnded)
    fields = session_end_fields(ended, prompt_preview="from start")
    assert fields == {
        "provider": "Mcp", "providerName": "tool", "sessionIdentifier": "m1",
        "startedAtUtc": "2026-01-02T03:04:05Z", "lastActivityAtUtc": "2026-01-02T03:04:05Z",
        "endedAtUtc": "2026-01-02T03:04:35Z", "endReason": "stop", "activeSessionCount": 1,
        "workingDirectory": "/w", "inputPromptPreview": "hi",
    }
    assert post_session_end_body(fields)["eventType"] == "PostSessionEnd"
    assert pre_suspend_body("SoftLocked", soft_locked_session_count=3) == {
        "eventType": "PreSuspend", "reason": "SoftLocked", "softLockedSessionCount": 3}
    assert pre_suspend_body("EmergencyHibernation", soft_locked_session_count=0) == {
        "eventType": "PreSuspend", "reason": "EmergencyHibernation"}
    body = pre_suspend_body("Completed", session_end=fields)
    assert body["eventType"] == "PreSuspend" and body["sessionIdentifier"] == "m1"


def test_failure_messages_follow_the_reference_wording():
    assert failure_message("PreSuspend", status=404, reason_phrase="Not Found") == (
        "The PreSuspend webhook returned 404 (Not Found).")
    assert failure_message("PostSessionEnd", timed_out=True) == "The PostSessionEnd webhook request timed out."
