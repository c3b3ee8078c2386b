"""Replay-safe events: a request id is applied once (also across a runtime restart, through the
journal), at most the last 4,096 ids are remembered, and a request dated in the future is refused."""

from __future__ import annotations

from datetime import timedelta

import anyio
from lidguard_runtime_harness import EPOCH, Harness, run_mock, with_runtime

from lidguard.runtime.replay_guard import RECENT_REQUEST_IDS, RecentRequests


def _ms(moment) -> int:
    return int(moment.timestamp() * 1000)


def test_a_replayed_start_after_a_stop_does_not_resurrect_the_session():
    harness = Harness()

    async def body(h: Harness) -> None:
        assert (await h.start("s1", RequestId="start-1"))["Succeeded"]
        assert (await h.stop("s1", RequestId="stop-1"))["Succeeded"]
        again = await h.start("s1", RequestId="start-1")
        assert again["Succeeded"] and again["RepeatedRequest"] is True
        assert not h.runtime.state.sessions
        assert len(h.log_entries("request-repeat-ignored")) == 1
        assert h.actions().count("protection-applied") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_replayed_start_is_refused_by_a_restarted_runtime_too():
    first = Harness()

    async def started_and_stopped(h: Harness) -> None:
        await h.start("s1", RequestId="start-1")
        await h.start("s2", RequestId="start-2")  # keeps the journal non-empty
        await h.stop("s1", RequestId="stop-1")
        await anyio.sleep(1)

    async def crash(h: Harness) -> None:  # no shutdown: the journal stays as a crash leaves it
        async with anyio.create_task_group() as group:
            await h.runtime.run(group)
            await started_and_stopped(h)
            group.cancel_scope.cancel()

    run_mock(lambda: crash(first))
    second = Harness()

    async def body(h: Harness) -> None:
        assert [k.session_identifier for k in h.runtime.state.sessions] == ["s2"]
        again = await h.start("s1", RequestId="start-1")
        assert again.get("RepeatedRequest") is True
        assert [k.session_identifier for k in h.runtime.state.sessions] == ["s2"]

    run_mock(lambda: with_runtime(second, body))


def test_a_request_that_failed_may_be_sent_again():
    harness = Harness()

    async def body(h: Harness) -> None:
        failed = await h.send("start", Provider="nonsense", SessionIdentifier="s1", RequestId="r1")
        assert not failed["Succeeded"]
        assert (await h.start("s1", RequestId="r1"))["Succeeded"]
        assert h.runtime.state.sessions

    run_mock(lambda: with_runtime(harness, body))


def test_status_is_never_deduplicated():
    harness = Harness()

    async def body(h: Harness) -> None:
        for _ in range(2):
            reply = await h.send("status", RequestId="same")
            assert reply["Succeeded"] and "RepeatedRequest" not in reply

    run_mock(lambda: with_runtime(harness, body))


def test_future_dated_events_are_rejected_and_logged_and_slightly_late_clocks_are_fine():
    harness = Harness()

    async def body(h: Harness) -> None:
        future = _ms(EPOCH + timedelta(minutes=5, seconds=2))
        reply = await h.start("s1", SentAtUnixMilliseconds=future)
        assert not reply["Succeeded"] and "future" in reply["Message"]
        assert not h.runtime.state.sessions
        [entry] = h.log_entries("request-future-dated-rejected")
        assert entry["SentAtUnixMilliseconds"] == future and not entry["Succeeded"]
        near = _ms(EPOCH + timedelta(minutes=4))
        assert (await h.start("s1", SentAtUnixMilliseconds=near))["Succeeded"]
        old = _ms(EPOCH - timedelta(days=3))
        assert (await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1",
                             SentAtUnixMilliseconds=old))["Succeeded"]

    run_mock(lambda: with_runtime(harness, body))


def test_bad_request_id_and_time_values_are_refused_with_a_reason():
    harness = Harness()

    async def body(h: Harness) -> None:
        for fields in ({"RequestId": "x" * 129}, {"RequestId": 7}, {"SentAtUnixMilliseconds": -1},
                       {"SentAtUnixMilliseconds": 2**80}, {"SentAtUnixMilliseconds": 1.5},
                       {"SentAtUnixMilliseconds": "12"}, {"SentAtUnixMilliseconds": True},
                       {"RequestId": "\ud800"}):
            reply = await h.start("s1", **fields)
            assert not reply["Succeeded"], fields
            assert "RequestId" in reply["Message"] or "SentAtUnixMilliseconds" in reply["Message"], reply
        assert not h.runtime.state.sessions

    run_mock(lambda: with_runtime(harness, body))


def test_memory_is_bounded_to_the_latest_ids():
    recent = RecentRequests()
    for number in range(RECENT_REQUEST_IDS + 10):
        recent.add(f"r{number}")
    assert len(recent) == RECENT_REQUEST_IDS
    assert "r9" not in recent and "r10" in recent and f"r{RECENT_REQUEST_IDS + 9}" in recent
