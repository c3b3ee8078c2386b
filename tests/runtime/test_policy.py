"""Every rule of seed 000 "Active Session Policy" and REFERENCE section 4, one test each."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from lidguard.runtime import policy
from lidguard.runtime.policy import (
    CancelPendingSuspend,
    EvaluateSuspend,
    LogEvent,
    MarkActive,
    MarkSoftLocked,
    RemoveSessions,
    SessionEnded,
    Start,
    Stop,
    TimeoutCheck,
    UnwatchProcess,
    WatchProcess,
    next_timeout_deadline,
    transition,
)
from lidguard.runtime.sessions import AgentProvider, RegistryState, SessionKey

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
CLAUDE = SessionKey.create(AgentProvider.CLAUDE, "s1")
CODEX = SessionKey.create(AgentProvider.CODEX, "s2")


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def run(events, state: RegistryState | None = None):
    state = state or RegistryState()
    outcome = None
    for moment, event in events:
        outcome = transition(state, event, moment)
        state = outcome.state
    return state, outcome


def effects_of(outcome, kind):
    return [effect for effect in outcome.effects if isinstance(effect, kind)]


def log_names(outcome):
    return [effect.event_name for effect in effects_of(outcome, LogEvent)]


def test_session_key_keeps_provider_name_only_for_mcp():
    assert SessionKey.create(AgentProvider.CLAUDE, "x", "name").provider_name == ""
    mcp = SessionKey.create(AgentProvider.MCP, "x", "  agent-a ")
    assert mcp.provider_name == "agent-a"
    assert str(mcp) == "Mcp:agent-a:x"


def test_mcp_sessions_with_the_same_id_but_other_provider_names_do_not_collide():
    first = SessionKey.create(AgentProvider.MCP, "abc", "one")
    second = SessionKey.create(AgentProvider.MCP, "abc", "two")
    state, _ = run([(at(0), Start(first)), (at(0), Start(second))])
    assert len(state.sessions) == 2


def test_session_identifier_is_case_sensitive():
    state, _ = run([(at(0), Start(SessionKey.create(AgentProvider.CLAUDE, "A"))),
                    (at(0), Start(SessionKey.create(AgentProvider.CLAUDE, "a")))])
    assert len(state.sessions) == 2


def test_blank_session_identifier_is_rejected():
    outcome = transition(RegistryState(), Start(SessionKey.create(AgentProvider.CLAUDE, "  ")), at(0))
    assert not outcome.succeeded
    assert outcome.message == "A session identifier is required."


def test_start_sets_times_and_wants_protection():
    state, outcome = run([(at(0), Start(CLAUDE, working_directory="/w"))])
    session = state.sessions[CLAUDE]
    assert session.started_at == session.last_activity_at == at(0)
    assert state.protection_wanted
    assert effects_of(outcome, CancelPendingSuspend)
    assert "No watched process was resolved" in outcome.message


def test_restart_replaces_the_record_and_clears_the_soft_lock():
    state, _ = run([(at(0), Start(CLAUDE)), (at(1), MarkSoftLocked(CLAUDE, "permission_prompt")),
                    (at(2), Start(CLAUDE))])
    session = state.sessions[CLAUDE]
    assert not session.soft_locked
    assert session.started_at == at(2)


def test_a_start_if_not_running_is_a_running_sessions_activity_in_the_same_turn():
    """An agent with tool events only (Crush): its first tool call starts, the next ones renew that turn."""
    first = Start(CLAUDE, watched_process_identifier=4242, if_not_running=True, reason="PreToolUse:bash")
    state, _ = run([(at(0), first)])
    started = state.sessions[CLAUDE]
    state, outcome = run([(at(5), Start(CLAUDE, watched_process_identifier=4242, if_not_running=True,
                                        reason="PreToolUse:view"))], state)
    session = state.sessions[CLAUDE]
    assert (session.started_at, session.turn_id, session.turn_started_at) == (
        started.started_at, started.turn_id, started.turn_started_at)
    assert session.last_activity_at == session.lease_renewed_at == at(5)
    assert log_names(outcome) == ["session-activity-recorded"] and effects_of(outcome, CancelPendingSuspend)
    assert outcome.message == f"Session {CLAUDE} was already active."
    assert not effects_of(outcome, WatchProcess) and not effects_of(outcome, UnwatchProcess)


def test_a_start_if_not_running_starts_a_new_turn_after_a_soft_lock_or_in_another_process():
    first = Start(CLAUDE, watched_process_identifier=4242, if_not_running=True)
    timed_out, _ = run([(at(0), first), (at(13), TimeoutCheck(12))])
    assert timed_out.sessions[CLAUDE].soft_locked
    state, outcome = run([(at(14), first)], timed_out)
    assert state.sessions[CLAUDE].started_at == at(14) and not state.sessions[CLAUDE].soft_locked
    assert log_names(outcome)[-1] == "session-started"
    running, _ = run([(at(0), first)])
    state, outcome = run([(at(1), Start(CLAUDE, watched_process_identifier=7, if_not_running=True))], running)
    assert state.sessions[CLAUDE].started_at == at(1) and effects_of(outcome, WatchProcess)
    state, _ = run([(at(1), Start(CLAUDE, watched_process_identifier=4242))], running)  # without it: a new turn
    assert state.sessions[CLAUDE].started_at == at(1)


def test_restart_preserves_the_watched_process_when_none_is_supplied():
    state, outcome = run([(at(0), Start(CLAUDE, watched_process_identifier=4242)), (at(1), Start(CLAUDE))])
    assert state.sessions[CLAUDE].watched_process_identifier == 4242
    assert not effects_of(outcome, UnwatchProcess)
    assert not effects_of(outcome, WatchProcess)


def test_restart_does_not_preserve_the_watched_process_when_watching_is_off():
    state, _ = run([(at(0), Start(CLAUDE, watched_process_identifier=4242)),
                    (at(1), Start(CLAUDE, watch_parent_process=False))])
    assert state.sessions[CLAUDE].watched_process_identifier is None


def test_restart_with_a_new_process_switches_the_watch():
    _, outcome = run([(at(0), Start(CLAUDE, watched_process_identifier=1)),
                      (at(1), Start(CLAUDE, watched_process_identifier=2))])
    assert effects_of(outcome, UnwatchProcess) == [UnwatchProcess(CLAUDE)]
    assert effects_of(outcome, WatchProcess) == [WatchProcess(CLAUDE, 2)]


def test_stop_removes_the_session_and_evaluates_suspend_as_completed():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE, provider_session_end=True))])
    assert not state.sessions
    [evaluate] = effects_of(outcome, EvaluateSuspend)
    assert evaluate.reason == "Completed"
    assert effects_of(outcome, SessionEnded)[0].stop.provider_session_end


def test_second_stop_is_harmless():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE)), (at(2), Stop(CLAUDE))])
    assert outcome.succeeded
    assert outcome.message == "Session Claude:s1 is already stopped."
    assert log_names(outcome) == ["session-stopped-already-stopped"]
    assert not effects_of(outcome, SessionEnded)
    assert not effects_of(outcome, EvaluateSuspend)


def test_stop_while_another_session_works_does_not_evaluate_suspend():
    _, outcome = run([(at(0), Start(CLAUDE)), (at(0), Start(CODEX)), (at(1), Stop(CLAUDE))])
    assert not effects_of(outcome, EvaluateSuspend)


def test_stop_leaving_only_soft_locked_sessions_evaluates_soft_locked():
    _, outcome = run([(at(0), Start(CLAUDE)), (at(0), Start(CODEX)),
                      (at(1), MarkSoftLocked(CODEX, "permission_prompt")), (at(2), Stop(CLAUDE))])
    [evaluate] = effects_of(outcome, EvaluateSuspend)
    assert evaluate.reason == "SoftLocked"
    assert evaluate.soft_locked_session_count == 1


def test_cancel_path_stop_is_marked_on_the_suspend_evaluation():
    _, outcome = run([(at(0), Start(CLAUDE, watched_process_identifier=7)),
                      (at(1), Stop(CLAUDE, cancel_path=True, command="watched-process-exited"))])
    [evaluate] = effects_of(outcome, EvaluateSuspend)
    assert evaluate.cancel_path
    assert effects_of(outcome, UnwatchProcess)


def test_activity_refreshes_last_activity_and_clears_soft_lock():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(1), MarkSoftLocked(CLAUDE, "permission_prompt")),
                          (at(3), MarkActive(CLAUDE, "PostToolUse:Bash"))])
    session = state.sessions[CLAUDE]
    assert session.last_activity_at == at(3)
    assert not session.soft_locked
    assert "Cleared soft-lock" in outcome.message
    assert effects_of(outcome, CancelPendingSuspend)


def test_activity_for_an_unknown_session_is_ignored():
    state, outcome = run([(at(0), MarkActive(CLAUDE, "x"))])
    assert not state.sessions
    assert outcome.succeeded and "ignored activity signal" in outcome.message


def test_soft_lock_does_not_refresh_last_activity():
    state, _ = run([(at(0), Start(CLAUDE)), (at(5), MarkSoftLocked(CLAUDE, "permission_prompt"))])
    session = state.sessions[CLAUDE]
    assert session.last_activity_at == at(0)
    assert session.soft_locked_at == at(5)
    assert session.soft_lock_reason == "permission_prompt"


def test_same_soft_lock_reason_twice_changes_nothing():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(1), MarkSoftLocked(CLAUDE, "permission_prompt")),
                          (at(2), MarkSoftLocked(CLAUDE, "permission_prompt"))])
    assert state.sessions[CLAUDE].soft_locked_at == at(1)
    assert "already soft-locked" in outcome.message


def test_other_soft_lock_reason_updates_reason_and_time():
    state, _ = run([(at(0), Start(CLAUDE)), (at(1), MarkSoftLocked(CLAUDE, "permission_prompt")),
                    (at(2), MarkSoftLocked(CLAUDE, "closed_lid_permission_request_ask"))])
    session = state.sessions[CLAUDE]
    assert session.soft_lock_reason == "closed_lid_permission_request_ask"
    assert session.soft_locked_at == at(2)


def test_all_sessions_soft_locked_is_suspend_eligible_before_any_stop():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(0), Start(CODEX)),
                          (at(1), MarkSoftLocked(CLAUDE, "a")), (at(2), MarkSoftLocked(CODEX, "b"))])
    assert state.suspend_eligible and not state.protection_wanted
    [evaluate] = effects_of(outcome, EvaluateSuspend)
    assert evaluate.reason == "SoftLocked" and evaluate.soft_locked_session_count == 2


def test_soft_lock_of_one_of_two_working_sessions_keeps_protection():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(0), Start(CODEX)), (at(1), MarkSoftLocked(CLAUDE, "a"))])
    assert state.protection_wanted
    assert not effects_of(outcome, EvaluateSuspend)


def test_timeout_soft_locks_inactive_sessions_with_the_reason():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(12), TimeoutCheck(12))])
    session = state.sessions[CLAUDE]
    assert session.soft_lock_reason == "session-timeout-expired:12 minutes"
    assert session.last_activity_at == at(0)
    assert "session-timeout-softlock-recorded" in log_names(outcome)
    assert effects_of(outcome, EvaluateSuspend)[0].command == "session-timeout"


def test_timeout_leaves_recently_active_sessions_alone():
    state, _ = run([(at(0), Start(CLAUDE)), (at(11), MarkActive(CLAUDE, "x")), (at(12), TimeoutCheck(12))])
    assert not state.sessions[CLAUDE].soft_locked


def test_timeout_deadline_is_the_earliest_non_soft_locked_activity():
    state, _ = run([(at(0), Start(CLAUDE)), (at(5), Start(CODEX))])
    assert next_timeout_deadline(state, 12) == at(12)
    state, _ = run([(at(6), MarkSoftLocked(CLAUDE, "x"))], state)
    assert next_timeout_deadline(state, 12) == at(17)


def test_timeout_off_disables_the_timer_and_abandonment():
    state, _ = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE, pending_provider_work=True))])
    assert next_timeout_deadline(state, None) is None
    state, outcome = run([(at(600), TimeoutCheck(None))], state)
    assert state.sessions[CLAUDE].pending_provider_work
    assert not outcome.effects


def test_deferred_stop_keeps_the_session_and_refreshes_activity():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(4), Stop(CLAUDE, pending_provider_work=True))])
    session = state.sessions[CLAUDE]
    assert session.pending_provider_work
    assert session.last_activity_at == at(4)
    assert not effects_of(outcome, SessionEnded)


def test_pending_work_is_not_an_unconditional_timeout_exemption():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE, pending_provider_work=True)),
                          (at(13), TimeoutCheck(12))])
    session = state.sessions[CLAUDE]
    assert not session.pending_provider_work
    assert session.soft_lock_reason == "session-timeout-expired:12 minutes"
    assert log_names(outcome)[:2] == ["session-pending-provider-work-abandoned", "session-timeout-softlock-recorded"]


def test_soft_locked_session_with_pending_work_stays_in_the_timer():
    state, _ = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE, pending_provider_work=True)),
                    (at(2), MarkSoftLocked(CLAUDE, "permission_prompt"))])
    assert next_timeout_deadline(state, 12) == at(13)
    state, outcome = run([(at(13), TimeoutCheck(12))], state)
    session = state.sessions[CLAUDE]
    assert not session.pending_provider_work
    assert session.soft_lock_reason == "permission_prompt"
    assert log_names(outcome) == ["session-pending-provider-work-abandoned"]


def test_abandoning_pending_work_keeps_the_abandoned_tools_out_of_flight():
    """Issue 32 item 8: an idle running tool and pending work abandoned in one check: the session left has
    neither (the pending-work branch once rebuilt it from the original, so the tool stayed in flight)."""
    state, outcome = run([(at(0), Start(CLAUDE)),
                          (at(0), MarkActive(CLAUDE, "PreToolUse:Bash", tool_call_id="toolu_1", tool_state="Running")),
                          (at(1), Stop(CLAUDE, pending_provider_work=True)),
                          (at(13), TimeoutCheck(12, {CLAUDE: None}))])
    session = state.sessions[CLAUDE]
    assert session.tools_in_flight == () and session.tool_cpu_seconds is None
    assert not session.pending_provider_work and session.soft_locked
    assert log_names(outcome)[:2] == ["session-running-tool-abandoned", "session-pending-provider-work-abandoned"]


def test_activity_after_abandonment_resumes_the_session():
    state, _ = run([(at(0), Start(CLAUDE)), (at(1), Stop(CLAUDE, pending_provider_work=True)),
                    (at(13), TimeoutCheck(12)), (at(14), MarkActive(CLAUDE, "PostToolUse:Bash"))])
    assert not state.sessions[CLAUDE].soft_locked
    assert state.protection_wanted


def test_remove_by_id_matches_every_provider_and_never_ends_normally():
    state, outcome = run([(at(0), Start(SessionKey.create(AgentProvider.CLAUDE, "x"))),
                          (at(0), Start(SessionKey.create(AgentProvider.CODEX, "x"))),
                          (at(0), Start(SessionKey.create(AgentProvider.CODEX, "y"))),
                          (at(1), RemoveSessions("x"))])
    assert [key.session_identifier for key in state.sessions] == ["y"]
    assert len(outcome.removed) == 2
    assert not effects_of(outcome, SessionEnded)


def test_remove_with_provider_and_mcp_name_filters():
    one = SessionKey.create(AgentProvider.MCP, "x", "one")
    two = SessionKey.create(AgentProvider.MCP, "x", "two")
    state, _ = run([(at(0), Start(one)), (at(0), Start(two)),
                    (at(1), RemoveSessions("x", AgentProvider.MCP, "two"))])
    assert list(state.sessions) == [one]
    state, _ = run([(at(2), RemoveSessions("x", AgentProvider.MCP))], state)
    assert not state.sessions


def test_remove_all_sessions():
    state, outcome = run([(at(0), Start(CLAUDE)), (at(0), Start(CODEX)), (at(1), RemoveSessions(match_all=True))])
    assert not state.sessions
    assert effects_of(outcome, EvaluateSuspend)[0].reason == "Completed"


def test_transition_rejects_unknown_events():
    import pytest

    with pytest.raises(TypeError):
        policy.transition(RegistryState(), object(), at(0))  # type: ignore[arg-type]
