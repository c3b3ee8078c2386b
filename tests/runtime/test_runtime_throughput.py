"""The reply caches and the lid backup's durability (issue 6, runtime throughput).

Replies reuse the wire form of unchanged sessions and settings and splice their JSON text; the bytes
must stay exactly those ``encode_message`` writes, and a changed session must never show its old
form. The lid backup is fsynced unless the platform's hold ends with the process (the fake).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest

from lidguard.ipc.protocol import encode_message
from lidguard.platform.api import LidActionSnapshot, LidState
from lidguard.platform.fake import FakePlatform
from lidguard.runtime import protection
from lidguard.runtime.protection import ProtectionCoordinator, protection_target
from lidguard.runtime.responses import build_response, encode_reply, session_to_wire
from lidguard.runtime.sessions import AgentProvider, RegistryState, Session, SessionKey
from lidguard.settings.model import Settings, headless_defaults

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def _session(name: str, minutes: int = 0, **changes: Any) -> Session:
    moment = NOW + timedelta(minutes=minutes)
    return replace(Session(SessionKey.create(AgentProvider.CLAUDE, name), moment, moment), **changes)


def _reply(state: RegistryState, settings: Settings | None = None, message: str = "ok",
           extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return build_response(succeeded=True, message=message, state=state, settings=settings or headless_defaults(),
                          lid_state=LidState.OPEN, visible_display_count=1, extra=extra)


def test_encoded_reply_is_byte_for_byte_the_general_encoding() -> None:
    state = RegistryState()
    for index, name in enumerate(["plain", "lone-\ud800-surrogate", "é ünïcode", 'quote"and\\slash']):
        state = state.with_session(_session(name, index, working_directory=f"/w/{name}", soft_lock_reason=None))
    reply = _reply(state, message="Started Claude:lone-\ud800.", extra={"ClosedLidSuspendEligible": False,
                                                                        "RemovedSessions": ["a", "\udfff"]})
    assert encode_reply(reply) == encode_message(reply)
    assert json.loads(encode_reply(reply))["Sessions"] == [session_to_wire(s) for s in state.sorted_sessions()]
    assert encode_reply(_reply(RegistryState())) == encode_message(_reply(RegistryState()))


def test_unencodable_reply_still_becomes_the_readable_failure() -> None:
    reply = _reply(RegistryState().with_session(_session("a")), extra={"Odd": float("nan")})
    assert encode_reply(reply) == encode_message(reply)
    assert json.loads(encode_reply(reply))["Succeeded"] is False


def test_changed_session_and_settings_are_never_served_from_the_cache() -> None:
    first = _session("a")
    state = RegistryState().with_session(first).with_session(_session("b", 1))
    before = json.loads(encode_reply(_reply(state)))
    assert before["Sessions"][0]["SoftLockState"] == "None"
    locked = first.with_soft_lock("Stop", NOW + timedelta(minutes=5))
    after = json.loads(encode_reply(_reply(state.with_session(locked))))
    assert after["Sessions"][0]["SoftLockState"] == "SoftLocked"
    assert after["Sessions"][0]["SoftLockReason"] == "Stop"
    assert after["Sessions"][1] == before["Sessions"][1]
    changed = Settings.from_raw({**headless_defaults().to_file_json(), "SessionTimeoutMinutes": 77})
    assert json.loads(encode_reply(_reply(state, changed)))["Settings"]["SessionTimeoutMinutes"] == 77
    assert json.loads(encode_reply(_reply(state)))["Settings"] == headless_defaults().to_file_json()
    removed = json.loads(encode_reply(_reply(state.without([first.key]))))
    assert [s["SessionIdentifier"] for s in removed["Sessions"]] == ["b"]


def _expected_sessions(state: RegistryState) -> tuple[list[dict[str, Any]], int]:
    """bounds.py spelled out: registry order, at most REPLY_SESSION_LIMIT, within the byte budget (one
    separator per session), the first always listed; the rest counted."""
    from lidguard.runtime.bounds import REPLY_SESSION_LIMIT, REPLY_SESSIONS_BUDGET_BYTES

    listed: list[dict[str, Any]] = []
    size = 0
    for session in state.sorted_sessions():
        wire = session_to_wire(session)
        size += len(encode_message(wire)) - len(b'{"v":1,}\n') + 2 + 1  # the session's own JSON + a separator
        if len(listed) >= REPLY_SESSION_LIMIT or (listed and size > REPLY_SESSIONS_BUDGET_BYTES):
            break
        listed.append(wire)
    return listed, len(state.sessions) - len(listed)


@pytest.mark.parametrize("count, big", [(0, False), (3, False), (100, False), (101, False), (250, False),
                                        (40, True), (1, True)])
def test_reply_lists_the_bounded_prefix_of_the_registry(count: int, big: bool) -> None:
    """The cached wire forms keep the bounds of bounds.py whatever the registry: the session limit, the byte
    budget (big sessions), the first session even over budget, and every change of the registry."""
    state = RegistryState()
    for index in range(count):
        directory = "/" + "\u00e9" * (4095 if big and index else 40000 if big else 10)
        state = state.with_session(_session(f"s{index:04d}", index, working_directory=directory))
    for step in range(4):
        reply = json.loads(encode_reply(_reply(state)))
        listed, omitted = _expected_sessions(state)
        assert reply["Sessions"] == listed
        assert reply.get("SessionsOmitted", 0) == omitted and reply["ActiveSessionCount"] == count
        if not count:
            break
        keys = [session.key for session in state.sorted_sessions()]
        first = state.sessions[keys[0]]  # churn: one session changes, one leaves, one arrives
        state = state.with_session(first.with_soft_lock("Stop", NOW)).without([keys[-1]])
        state = state.with_session(_session(f"new{step}", -step, working_directory="/w"))


class _DurablePolicy:
    """A lid policy whose hold outlives the process (powercfg, pmset): the backup must be fsynced."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def read_lid_actions(self) -> LidActionSnapshot:
        return LidActionSnapshot("scheme", 1, 1)

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        self.calls.append("set")

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        self.calls.append("restore")

    def drop_runtime_hold(self) -> None:
        self.calls.append("drop")


