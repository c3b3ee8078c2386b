"""Ask-before-sleep edges on trio's MockClock: the lid opened during the reply wait ends it (the hook is
answered and the re-check cancels the suspend), oversized or malformed answers from the notification
server are no answers, settings changed during the delay are honoured."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
from lidguard_runtime_harness import Harness, run_mock, with_runtime, with_settings
from test_followup_flow import DELAY, SETTINGS, BlockingStop, FollowUpServer, _harness, _suspends, _wait_for

from lidguard.platform.api import DisplayConnector, LidState
from lidguard.runtime.components.followup import MAX_ANSWER_BYTES


def test_opening_the_lid_ends_the_wait_and_cancels_the_suspend():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 2)
            h.platform.machine.lid = LidState.OPEN
            await _wait_for(lambda: stop.reply is not None, 11)  # noticed within 10 s
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "NotEligible"
        assert "FollowUpReply" not in stop.reply
        await anyio.sleep(1)
        assert h.runtime.suspend.pending is None and _suspends(h) == 0
        assert "stop-follow-up-ended" in h.log_names() and "stop-suspend-canceled" in h.log_names()
        polls = len(server.polls)
        await anyio.sleep(120)
        assert len(server.polls) == polls

    run_mock(lambda: with_runtime(_harness(server), body))


def test_an_external_display_connected_during_the_wait_ends_it_too():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 1)
            h.platform.machine.displays.append(DisplayConnector("HDMI-A-1", False))
            await _wait_for(lambda: stop.reply is not None, 11)
        await anyio.sleep(1)
        assert _suspends(h) == 0 and h.runtime.suspend.pending is None

    run_mock(lambda: with_runtime(_harness(server), body))


class OversizedServer(FollowUpServer):
    """Answers polls with a body larger than the runtime reads (and, optionally, the start too)."""

    def __init__(self, *, big_start: bool = False) -> None:
        super().__init__()
        self.big_start = big_start
        self.big_polls = 3
        self.transport = httpx.MockTransport(self._big)

    async def _big(self, request: httpx.Request) -> httpx.Response:
        padding = "x" * (MAX_ANSWER_BYTES + 10)
        if request.method == "POST" and self.big_start:
            await self._handle(request)
            return httpx.Response(202, json={"pollUrl": self.poll_url, "padding": padding})
        if request.method == "GET" and self.big_polls:
            self.big_polls -= 1
            self.polls.append(anyio.current_time())
            return httpx.Response(200, json={"status": "Replied", "reply": padding})
        return await self._handle(request)


def test_oversized_poll_answers_are_no_answers_and_polling_goes_on():
    server = OversizedServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 4)
            assert stop.reply is None
            server.status, server.reply = "Replied", "small"
            await _wait_for(lambda: stop.reply is not None)
        assert stop.reply is not None and stop.reply["FollowUpReply"] == "small"
        assert "stop-follow-up-poll-failed" in h.log_names()

    run_mock(lambda: with_runtime(_harness(server), body))


def test_an_oversized_start_answer_falls_through_to_suspend():
    server = OversizedServer(big_start=True)

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: stop.reply is not None, DELAY + 1)
        await _wait_for(lambda: _suspends(h) == 1, 1)
        assert "stop-follow-up-invalid-poll-url" in h.log_names()

    run_mock(lambda: with_runtime(_harness(server), body))


class GarbageServer(FollowUpServer):
    def __init__(self, answers: list[Any]) -> None:
        super().__init__()
        self.answers = answers
        self.transport = httpx.MockTransport(self._garbage)

    async def _garbage(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and self.answers:
            self.polls.append(anyio.current_time())
            answer = self.answers.pop(0)
            if isinstance(answer, bytes):
                return httpx.Response(200, content=answer)
            return httpx.Response(*answer) if isinstance(answer, tuple) else httpx.Response(200, json=answer)
        return await self._handle(request)


def test_malformed_poll_answers_are_retried():
    answers: list[Any] = [b"not json", b"[" * 100_000, [], {"status": "Replied"}, {"status": "Whatever"},
                          (404,), (500,), {"status": "Replied", "reply": ""}]
    server = GarbageServer(answers)

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: not server.answers)
            assert stop.reply is None
            server.status, server.reply = "Replied", "after the garbage"
            await _wait_for(lambda: stop.reply is not None)
        assert stop.reply is not None and stop.reply["FollowUpReply"] == "after the garbage"
        assert not h.paths.exception_log_file.exists()

    run_mock(lambda: with_runtime(_harness(server), body))


def test_turning_the_feature_off_during_the_delay_answers_the_hook_and_suspends():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(3)
            await h.send("settings", HasSettings=True,
                         Settings=with_settings(**{**SETTINGS, "ClosedLidStopFollowUpWebhookUrl": ""}).to_file_json())
            await _wait_for(lambda: stop.reply is not None, DELAY)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "NotAsked"
        await _wait_for(lambda: _suspends(h) == 1, 1)
        assert server.bodies("StopFollowUp") == []

    run_mock(lambda: with_runtime(_harness(server), body))
