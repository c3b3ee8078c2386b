"""Never sleep while work runs (deferred stops, running tools), never keep a session forever (leases),
and events of an older turn never undo a newer one. In-process on trio's MockClock."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import anyio
import trio
from lidguard_runtime_harness import EPOCH, Harness, WebhookReceiver, closed_lid_machine, run_mock, with_runtime
from lidguard_runtime_harness import with_settings as settings_with

from lidguard.cli.output import local_time, session_line
from lidguard.platform.fake import FakePlatform
from lidguard.runtime.sessions import AgentProvider, SessionKey
from lidguard.shared.session_json import parse_reply_utc

KEY = SessionKey.create(AgentProvider.CLAUDE, "s1")
END = "http://hooks.test/end"


def _ms(seconds_after_epoch: float) -> int:
    return int((EPOCH + timedelta(seconds=seconds_after_epoch)).timestamp() * 1000)


def _session(h: Harness) -> Any:
    return h.runtime.state.sessions.get(KEY)


async def _mark(h: Harness, **fields: Any) -> dict[str, Any]:
    return await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1", **fields)


class CpuPlatform(FakePlatform):
    """A fake whose descendants' CPU time the test sets; counts the readings (no polling allowed)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cpu: float | None = 0.0
        self.readings: list[int] = []
        outer = self

        class _Process(type(self.process)):  # type: ignore[misc]
            def descendant_cpu_seconds(inner, pid: int) -> float | None:  # noqa: N805
                outer.readings.append(pid)
                return outer.cpu

        self.process = _Process()


