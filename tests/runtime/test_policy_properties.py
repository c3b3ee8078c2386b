"""Property tests over random event sequences (hypothesis)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from lidguard.runtime.policy import (
    EvaluateSuspend,
    MarkActive,
    MarkSoftLocked,
    RemoveSessions,
    SessionEnded,
    Start,
    Stop,
    TimeoutCheck,
    transition,
)
from lidguard.runtime.sessions import AgentProvider, RegistryState, SessionKey

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
KEYS = [SessionKey.create(AgentProvider.CLAUDE, "a"), SessionKey.create(AgentProvider.CODEX, "a"),
        SessionKey.create(AgentProvider.MCP, "a", "p1"), SessionKey.create(AgentProvider.MCP, "a", "p2"),
        SessionKey.create(AgentProvider.GITHUB_COPILOT, "b")]

keys = st.sampled_from(KEYS)
events = st.one_of(
    st.builds(Start, keys, st.one_of(st.none(), st.integers(1, 5))),
    st.builds(Stop, keys, st.booleans(), st.just(""), st.booleans(), st.booleans()),
    st.builds(MarkActive, keys, st.sampled_from(["PreToolUse:Bash", "x"])),
    st.builds(MarkSoftLocked, keys, st.sampled_from(["permission_prompt", "elicitation_dialog"])),
    st.builds(RemoveSessions, st.sampled_from(["a", "b"]), st.one_of(st.none(), st.sampled_from(list(AgentProvider)))),
    st.builds(TimeoutCheck, st.sampled_from([None, 1, 12])),
)
steps = st.lists(st.tuples(st.integers(0, 30), events), max_size=40)


def _replay(sequence):
    state = RegistryState()
    now = T0
    for minutes, event in sequence:
        now = now + timedelta(minutes=minutes)
        before = state
        outcome = transition(state, event, now)
        state = outcome.state
        yield before, event, outcome, now


@settings(max_examples=300, deadline=None)
@given(steps)
def test_protection_is_wanted_exactly_when_some_session_is_not_soft_locked(sequence):
    for _, _, outcome, _ in _replay(sequence):
        state = outcome.state
        assert state.protection_wanted == any(not s.soft_locked for s in state.sessions.values())
        assert state.suspend_eligible == (not state.protection_wanted)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_no_event_order_double_counts_or_resurrects_a_stopped_session(sequence):
    for before, event, outcome, _ in _replay(sequence):
        after = outcome.state
        # keys are unique by construction of the mapping; count never jumps by more than one on start
        if isinstance(event, Start):
            assert len(after.sessions) - len(before.sessions) in (0, 1)
        elif not isinstance(event, Start):
            # only a start can bring a session (back) into the registry
            assert set(after.sessions) <= set(before.sessions)
        ended = [effect for effect in outcome.effects if isinstance(effect, SessionEnded)]
        if isinstance(event, Stop) and event.key not in before.sessions:
            assert not ended  # the first cleanup signal is authoritative; later ones are harmless
        assert len(ended) <= 1


@settings(max_examples=200, deadline=None)
@given(steps)
def test_suspend_is_evaluated_only_when_nobody_wants_protection(sequence):
    for _, _, outcome, _ in _replay(sequence):
        if any(isinstance(effect, EvaluateSuspend) for effect in outcome.effects):
            assert not outcome.state.protection_wanted


@settings(max_examples=200, deadline=None)
@given(steps)
def test_soft_lock_never_moves_last_activity(sequence):
    for before, event, outcome, _ in _replay(sequence):
        if isinstance(event, (MarkSoftLocked, TimeoutCheck)):
            for key, session in outcome.state.sessions.items():
                if key in before.sessions:
                    assert session.last_activity_at == before.sessions[key].last_activity_at