@pytest.mark.parametrize("durable", [True, False])
def test_lid_backup_is_fsynced_unless_the_hold_ends_with_the_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool) -> None:
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
    platform = FakePlatform()
    if durable:
        platform.lid_policy = _DurablePolicy()  # type: ignore[assignment]
    backup = tmp_path / "pending-lid-action-backup.json"
    coordinator = ProtectionCoordinator(platform, backup, lambda event, message: None)
    coordinator.converge(protection_target(headless_defaults()))
    assert protection.read_lid_backup(backup) is not None
    assert oct(backup.stat().st_mode & 0o777) == "0o600"
    assert bool(fsyncs) is durable
    coordinator.converge(None)
    assert not backup.exists()


def test_activity_moves_the_timeout_without_a_task_per_event_and_it_still_fires_on_time() -> None:
    from lidguard_runtime_harness import Harness, run_mock, with_runtime

    harness = Harness()
    spawned: list[object] = []
    real_spawn = harness.runtime.spawn
    harness.runtime.spawn = lambda function: (spawned.append(function), real_spawn(function))[1]  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        await h.start()
        started = len(spawned)
        for _ in range(5):
            await anyio.sleep(60)
            await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1", SessionStateReason="x")
        assert len(spawned) == started  # no timer task per event
        active_at = anyio.current_time()
        await anyio.sleep(12 * 60 - 1)
        assert not next(iter(h.runtime.state.sessions.values())).soft_locked
        await anyio.sleep(2)
        assert next(iter(h.runtime.state.sessions.values())).soft_lock_reason == "session-timeout-expired:12 minutes"
        assert anyio.current_time() - active_at >= 12 * 60

    run_mock(lambda: with_runtime(harness, body))


def test_a_shorter_timeout_wakes_the_waiting_timer_early() -> None:
    from lidguard_runtime_harness import Harness, run_mock, with_runtime

    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(60)
        shorter = {**headless_defaults().to_file_json(), "SessionTimeoutMinutes": 3}
        assert (await h.send("settings", HasSettings=True, Settings=shorter))["Succeeded"]
        await anyio.sleep(2 * 60 - 1)
        assert not next(iter(h.runtime.state.sessions.values())).soft_locked
        await anyio.sleep(2)
        assert next(iter(h.runtime.state.sessions.values())).soft_lock_reason == "session-timeout-expired:3 minutes"

    run_mock(lambda: with_runtime(harness, body))


def test_raw_settings_are_validated_once_while_they_stay_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from lidguard.settings import model

    raw = {**headless_defaults().to_file_json(), "SessionTimeoutMinutes": 21}
    first = model.validate_raw_settings(raw)
    assert model.validate_raw_settings(json.loads(json.dumps(raw))) is first  # same content: remembered
    assert first.session_timeout_minutes == 21
    other = model.validate_raw_settings({**raw, "SessionTimeoutMinutes": 22})
    assert other.session_timeout_minutes == 22
    # 1 == True in Python, but the model treats them differently: never answered from memory
    flag_as_number = {**raw, "ChangeLidAction": 1}
    flag_as_bool = {**raw, "ChangeLidAction": True}
    assert model.validate_raw_settings(flag_as_bool).change_lid_action is True
    assert model.validate_raw_settings(flag_as_number) == Settings.from_raw(flag_as_number)
    # the host's away-mode answer is part of what validation saw
    monkeypatch.setattr(model, "away_mode_supported", lambda: True)
    assert model.validate_raw_settings(flag_as_number) == Settings.from_raw(flag_as_number)
    monkeypatch.setattr(model, "away_mode_supported", lambda: False)
    assert model.validate_raw_settings(flag_as_number) == Settings.from_raw(flag_as_number)
    for _ in range(2):  # an invalid payload raises every time (errors are never remembered)
        with pytest.raises(ValueError):
            model.validate_raw_settings("not an object")