# -- leases ------------------------------------------------------------------------------------------
def test_a_session_past_its_lease_ends_with_its_own_reason_and_no_post_session_end():
    receiver = WebhookReceiver()
    harness = Harness(settings_with(SessionLeaseHours=1, SessionTimeoutMinutes=None, PostSessionEndWebhookUrl=END),
                      receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(3600 - 1)
        assert _session(h) is not None
        await anyio.sleep(2)
        assert _session(h) is None
        [entry] = h.log_entries("session-lease-expired")
        assert entry["SessionIdentifier"] == "s1"
        [stopped] = h.log_entries("session-stopped")
        assert stopped["SessionEndReason"] == "session-lease-expired"
        assert "protection-released" in h.actions()
        await anyio.sleep(30)
        assert receiver.bodies("PostSessionEnd") == []

    run_mock(lambda: with_runtime(harness, body))


def test_a_new_start_renews_the_lease_and_null_turns_leases_off():
    harness = Harness(settings_with(SessionLeaseHours=1, SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(3000)
        await h.start()  # the next turn
        await anyio.sleep(3000)
        assert _session(h) is not None
        async with h.runtime.gate:
            h.runtime.update_settings(settings_with(SessionLeaseHours=None, SessionTimeoutMinutes=None))
        # Eight days (past the longest lease, 168 h) in one jump of the mock clock: sleeping through them woke
        # the 10 s and 30 s pollers ~90,000 times (15 s of CPU; over 120 s on a loaded machine).
        trio.lowlevel.current_clock().jump(8 * 24 * 3600)
        await anyio.sleep(1)
        assert _session(h) is not None
        async with h.runtime.gate:
            h.runtime.update_settings(settings_with(SessionLeaseHours=1, SessionTimeoutMinutes=None))
        await anyio.sleep(1)
        assert _session(h) is None  # long past: ends as soon as leases are on again

    run_mock(lambda: with_runtime(harness, body))


def test_a_lease_deadline_that_moves_later_or_away_still_ends_the_next_session_on_time():
    """The lease task is interrupted only for an earlier deadline; one that moves later (the earliest session
    left) or away (no session) is found when the task wakes at the old one."""
    harness = Harness(settings_with(SessionLeaseHours=1, SessionTimeoutMinutes=None))
    late = SessionKey.create(AgentProvider.CLAUDE, "late")

    async def body(h: Harness) -> None:
        await h.start()  # s1: lease ends at 3600
        await anyio.sleep(1800)
        await h.start("late")  # ends at 5400
        await h.stop()  # the deadline moves later: 3600 -> 5400
        await anyio.sleep(3600 - 1800 + 10)
        assert late in h.runtime.state.sessions, "woke at the old deadline and slept on"
        await anyio.sleep(5400 - 3610 - 5)
        assert late in h.runtime.state.sessions
        await anyio.sleep(10)
        assert late not in h.runtime.state.sessions
        await h.start("again")  # none -> a deadline: the task sleeping for ever is woken
        await anyio.sleep(3600 + 1)
        assert not h.runtime.state.sessions
        assert [e["SessionIdentifier"] for e in h.log_entries("session-lease-expired")] == ["late", "again"]

    run_mock(lambda: with_runtime(harness, body))


def test_provider_activity_renews_the_lease_and_only_silence_ends_it():
    """Issue 32 item 2: the lease bounds a session whose events stopped, not one still working: activity every
    minute for 9 hours keeps it (the lease once counted from the latest start alone); 8 hours of silence end
    it; the status shows the renewed end."""
    harness = Harness(settings_with(SessionTimeoutMinutes=None))  # the default lease: 8 hours

    async def body(h: Harness) -> None:
        await h.start()
        for _ in range(9 * 60):
            await anyio.sleep(60)
            await _mark(h, SessionStateReason="PostToolUse:Bash")
        assert _session(h) is not None and not h.log_entries("session-lease-expired")
        last = h.clock.now()
        [session] = (await h.send("status"))["Sessions"]
        assert parse_reply_utc(session["LeaseRenewedAt"]) == last
        assert f"leaseEnds={local_time((last + timedelta(hours=8)).isoformat())}" in session_line(session, 8)
        await anyio.sleep(8 * 3600 - 5)
        assert _session(h) is not None
        await anyio.sleep(10)
        assert _session(h) is None
        [entry] = h.log_entries("session-lease-expired")
        assert entry["SessionIdentifier"] == "s1"

    run_mock(lambda: with_runtime(harness, body))


def test_a_soft_lock_or_deferred_stop_renews_the_lease_but_a_busy_tool_alone_does_not():
    """Every provider event renews the lease (a permission prompt, a deferred stop); the runtime's own reading
    of a running tool's CPU time keeps the session active but is no provider event: a tool that never
    finishes still ends at the lease."""
    platform = CpuPlatform(closed_lid_machine())
    harness = Harness(settings_with(SessionLeaseHours=1, SessionTimeoutMinutes=1), platform=platform)

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=os.getpid())
        await anyio.sleep(3000)
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1",
                     SessionStateReason="permission_prompt")
        await anyio.sleep(3000)
        await h.stop(HasPendingProviderWork=True)
        await anyio.sleep(3000)
        assert _session(h) is not None  # 2.5 hours after the start
        await _mark(h, ToolCallId="toolu_1", ToolCallState="Running")
        renewed = h.clock.now()
        for minute in range(1, 70):
            platform.cpu = 10.0 * minute
            await anyio.sleep(60)
            if _session(h) is None:
                break
        assert _session(h) is None and h.log_entries("running-tool-activity")
        [entry] = h.log_entries("session-lease-expired")
        assert abs((parse_reply_utc(entry["Timestamp"]) - renewed).total_seconds() - 3600) < 61

    run_mock(lambda: with_runtime(harness, body))


def test_the_renewed_lease_survives_the_journal():
    from lidguard.runtime.sessions import Session

    session = Session(KEY, EPOCH, EPOCH, lease_renewed_at=EPOCH + timedelta(hours=3))
    record = session.journal_extras()
    assert Session(KEY, EPOCH, EPOCH).with_journal_extras(record) == session
    assert Session(KEY, EPOCH, EPOCH).with_journal_extras({}).lease_renewed_at is None  # an older journal


def test_the_default_lease_is_eight_hours_and_shown_in_every_reply():
    harness = Harness(settings_with(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        reply = await h.start()
        assert reply["Settings"]["SessionLeaseHours"] == 8
        await anyio.sleep(8 * 3600 - 5)
        assert _session(h) is not None
        await anyio.sleep(10)
        assert _session(h) is None

    run_mock(lambda: with_runtime(harness, body))


# -- turns -------------------------------------------------------------------------------------------
def test_a_late_event_of_an_older_turn_does_not_undo_a_newer_turn():
    harness = Harness(settings_with(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start(SentAtUnixMilliseconds=_ms(0))  # turn 3
        await anyio.sleep(100)
        await h.start(SentAtUnixMilliseconds=_ms(100))  # turn 4
        await h.stop(HasPendingProviderWork=True, SentAtUnixMilliseconds=_ms(100))
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1",
                     SessionStateReason="permission_prompt", SentAtUnixMilliseconds=_ms(100))
        before = _session(h)
        late = await _mark(h, SessionStateReason="PostToolUse:Bash", SentAtUnixMilliseconds=_ms(50))
        assert late["Succeeded"] and "older" in late["Message"]
        assert _session(h) == before and before.soft_locked and before.pending_provider_work
        late_stop = await h.stop(SentAtUnixMilliseconds=_ms(60))
        assert "older" in late_stop["Message"] and _session(h) == before
        assert len(h.log_entries("session-stale-turn-event-ignored")) == 2
        await _mark(h, SentAtUnixMilliseconds=_ms(101))  # the current turn's events still count
        assert not _session(h).soft_locked

    run_mock(lambda: with_runtime(harness, body))


def test_the_providers_turn_id_is_kept_and_events_of_that_turn_always_count():
    harness = Harness(settings_with(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start(provider="Codex", TurnId="turn-7", SentAtUnixMilliseconds=_ms(10))
        key = SessionKey.create(AgentProvider.CODEX, "s1")
        assert h.runtime.state.sessions[key].turn_id == "turn-7"
        # Sent (by the hook's clock) a little before the start arrived, but of the same turn: applied.
        await h.stop(provider="Codex", TurnId="turn-7", SentAtUnixMilliseconds=_ms(5))
        assert key not in h.runtime.state.sessions

    run_mock(lambda: with_runtime(harness, body))


def test_a_clock_stepped_back_never_makes_a_stop_stale():
    """Issue 32 item 7: after an NTP step back a Stop of a provider without turn ids (its hook's send time now
    earlier than the turn's start) still ends the session; events of an older turn sent after the step are
    still told apart, and a step forward (a resume) changes nothing."""
    harness = Harness(settings_with(SessionTimeoutMinutes=None))

    def now_ms(h: Harness, seconds: float = 0) -> int:
        return int((h.clock.now() + timedelta(seconds=seconds)).timestamp() * 1000)

    async def body(h: Harness) -> None:
        await h.start(SentAtUnixMilliseconds=now_ms(h))
        await anyio.sleep(10)
        h.clock.jump(-300)  # the wall clock steps five minutes back; the loop's monotonic clock does not
        await anyio.sleep(5)
        reply = await h.stop(SentAtUnixMilliseconds=now_ms(h))
        assert "older" not in reply["Message"] and _session(h) is None
        assert h.log_entries("session-stale-turn-event-ignored") == []
        assert len(h.log_entries("clock-stepped-back")) == 1
        await h.start(SentAtUnixMilliseconds=now_ms(h))  # the next turn, in the stepped clock
        late = await h.stop(SentAtUnixMilliseconds=now_ms(h, -20))  # sent before that turn began
        assert "older" in late["Message"] and _session(h) is not None
        h.clock.jump(3600)  # a resume: the wall clock leaps forward
        await anyio.sleep(5)
        assert "older" not in (await h.stop(SentAtUnixMilliseconds=now_ms(h)))["Message"]
        assert _session(h) is None and len(h.log_entries("clock-stepped-back")) == 1

    run_mock(lambda: with_runtime(harness, body))


# -- running tools -----------------------------------------------------------------------------------
def test_a_long_tool_that_uses_cpu_keeps_the_session_active_and_an_idle_one_is_abandoned():
    platform = CpuPlatform(closed_lid_machine())
    harness = Harness(settings_with(SessionTimeoutMinutes=1, PostStopSuspendDelaySeconds=0), platform=platform)

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=os.getpid())
        await _mark(h, SessionStateReason="PreToolUse:Bash", ToolCallId="toolu_1", ToolCallState="Running")
        await anyio.sleep(30)  # the test acts between the timer's checks (at 60, 120, ...)
        for minute in range(1, 5):  # a 4-minute build that keeps working
            platform.cpu = 10.0 * minute
            await anyio.sleep(60)
            assert not _session(h).soft_locked, minute
        assert len(h.log_entries("running-tool-activity")) == 4
        assert platform.readings == [os.getpid()] * 4  # read only when the timer fired
        assert "suspend-requested" not in h.actions()
        await anyio.sleep(60)  # the processes went idle (no CPU since the last check)
        assert _session(h).soft_locked and _session(h).tools_in_flight == ()
        assert h.log_entries("session-running-tool-abandoned")
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_finished_tool_is_no_longer_in_flight_and_sessions_without_tools_read_nothing():
    platform = CpuPlatform(closed_lid_machine())
    harness = Harness(settings_with(SessionTimeoutMinutes=1), platform=platform)

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=os.getpid())
        await _mark(h, ToolCallId="toolu_1", ToolCallState="Running")
        await _mark(h, ToolCallId="toolu_1", ToolCallState="Finished")
        assert _session(h).tools_in_flight == ()
        platform.cpu = 99.0
        await anyio.sleep(61)
        assert _session(h).soft_locked
        assert platform.readings == []

    run_mock(lambda: with_runtime(harness, body))


def test_a_tool_whose_cpu_cannot_be_read_takes_the_seeds_path():
    platform = CpuPlatform(closed_lid_machine())
    platform.cpu = None  # the watched process is gone or unreadable
    harness = Harness(settings_with(SessionTimeoutMinutes=1), platform=platform)

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=os.getpid())
        await _mark(h, ToolCallId="toolu_1", ToolCallState="Running")
        await anyio.sleep(61)
        assert _session(h).soft_locked

    run_mock(lambda: with_runtime(harness, body))


def test_tools_in_flight_are_bounded_per_session():
    harness = Harness(settings_with(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start()
        for number in range(200):
            await _mark(h, ToolCallId=f"t{number}", ToolCallState="Running")
        tools = _session(h).tools_in_flight
        assert len(tools) == 64 and tools[-1] == "t199"
        bad = await _mark(h, ToolCallId="t1", ToolCallState="Sideways")
        assert not bad["Succeeded"] and "ToolCallState" in bad["Message"]

    run_mock(lambda: with_runtime(harness, body))


# -- deferred stops ----------------------------------------------------------------------------------
def test_a_deferred_stop_keeps_the_session_until_abandonment_then_suspends_exactly_once():
    harness = Harness(settings_with(SessionTimeoutMinutes=2, PostStopSuspendDelaySeconds=0),
                      machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start()
        reply = await h.stop(HasPendingProviderWork=True)
        assert reply["Succeeded"] and "Deferred" in reply["Message"]
        status = await h.send("status")
        [session] = status["Sessions"]
        assert session["PendingProviderWork"] is True
        await anyio.sleep(119)
        assert "suspend-requested" not in h.actions() and "protection-released" not in h.actions()
        await anyio.sleep(2)
        assert h.log_entries("session-pending-provider-work-abandoned")
        await anyio.sleep(60)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))
