"""Property tests of the session policy against an independent model (hypothesis).

``Model`` below restates REFERENCE section 4 (and the seed's deltas) with plain dicts: it shares no
code with ``runtime/policy.py`` or ``RegistryState``. Every random event sequence is replayed through
both; after each event the policy's registry must equal the model's, field by field, and the effects
must be the ones the rules demand (suspend evaluation exactly when protection stops being wanted or a
stop ends a session, one SessionEnded per real stop, a watcher ledger built from Watch/Unwatch effects
that always matches the sessions' watched processes, no session overdue after a timeout check).
A real bug in the policy (a soft-lock that refreshes activity, a stop that resurrects, a leaked
watcher, a missed suspend evaluation, a timeout that skips pending work) breaks one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lidguard.runtime.policy import (
    CancelPendingSuspend,
    EvaluateSuspend,
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

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
KEYS = [SessionKey.create(AgentProvider.CLAUDE, "a"), SessionKey.create(AgentProvider.CODEX, "a"),
        SessionKey.create(AgentProvider.MCP, "a", "p1"), SessionKey.create(AgentProvider.MCP, "a", "p2"),
        SessionKey.create(AgentProvider.GITHUB_COPILOT, "b"), SessionKey.create(AgentProvider.CLAUDE, "A"),
        SessionKey.create(AgentProvider.CLAUDE, "  ")]
SOFT_LOCK_REASONS = ["permission_prompt", "elicitation_dialog", " permission_prompt ", "", "   "]


# -- the model ----------------------------------------------------------------------------------
@dataclass
class Record:
    started: datetime
    last_activity: datetime
    soft_lock_reason: str | None
    soft_locked_at: datetime | None
    watched: int | None
    pending_work: bool


class Model:
    """REFERENCE 4.1-4.4, written independently of the policy module."""

    def __init__(self) -> None:
        self.records: dict[tuple[str, str, str], Record] = {}

    @staticmethod
    def key_of(key: SessionKey) -> tuple[str, str, str]:
        name = key.provider_name if key.provider is AgentProvider.MCP else ""
        return (str(key.provider.value), name, key.session_identifier)

    def wants_protection(self) -> bool:
        return any(record.soft_lock_reason is None for record in self.records.values())

    def apply(self, event: object, now: datetime) -> dict[str, object]:
        """Applies ``event``; returns what happened (for the effect checks)."""
        if isinstance(event, Start):
            if not event.key.session_identifier.strip():
                return {"failed": True}
            key = self.key_of(event.key)
            existing = self.records.get(key)
            explicit = event.watched_process_identifier or None
            watched = explicit
            if explicit is None and existing is not None and event.watch_parent_process:
                watched = existing.watched  # the seed's delta: a start without a pid keeps the watch
            self.records[key] = Record(now, now, None, None, watched, False)
            return {"started": True}
        if isinstance(event, Stop):
            key = self.key_of(event.key)
            existing = self.records.get(key)
            if existing is None:
                return {}
            if event.pending_provider_work:
                existing.pending_work = True
                existing.last_activity = now  # a deferred stop refreshes activity
                return {}
            del self.records[key]
            return {"ended": 1}
        if isinstance(event, MarkActive):
            record = self.records.get(self.key_of(event.key))
            if record is not None:
                record.last_activity = now
                record.soft_lock_reason = record.soft_locked_at = None
                return {"active": True}
            return {}
        if isinstance(event, MarkSoftLocked):
            record = self.records.get(self.key_of(event.key))
            reason = event.reason.strip() or "soft-locked"
            if record is not None and record.soft_lock_reason != reason:
                record.soft_lock_reason, record.soft_locked_at = reason, now  # activity untouched
            return {}
        if isinstance(event, RemoveSessions):
            if not event.match_all and not (event.session_identifier or "").strip():
                return {"failed": True}
            doomed = [key for key in self.records if event.match_all or (
                key[2] == event.session_identifier
                and (event.provider is None or key[0] == event.provider.value)
                and (event.provider is not AgentProvider.MCP or not event.provider_name
                     or key[1] == event.provider_name.strip()))]
            for key in doomed:
                del self.records[key]
            return {"removed": len(doomed)}
        if isinstance(event, TimeoutCheck):
            if event.timeout_minutes is None:
                return {}
            limit = timedelta(minutes=event.timeout_minutes)
            for record in self.records.values():
                in_timer = record.soft_lock_reason is None or record.pending_work
                if in_timer and now - record.last_activity >= limit:
                    record.pending_work = False  # abandoned
                    if record.soft_lock_reason is None:
                        record.soft_lock_reason = f"session-timeout-expired:{event.timeout_minutes} minutes"
                        record.soft_locked_at = now
            return {}
        raise AssertionError(f"unknown event {event!r}")


def registry_as_model(state: RegistryState) -> dict[tuple[str, str, str], Record]:
    return {Model.key_of(key): Record(session.started_at, session.last_activity_at, session.soft_lock_reason,
                                      session.soft_locked_at, session.watched_process_identifier,
                                      session.pending_provider_work)
            for key, session in state.sessions.items()}


# -- event strategies -----------------------------------------------------------------------------
# Half the draws from three keys, so that sequences often revisit the same session.
keys = st.one_of(st.sampled_from(KEYS[:3]), st.sampled_from(KEYS))
events = st.one_of(
    st.builds(Start, keys, st.one_of(st.none(), st.integers(1, 5)), watch_parent_process=st.booleans()),
    st.builds(Stop, keys, st.booleans(), st.just(""), st.booleans(), st.booleans()),
    st.builds(MarkActive, keys, st.sampled_from(["PreToolUse:Bash", "x"])),
    st.builds(MarkSoftLocked, keys, st.sampled_from(SOFT_LOCK_REASONS)),
    st.builds(RemoveSessions, st.sampled_from(["a", "b", "A", "", None]),
              st.one_of(st.none(), st.sampled_from(list(AgentProvider))),
              st.sampled_from([None, "", "p1", " p2 "]), st.booleans()),
    st.builds(TimeoutCheck, st.sampled_from([None, 1, 12])),
)
steps = st.lists(st.tuples(st.integers(0, 30), events), max_size=40)

CLAUDE_A, CODEX_A = KEYS[0], KEYS[1]
# Scenarios every run checks first (hypothesis may not draw them in a given run).
SCENARIOS = [
    # the last session soft-locks, then stops: the stop is a suspend trigger of its own
    [(0, Start(CLAUDE_A)), (1, MarkSoftLocked(CLAUDE_A, "permission_prompt")), (1, Stop(CLAUDE_A))],
    # a deferred stop refreshes activity; pending work is abandoned by the timeout even when soft-locked
    [(0, Start(CLAUDE_A)), (5, Stop(CLAUDE_A, pending_provider_work=True)),
     (0, MarkSoftLocked(CLAUDE_A, "x")), (12, TimeoutCheck(12)), (1, TimeoutCheck(12))],
    # a start without a pid keeps the watch; with WatchParentProcess off an explicit pid still wins
    [(0, Start(CLAUDE_A, 3)), (1, Start(CLAUDE_A)), (1, Start(CLAUDE_A, 4, watch_parent_process=False)),
     (1, Start(CLAUDE_A, None, watch_parent_process=False)), (1, Stop(CLAUDE_A))],
    # removal by id across providers while another session keeps protection, then of the last one
    [(0, Start(CLAUDE_A, 2)), (0, Start(CODEX_A)), (0, Start(KEYS[4])),
     (1, RemoveSessions("a")), (1, MarkSoftLocked(KEYS[4], "")), (1, RemoveSessions(match_all=True))],
]


def with_scenarios(test):
    for scenario in SCENARIOS:
        test = example(scenario)(test)
    return test


def _replay(sequence):
    """Yields (state before, event, outcome, now, what the model says happened, model) per event."""
    state = RegistryState()
    model = Model()
    now = T0
    for minutes, event in sequence:
        now = now + timedelta(minutes=minutes)
        before = state
        model_wanted_before = model.wants_protection()
        outcome = transition(state, event, now)
        happened = model.apply(event, now)
        happened["wanted_before"] = model_wanted_before
        state = outcome.state
        yield before, event, outcome, now, happened, model


@settings(max_examples=400, deadline=None)
@with_scenarios
@given(steps)
def test_the_registry_matches_the_independent_model_after_every_event(sequence):
    for _, event, outcome, _, happened, model in _replay(sequence):
        assert registry_as_model(outcome.state) == model.records, event
        assert outcome.succeeded == (not happened.get("failed")), event
        assert outcome.state.protection_wanted == model.wants_protection()


@settings(max_examples=400, deadline=None)
@with_scenarios
@given(steps)
def test_suspend_is_evaluated_exactly_when_protection_is_given_up_or_a_stop_ends_a_session(sequence):
    for _, event, outcome, _, happened, model in _replay(sequence):
        evaluations = [effect for effect in outcome.effects if isinstance(effect, EvaluateSuspend)]
        wanted_after = model.wants_protection()
        given_up = happened["wanted_before"] and not wanted_after
        ended_by_stop = bool(happened.get("ended"))
        if wanted_after or not (given_up or ended_by_stop):
            assert evaluations == [], event
            continue
        [evaluation] = evaluations
        remaining = len(model.records)
        assert evaluation.soft_locked_session_count == remaining
        assert evaluation.reason == ("SoftLocked" if remaining else "Completed")
        if isinstance(event, Stop):
            assert evaluation.cancel_path == event.cancel_path


@settings(max_examples=300, deadline=None)
@with_scenarios
@given(steps)
def test_one_session_ended_per_real_stop_and_cancel_pending_suspend_on_start_and_activity(sequence):
    for _, event, outcome, _, happened, _ in _replay(sequence):
        ended = [effect for effect in outcome.effects if isinstance(effect, SessionEnded)]
        assert len(ended) == happened.get("ended", 0), event
        if ended:
            assert Model.key_of(ended[0].session.key) == Model.key_of(event.key)
            assert ended[0].stop == event
        cancels = [effect for effect in outcome.effects if isinstance(effect, CancelPendingSuspend)]
        assert bool(cancels) == bool(happened.get("started") or happened.get("active")), event
        assert len(outcome.removed) == happened.get("removed", happened.get("ended", 0))


@settings(max_examples=300, deadline=None)
@with_scenarios
@given(steps)
def test_watch_effects_keep_exactly_the_sessions_watched_processes(sequence):
    ledger: dict[tuple[str, str, str], int] = {}
    for _, event, outcome, _, _, model in _replay(sequence):
        for effect in outcome.effects:
            if isinstance(effect, UnwatchProcess):
                assert Model.key_of(effect.key) in ledger, f"unwatch of an unwatched session: {event}"
                del ledger[Model.key_of(effect.key)]
            elif isinstance(effect, WatchProcess):
                ledger[Model.key_of(effect.key)] = effect.pid
        expected = {key: record.watched for key, record in model.records.items() if record.watched}
        assert ledger == expected, event


@settings(max_examples=300, deadline=None)
@example(SCENARIOS[1], 12)
@given(steps, st.sampled_from([1, 12]))
def test_after_a_timeout_check_nobody_in_the_timer_is_overdue_and_the_next_deadline_is_right(sequence, minutes):
    limit = timedelta(minutes=minutes)
    last_check = T0
    for _, _, outcome, now, _, model in _replay([*sequence, (0, TimeoutCheck(minutes))]):
        last_check = now
        in_timer = [record for record in model.records.values()
                    if record.soft_lock_reason is None or record.pending_work]
        deadline = next_timeout_deadline(outcome.state, minutes)
        assert deadline == (min(record.last_activity for record in in_timer) + limit if in_timer else None)
        assert next_timeout_deadline(outcome.state, None) is None
    for record in model.records.values():
        if record.soft_lock_reason is None or record.pending_work:
            assert last_check - record.last_activity < limit
