"""Ask-before-sleep (ASK_BEFORE_SLEEP.md, seeds 000/001) through the runtime on trio's MockClock.

A fake notification server on httpx.MockTransport answers the StopFollowUp webhook with a poll URL
and each poll with whatever status the test sets; a blocking Stop (``WaitForFollowUp: true``) runs
as its own task and its reply is inspected. One rule per test: reply, cancel, expire, extension up
to +5 min and not beyond, invalid poll URL, activity and Emergency Hibernation cancel the wait, a
hook that goes away, the continued Stop with RepeatClosedLidStopFollowUp on and off.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import anyio
import httpx
import pytest
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.runtime.suspend_policy import parse_utc

HOOK = "http://notify.test/api/webhooks/lidguard/secret"
POLL = "http://notify.test/api/follow-ups/abc/token"
PRE = "http://notify.test/pre"
DELAY, WINDOW = 10, 60
SETTINGS = {"ClosedLidStopFollowUpWebhookUrl": HOOK, "ClosedLidStopFollowUpDelaySeconds": WINDOW,
            "PostStopSuspendDelaySeconds": DELAY, "PreSuspendWebhookUrl": PRE, "SessionTimeoutMinutes": None}


class FollowUpServer:
    """StopFollowUp -> 202 {pollUrl, expiresAtUtc}; GET pollUrl -> {status, expiresAtUtc, reply}."""

    def __init__(self, *, poll_url: str = POLL, start_status: int = 202) -> None:
        self.poll_url = poll_url
        self.start_status = start_status
        self.posts: list[dict[str, Any]] = []
        self.polls: list[float] = []
        self.status = "Pending"
        self.reply: str | None = None
        self.expires: str | None = None
        self.poll_fails = 0  # the next N polls fail
        self.platform: Any = None
        self.transport = httpx.MockTransport(self._handle)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        actions = [a["action"] for a in self.platform.actions] if self.platform is not None else []
        if request.method == "POST":
            body = json.loads(request.content)
            self.posts.append({"at": anyio.current_time(), "url": str(request.url), "body": body, "actions": actions})
            if body.get("eventType") == "StopFollowUp":
                self.expires = body["expiresAtUtc"]
                return httpx.Response(self.start_status, json={"pollUrl": self.poll_url, "expiresAtUtc": self.expires})
            return httpx.Response(202, json={})
        self.polls.append(anyio.current_time())
        if self.poll_fails:
            self.poll_fails -= 1
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json={"status": self.status, "expiresAtUtc": self.expires, "reply": self.reply})

    def bodies(self, event_type: str) -> list[dict[str, Any]]:
        return [p["body"] for p in self.posts if p["body"].get("eventType") == event_type]

    def extend_to(self, seconds_after_initial: float) -> None:
        [start] = self.bodies("StopFollowUp")
        initial = parse_utc(start["expiresAtUtc"])
        assert initial is not None
        self.expires = (initial + timedelta(seconds=seconds_after_initial)).isoformat().replace("+00:00", "Z")


def _harness(server: FollowUpServer, **settings: Any) -> Harness:
    return Harness(settings=with_settings(**{**SETTINGS, **settings}), machine=closed_lid_machine(), receiver=server)


class BlockingStop:
    """A Stop hook that waits on its connection: ``reply`` is set when the runtime answers."""

    def __init__(self, h: Harness, task_group: Any, **fields: Any) -> None:
        self.reply: dict[str, Any] | None = None
        self.scope = anyio.CancelScope()
        fields = {"IsProviderSessionEnd": True, "SessionEndReason": "Stop", "WaitForFollowUp": True,
                  "LastAssistantMessage": "All tests pass.", **fields}

        async def run() -> None:
            with self.scope:
                self.reply = await h.stop(**fields)

        task_group.start_soon(run)


async def _wait_for(predicate: Any, seconds: float = 600) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.05)


def _suspends(h: Harness) -> int:
    return h.actions().count("suspend-requested")


def test_reply_restores_the_session_and_hands_the_text_to_the_waiting_stop():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start(WorkingDirectory="/work/app", InputPromptPreview="fix the tests")
        began = anyio.current_time()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(DELAY - 0.1)
            assert server.posts == [] and stop.reply is None  # the post-stop delay comes first
            await _wait_for(lambda: server.posts)
            [post] = server.posts
            assert post["at"] - began >= DELAY and "protection-released" not in post["actions"]
            sent = post["body"]
            assert post["url"] == HOOK
            assert set(sent) == {"eventType", "reason", "followUpId", "provider", "providerName", "sessionIdentifier",
                                 "workingDirectory", "inputPromptPreview", "lastAssistantMessage", "createdAtUtc",
                                 "expiresAtUtc"}
            assert sent["eventType"] == "StopFollowUp" and sent["reason"] == "SessionEnded"
            assert uuid.UUID(sent["followUpId"]).version == 4
            assert sent["provider"] == "Claude" and sent["providerName"] is None and sent["sessionIdentifier"] == "s1"
            assert sent["workingDirectory"] == "/work/app" and sent["inputPromptPreview"] == "fix the tests"
            assert sent["lastAssistantMessage"] == "All tests pass."
            created, expires = parse_utc(sent["createdAtUtc"]), parse_utc(sent["expiresAtUtc"])
            assert created and expires and expires - created == timedelta(seconds=WINDOW)
            assert h.runtime.reply(True, "")["PendingSuspend"]["Stage"] == "follow-up"
            await anyio.sleep(5)
            assert len(server.polls) == 2 and server.polls[1] - server.polls[0] == 2  # every 2 s
            assert stop.reply is None  # still waiting
            server.status, server.reply = "Replied", "now run the integration tests"
            await _wait_for(lambda: stop.reply is not None, 3)
        assert stop.reply is not None
        assert stop.reply["Succeeded"] is True and stop.reply["FollowUpReply"] == "now run the integration tests"
        assert stop.reply["FollowUpOutcome"] == "Replied"
        assert list(h.runtime.state.sessions) and h.runtime.suspend.pending is None
        assert h.runtime.protection.applied and h.runtime.state.protection_wanted
        assert "stop-follow-up-replied" in h.log_names()
        polls = len(server.polls)
        await anyio.sleep(300)
        assert _suspends(h) == 0 and len(server.polls) == polls
        assert server.bodies("PreSuspend") == [] and server.bodies("PostSessionEnd") == []  # not an end

    run_mock(lambda: with_runtime(_harness(server, PostSessionEndWebhookUrl=PRE), body))


def test_continued_stop_asks_again_when_repeat_is_on():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            first = BlockingStop(h, tg)
            await _wait_for(lambda: server.polls)
            server.status, server.reply = "Replied", "continue"
            await _wait_for(lambda: first.reply is not None)
            server.status, server.reply = "Pending", None
            began = anyio.current_time()
            second = BlockingStop(h, tg, StopHookActive=True)
            await _wait_for(lambda: len(server.bodies("StopFollowUp")) == 2)
            assert anyio.current_time() - began >= DELAY  # the delay again, then the second question
            server.status = "Expired"
            await _wait_for(lambda: second.reply is not None)
        assert second.reply is not None and "FollowUpReply" not in second.reply
        await _wait_for(lambda: _suspends(h) == 1)

    run_mock(lambda: with_runtime(_harness(server), body))


def test_continued_stop_with_repeat_off_suspends_at_once_without_asking():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        began = anyio.current_time()
        reply = await h.stop(IsProviderSessionEnd=True, StopHookActive=True, WaitForFollowUp=True)
        assert anyio.current_time() - began < 0.5  # no wait: the hook is answered at once
        assert reply["FollowUpOutcome"] == "NotAsked" and "FollowUpReply" not in reply
        await anyio.sleep(0.5)
        assert _suspends(h) == 1 and server.bodies("StopFollowUp") == []

    run_mock(lambda: with_runtime(_harness(server, RepeatClosedLidStopFollowUp=False), body))


def test_canceled_runs_the_same_suspend_at_once_with_presuspend_and_sound():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(DELAY + 5)
            server.status = "Canceled"
            await _wait_for(lambda: stop.reply is not None)
            canceled_at = server.polls[-1]
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "Canceled"
        assert "FollowUpReply" not in stop.reply
        await _wait_for(lambda: _suspends(h) == 1, 1)
        [pre] = [p for p in server.posts if p["body"]["eventType"] == "PreSuspend"]
        assert pre["at"] - canceled_at < 0.5  # 0 s delay
        assert "sound-played" not in pre["actions"] and "protection-released" not in pre["actions"]
        actions = h.actions()
        assert actions.index("sound-played") < actions.index("protection-released") < actions.index(
            "suspend-requested")
        assert "stop-follow-up-canceled" in h.log_names()

    run_mock(lambda: with_runtime(_harness(server, PostStopSuspendSound="Beep"), body))


def test_no_reply_expires_at_the_initial_deadline_and_falls_through_to_suspend():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        began = anyio.current_time()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(DELAY + WINDOW - 0.5)
            assert stop.reply is None and _suspends(h) == 0
            assert h.runtime.protection.applied  # held for the whole wait
            await _wait_for(lambda: stop.reply is not None, 2)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "Expired"
        await _wait_for(lambda: _suspends(h) == 1, 1)
        assert anyio.current_time() - began >= DELAY + WINDOW
        assert len(server.bodies("PreSuspend")) == 1
        assert 28 <= len(server.polls) <= 31
        assert "stop-follow-up-expired" in h.log_names()

    run_mock(lambda: with_runtime(_harness(server), body))


def _extension_case(extend_by: float, expected_end: float) -> None:
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        began = anyio.current_time()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(DELAY + 20)
            server.extend_to(extend_by)  # the dashboard's Extend, reported by the next poll
            await anyio.sleep(expected_end - 20 - 1)
            assert stop.reply is None and _suspends(h) == 0
            assert parse_utc(h.runtime.reply(True, "")["PendingSuspend"]["DeadlineUtc"]) is not None
            await _wait_for(lambda: stop.reply is not None, 3)
        await _wait_for(lambda: _suspends(h) == 1, 1)
        elapsed = anyio.current_time() - began
        assert DELAY + expected_end <= elapsed <= DELAY + expected_end + 1

    run_mock(lambda: with_runtime(_harness(server), body))


def test_expires_at_utc_extends_the_wait():
    _extension_case(extend_by=120, expected_end=WINDOW + 120)


def test_extension_never_goes_past_the_initial_deadline_plus_five_minutes():
    _extension_case(extend_by=3600, expected_end=WINDOW + 300)


def test_invalid_poll_url_is_logged_and_falls_through_to_suspend_without_polling_or_sound():
    server = FollowUpServer(poll_url="http://evil.test/api/follow-ups/abc/token")

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: stop.reply is not None, DELAY + 1)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "NotStarted"
        await _wait_for(lambda: _suspends(h) == 1, 1)
        assert server.polls == [] and "sound-played" not in h.actions()
        assert "stop-follow-up-invalid-poll-url" in h.log_names()

    run_mock(lambda: with_runtime(_harness(server, ClosedLidStopFollowUpSound="Asterisk"), body))


def test_failed_start_falls_through_to_suspend():
    server = FollowUpServer(start_status=500)

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: stop.reply is not None, DELAY + 1)
        await _wait_for(lambda: _suspends(h) == 1, 1)
        assert "stop-follow-up-webhook-failed" in h.log_names() and server.polls == []

    run_mock(lambda: with_runtime(_harness(server), body))


def test_sound_plays_once_after_a_valid_start_and_a_failing_sound_does_not_stop_the_wait():
    server = FollowUpServer()
    harness = _harness(server, ClosedLidStopFollowUpSound="Asterisk",
                       ClosedLidStopFollowUpSoundVolumeOverridePercent=40)

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: server.polls)
            played = [a for a in h.platform.actions if a["action"] == "sound-played"]
            assert [(a["sound"], a["volumePercent"]) for a in played] == [("Asterisk", 40)]
            assert "sound-played" not in server.posts[0]["actions"]  # after the start, before polling
            server.status, server.reply = "Replied", "go on"
            await _wait_for(lambda: stop.reply is not None)
            assert stop.reply is not None and stop.reply["FollowUpReply"] == "go on"
        assert len([a for a in h.platform.actions if a["action"] == "sound-played"]) == 1

        class Broken:
            def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
                raise OSError("no audio device")

        h.platform.sound = Broken()
        server.status, server.reply = "Pending", None
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg, StopHookActive=True)
            await _wait_for(lambda: len(server.polls) > 1 + len(played) + 20)
            assert stop.reply is None  # still waiting after the failure
            server.status, server.reply = "Replied", "again"
            await _wait_for(lambda: stop.reply is not None)
        assert "stop-follow-up-sound-failed" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_failed_polls_are_retried_until_a_reply():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            server.poll_fails = 5
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 5)
            server.status, server.reply = "Replied", "keep going"
            await _wait_for(lambda: stop.reply is not None)
        assert stop.reply is not None and stop.reply["FollowUpReply"] == "keep going"
        assert h.log_names().count("stop-follow-up-poll-failed") == 1

    run_mock(lambda: with_runtime(_harness(server), body))


def test_a_new_prompt_cancels_the_wait_and_answers_the_hook():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 2)
            await h.start(InputPromptPreview="typed at the keyboard")
            await _wait_for(lambda: stop.reply is not None, 1)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "Ended"
        polls = len(server.polls)
        await anyio.sleep(WINDOW * 3)
        assert len(server.polls) == polls and _suspends(h) == 0 and h.runtime.suspend.pending is None
        assert h.runtime.protection.applied and list(h.runtime.state.sessions)

    run_mock(lambda: with_runtime(_harness(server), body))


def test_activity_during_the_post_stop_delay_answers_the_hook_before_anything_is_sent():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start("s1")
        await h.start("s2")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s2", SessionStateReason="x")
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await anyio.sleep(3)
            await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s2")
            await _wait_for(lambda: stop.reply is not None, 1)
        await anyio.sleep(DELAY * 2)
        assert server.posts == [] and _suspends(h) == 0

    run_mock(lambda: with_runtime(_harness(server), body))


def test_emergency_hibernation_cancels_the_wait():
    server = FollowUpServer()
    harness = _harness(server, EmergencyHibernationOnHighTemperature=True)

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 2)
            h.platform.machine.temperatures_celsius = [99.0]
            await _wait_for(lambda: stop.reply is not None, 11)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "Ended"
        assert h.actions().count("hibernate-requested") == 1
        polls = len(server.polls)
        await anyio.sleep(WINDOW * 3)
        assert len(server.polls) == polls and _suspends(h) == 0

    run_mock(lambda: with_runtime(harness, body))


def test_a_hook_that_goes_away_leaves_the_wait_running_and_the_runtime_consistent():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 1)
            stop.scope.cancel()  # the hook was killed (Esc): nobody reads the answer any more
        assert stop.reply is None and h.runtime.suspend.pending is not None
        server.status = "Expired"
        await _wait_for(lambda: _suspends(h) == 1, 5)
        assert h.runtime.suspend.pending is None and not h.runtime.busy()
        assert h.runtime.reply(True, "")["Succeeded"] is True
        # the next turn works as usual
        await h.start()
        assert h.runtime.protection.applied

    run_mock(lambda: with_runtime(_harness(server), body))


def test_a_reply_nobody_reads_still_restores_the_session():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: len(server.polls) >= 1)
            stop.scope.cancel()
        server.status, server.reply = "Replied", "lost"
        await _wait_for(lambda: h.runtime.suspend.pending is None, 5)
        assert list(h.runtime.state.sessions) and h.runtime.protection.applied and _suspends(h) == 0

    run_mock(lambda: with_runtime(_harness(server), body))


def test_without_the_feature_or_with_another_session_active_the_hook_is_answered_at_once():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start("s1")
        await h.start("s2")
        began = anyio.current_time()
        reply = await h.stop("s1", IsProviderSessionEnd=True, WaitForFollowUp=True)
        assert reply["FollowUpOutcome"] == "NotAsked" and anyio.current_time() - began < 0.5
        h.runtime.update_settings(with_settings(**{**SETTINGS, "ClosedLidStopFollowUpDelaySeconds": 19}))
        reply = await h.stop("s2", IsProviderSessionEnd=True, WaitForFollowUp=True)
        assert reply["FollowUpOutcome"] == "NotAsked" and anyio.current_time() - began < 0.5
        await anyio.sleep(DELAY + 1)
        assert _suspends(h) == 1 and server.bodies("StopFollowUp") == []

    run_mock(lambda: with_runtime(_harness(server), body))


def test_runtime_shutdown_answers_a_waiting_hook():
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg)
            await _wait_for(lambda: server.polls)
            reply = await h.send("shutdown", Force=True)
            assert reply["Succeeded"] is True
            await _wait_for(lambda: stop.reply is not None, 1)
        assert stop.reply is not None and "FollowUpReply" not in stop.reply
        assert _suspends(h) == 0

    run_mock(lambda: with_runtime(_harness(server), body))



def test_the_runtime_answers_a_hook_before_its_wait_ends_and_goes_on_with_the_suspend():
    """The hook says it waits 40 s (its agent kills it soon after): the runtime answers it 5 s before
    that, stops holding the reply wait for a hook that cannot hear a reply, and suspends once."""
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        began = anyio.current_time()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg, FollowUpWaitSeconds=40)
            await anyio.sleep(34.9)
            assert stop.reply is None and len(server.bodies("StopFollowUp")) == 1
            await _wait_for(lambda: stop.reply is not None, 0.2)
        assert stop.reply is not None and stop.reply["FollowUpOutcome"] == "HookTimedOut"
        assert anyio.current_time() - began == pytest.approx(35, abs=0.1)
        await _wait_for(lambda: _suspends(h) == 1, 3)
        assert len(server.bodies("PreSuspend")) == 1
        assert "stop-follow-up-hook-timed-out" in h.log_names()
        await anyio.sleep(120)
        assert _suspends(h) == 1

    run_mock(lambda: with_runtime(_harness(server), body))


@pytest.mark.parametrize("budget", [-1, 0, True, "40", 1e300, float("nan"), 10**12, None, [40]])
def test_a_garbage_wait_budget_never_fails_the_stop(budget):
    server = FollowUpServer()

    async def body(h: Harness) -> None:
        await h.start()
        async with anyio.create_task_group() as tg:
            stop = BlockingStop(h, tg, FollowUpWaitSeconds=budget)
            await _wait_for(lambda: len(server.bodies("StopFollowUp")) == 1, DELAY + 5)
            server.status, server.reply = "Replied", "go on"
            await _wait_for(lambda: stop.reply is not None, 10)
        assert stop.reply is not None and stop.reply["Succeeded"] and stop.reply["FollowUpReply"] == "go on"

    run_mock(lambda: with_runtime(_harness(server), body))
