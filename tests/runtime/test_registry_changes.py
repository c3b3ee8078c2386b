"""``RegistryState.changed_since``: a state made in one step from another names the keys that differ, so
the components that follow the registry (the session journal) look only at those, not at every session
on every event. Anything else (another base, a state built directly, a replace()) answers None."""

from __future__ import annotations

import dataclasses
import gc
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from lidguard_runtime_harness import EPOCH, Harness, run_mock, with_runtime

from lidguard.runtime.components import journal as journal_component
from lidguard.runtime.sessions import AgentProvider, RegistryState, Session, SessionKey


def _session(name: str, minutes: int = 0) -> Session:
    at = EPOCH + timedelta(minutes=minutes)
    return Session(SessionKey.create(AgentProvider.CLAUDE, name), at, at)


def test_a_one_step_state_names_its_changed_keys_and_nothing_else_does() -> None:
    empty = RegistryState()
    one = empty.with_session(_session("a"))
    two = one.with_session(_session("b"))
    again = two.with_session(_session("a", 5))
    gone = again.without([_session("a").key, _session("a").key, _session("absent").key])
    assert one.changed_since(empty) == (_session("a").key,)
    assert again.changed_since(two) == (_session("a").key,)
    assert gone.changed_since(again) == (_session("a").key,)  # once, and only keys that were there
    assert two.changed_since(empty) is None and two.changed_since(None) is None and two.changed_since(two) is None
    assert RegistryState(MappingProxyType(dict(two.sessions))).changed_since(one) is None
    assert dataclasses.replace(two).changed_since(one) is None
    assert two == RegistryState(MappingProxyType(dict(two.sessions)))  # the hint takes no part in equality


def test_no_chain_of_old_states_is_kept_alive() -> None:
    state = RegistryState()
    for index in range(50):
        state = state.with_session(_session(f"s{index}"))
    gc.collect()
    assert sum(1 for item in gc.get_objects() if type(item) is RegistryState and len(item.sessions) < 49) < 5


def test_one_event_among_many_sessions_journals_only_its_session(monkeypatch: Any) -> None:
    harness = Harness()
    written: list[str] = []
    original = journal_component.session_line  # one bounded record line per session (issue 39.3)

    def counting(session: Session) -> bytes:
        written.append(session.key.session_identifier)
        return original(session)

    monkeypatch.setattr(journal_component, "session_line", counting)
    looked: list[int] = []

    async def body(h: Harness) -> None:
        for index in range(30):
            await h.start(f"s{index}")
        component = h.runtime.journal
        full_walk = component._journaled.__class__  # a plain dict: count lookups through a subclass

        class Counting(full_walk):  # type: ignore[misc, valid-type]
            def get(self, key: Any, default: Any = None) -> Any:
                looked.append(1)
                return super().get(key, default)

        component._journaled = Counting(component._journaled)
        await component.flush()  # the starts' records (serialized when their batch is written)
        written.clear()
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s7")
        await component.flush()
        assert written == ["s7"] and len(looked) == 1
        await h.stop("s8")
        assert "s8" not in component._journaled and len(looked) == 1
        h.runtime.state = RegistryState(MappingProxyType(dict(h.runtime.state.sessions)))  # no hint: full walk
        h.runtime.state_changed()
        assert len(looked) == 1 + 29

    run_mock(lambda: with_runtime(harness, body))


def _earliest_cases():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    step = st.one_of(
        st.tuples(st.just("put"), st.integers(0, 7), st.integers(-50, 50), st.booleans()),
        st.tuples(st.just("drop"), st.integers(0, 7), st.just(0), st.just(False)),
        st.tuples(st.just("rebuild"), st.just(0), st.just(0), st.just(False)),  # not one step from the last
        st.tuples(st.just("same"), st.just(0), st.just(0), st.just(False)),  # asked twice
    )
    return st.lists(step, max_size=60)


def test_the_earliest_value_followed_through_changed_keys_is_always_the_true_earliest() -> None:
    """``EarliestOf`` (the timeout and lease timers' deadline) against the full scan after every step: puts
    that move a session earlier or later (the one holding the earliest too), sessions that leave or have no
    value (soft-locked), states not made in one step from the last one seen."""
    from hypothesis import given, settings

    from lidguard.runtime.sessions import EarliestOf

    def value_of(session: Session) -> Any:
        return None if session.soft_lock_reason else session.last_activity_at

    @settings(max_examples=300, deadline=None)
    @given(_earliest_cases())
    def check(steps: list[tuple[str, int, int, bool]]) -> None:
        tracker = EarliestOf(value_of)
        state = RegistryState()
        for op, index, minutes, soft_locked in steps:
            key = SessionKey.create(AgentProvider.CLAUDE, f"s{index}")
            if op == "put":
                at = EPOCH + timedelta(minutes=minutes)
                state = state.with_session(Session(key, EPOCH, at, soft_lock_reason="x" if soft_locked else None))
            elif op == "drop":
                state = state.without([key])
            elif op == "rebuild":
                state = RegistryState(MappingProxyType(dict(state.sessions)))
            values = [value for value in map(value_of, state.sessions.values()) if value is not None]
            assert tracker.at(state) == (min(values) if values else None), (op, index, minutes)

    check()


def test_the_earliest_value_costs_no_full_scan_when_the_earliest_session_keeps_renewing() -> None:
    """Issue 32 item 2: with leases renewed by every event, the session holding the earliest lease is the one
    most likely to send the next event (every session active in turn: least recently renewed first). Each
    such change must cost a few looks, not a walk over every session (it once rescanned all 500 each time)."""
    from lidguard.runtime.sessions import EarliestOf

    looks = 0

    def value_of(session: Session) -> Any:
        nonlocal looks
        looks += 1
        return session.last_activity_at

    keys = [SessionKey.create(AgentProvider.CLAUDE, f"s{number}") for number in range(500)]
    state = RegistryState()
    for number, key in enumerate(keys):
        state = state.with_session(Session(key, EPOCH, EPOCH + timedelta(seconds=number)))
    tracker = EarliestOf(value_of)
    assert tracker.at(state) == EPOCH
    looks = 0
    for step in range(2000):  # round robin: each event renews the session holding the earliest value
        key = keys[step % len(keys)]
        moment = EPOCH + timedelta(seconds=len(keys) + step)
        state = state.with_session(Session(key, EPOCH, moment))
        assert tracker.at(state) == EPOCH + timedelta(seconds=step + 1)
    assert looks <= 2 * 2000, looks


def test_protection_wanted_counted_through_changed_keys_is_always_the_full_answer() -> None:
    """``protection_wanted`` is counted from the origin's count and the changed keys (asked or not in between,
    soft-locking and unlocking, leaving, rebuilt states) and must always equal the walk over every session."""
    from hypothesis import given, settings

    @settings(max_examples=300, deadline=None)
    @given(_earliest_cases())
    def check(steps: list[tuple[str, int, int, bool]]) -> None:
        state = RegistryState()
        for op, index, minutes, soft_locked in steps:
            key = SessionKey.create(AgentProvider.CLAUDE, f"s{index}")
            if op == "put":
                state = state.with_session(Session(key, EPOCH, EPOCH, soft_lock_reason="x" if soft_locked else None))
            elif op == "drop":
                state = state.without([key])
            elif op == "rebuild":
                state = RegistryState(MappingProxyType(dict(state.sessions)))
            if minutes % 3 or op == "same":  # some states are never asked: their count is not known yet
                expected = any(not session.soft_locked for session in state.sessions.values())
                assert state.protection_wanted is expected and state.suspend_eligible is not expected, (op, index)

    check()
