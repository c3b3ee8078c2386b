"""The pending suspend in seed order (REFERENCE 9.3), one rule per test, on trio's MockClock.

protection kept -> PostStopSuspendDelaySeconds -> PreSuspend webhook (5 s bound, never fatal) ->
post-stop sound to completion -> final re-check -> release protection -> request -> history.
Webhooks go to an in-process receiver (httpx.MockTransport) that records when each POST arrived.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import Harness, WebhookReceiver, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.platform.api import LidState
from lidguard.platform.fake import FakeMachine

URL = "http://receiver.test/hook"
END = "http://receiver.test/end"


def _harness(receiver: WebhookReceiver | None = None, machine: FakeMachine | None = None,
             **settings: Any) -> Harness:
    values = {"PreSuspendWebhookUrl": URL, **settings}
    return Harness(settings=with_settings(**values), machine=machine or closed_lid_machine(),
                   receiver=receiver or WebhookReceiver())


def _provider_stop(h: Harness, session: str = "s1", **fields: Any) -> Any:
    return h.stop(session, IsProviderSessionEnd=True, SessionEndReason="Stop", **fields)


def test_pre_suspend_is_posted_after_the_delay_and_before_the_sound_with_the_session_identity():
    receiver = WebhookReceiver()
    harness = _harness(receiver, PostStopSuspendSound="Beep")

    async def body(h: Harness) -> None:
        await h.start(WorkingDirectory="/work/project", TranscriptPath="/tmp/t.jsonl",
                      InputPromptPreview="fix the tests")
        started = anyio.current_time()
        await _provider_stop(h, LastAssistantMessage="All tests pass now.")
        await anyio.sleep(9.9)
        assert receiver.requests == []  # nothing before the delay ends
        await anyio.sleep(0.2)
        [request] = receiver.requests
        assert request["at"] - started >= 10
        assert "sound-played" not in request["actions"] and "protection-released" not in request["actions"]
        assert request["contentType"] == "application/json; charset=utf-8"
        posted = request["body"]
        assert posted["eventType"] == "PreSuspend" and posted["reason"] == "Completed"
        assert "softLockedSessionCount" not in posted
        assert posted["provider"] == "Claude" and posted["sessionIdentifier"] == "s1"
        assert posted["lastAssistantMessage"] == "All tests pass now."
        assert posted["inputPromptPreview"] == "fix the tests"
        assert posted["workingDirectory"] == "/work/project" and posted["transcriptPath"] == "/tmp/t.jsonl"
        assert posted["endReason"] == "Stop" and posted["activeSessionCount"] == 0
        assert posted["endedAtUtc"].endswith("Z") and posted["startedAtUtc"].endswith("Z")
        assert "providerName" not in posted  # Mcp only
        await anyio.sleep(1)
        actions = h.actions()
        assert actions.index("sound-played") < actions.index("protection-released") < actions.index(
            "suspend-requested")
        assert actions.count("suspend-requested") == 1
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is True and entry["Reason"] == "Completed"

    run_mock(lambda: with_runtime(harness, body))


def test_protection_is_still_applied_while_the_sound_plays():
    harness = _harness(PostStopSuspendSound="Beep", PostStopSuspendSoundVolumeOverridePercent=40)
    seen: list[tuple[bool, int | None, str | None]] = []
    play = harness.platform.play

    def recording_play(sound: str, *, volume_percent: int | None) -> list[str]:
        pending = harness.runtime.suspend.pending
        seen.append((harness.runtime.protection.applied, volume_percent, pending.stage if pending else None))
        return play(sound, volume_percent=volume_percent)

    harness.platform.play = recording_play  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(11)
        assert seen == [(True, 40, "sound")]
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_prompt_9_9_seconds_into_a_10_second_delay_cancels_and_sends_nothing():
    receiver = WebhookReceiver()
    harness = _harness(receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h)
        await anyio.sleep(9.9)
        await h.start()  # the user's next prompt
        await anyio.sleep(60)
        assert receiver.requests == []
        assert "suspend-requested" not in h.actions()
        assert "stop-suspend-canceled" in h.log_names()
        assert h.runtime.protection.applied and "protection-released" not in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_activity_during_the_delay_cancels_and_keeps_protection():
    receiver = WebhookReceiver()
    harness = _harness(receiver)

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        await anyio.sleep(3)
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="a", SessionStateReason="PreToolUse")
        await anyio.sleep(60)
        assert receiver.requests == [] and "suspend-requested" not in h.actions()
        assert "mark-session-softlocked-suspend-canceled" in h.log_names()
        assert h.runtime.protection.applied

    run_mock(lambda: with_runtime(harness, body))


def test_cancel_before_pre_suspend_falls_back_to_post_session_end():
    receiver = WebhookReceiver()
    harness = _harness(receiver, PostSessionEndWebhookUrl=END)

    async def body(h: Harness) -> None:
        await h.start(InputPromptPreview="write docs")
        await _provider_stop(h, LastAssistantMessage="Done.")
        await anyio.sleep(5)
        assert receiver.requests == []  # suppressed while the suspend is pending
        await h.start("other")
        await anyio.sleep(1)
        [posted] = receiver.bodies()
        assert posted["eventType"] == "PostSessionEnd" and posted["reason"] == "SessionEnded"
        assert posted["sessionIdentifier"] == "s1" and posted["lastAssistantMessage"] == "Done."
        assert posted["inputPromptPreview"] == "write docs"
        assert receiver.requests[0]["url"] == END

    run_mock(lambda: with_runtime(harness, body))


def test_cancel_after_pre_suspend_was_attempted_sends_no_post_session_end():
    receiver = WebhookReceiver(delay=10)
    harness = _harness(receiver, PostSessionEndWebhookUrl=END)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h)
        await anyio.sleep(12)  # PreSuspend is in flight (the receiver is slow)
        assert [r["body"]["eventType"] for r in receiver.requests] == ["PreSuspend"]
        await h.start()
        await anyio.sleep(30)
        assert [r["body"]["eventType"] for r in receiver.requests] == ["PreSuspend"]
        assert "suspend-requested" not in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_post_session_end_only_for_a_provider_reported_end_that_schedules_no_suspend():
    receiver = WebhookReceiver()
    harness = _harness(receiver, machine=FakeMachine(lid=LidState.OPEN), PostSessionEndWebhookUrl=END)

    async def body(h: Harness) -> None:
        await h.start("manual")
        await h.stop("manual")  # manual stop: never
        await h.start("removed")
        await h.send("remove-session", Provider="Claude", SessionIdentifier="removed")  # never
        await h.start("ended", WorkingDirectory="/w")
        await h.start("keeper")
        await _provider_stop(h, "ended")  # another session keeps protection: no suspend, notify
        await _provider_stop(h, "keeper")  # last one, lid open: suspend skipped, notify
        await anyio.sleep(1)
        # each PostSessionEnd goes out in a task of its own (a slow receiver holds up no other): in any order
        sent = {b["sessionIdentifier"]: b for b in receiver.bodies("PostSessionEnd")}
        assert sorted(sent) == ["ended", "keeper"] and len(receiver.bodies("PostSessionEnd")) == 2
        assert receiver.bodies("PreSuspend") == []
        assert sent["ended"]["activeSessionCount"] == 1 and sent["keeper"]["activeSessionCount"] == 0

    run_mock(lambda: with_runtime(harness, body))


def test_a_scheduled_suspend_sends_pre_suspend_instead_of_post_session_end():
    receiver = WebhookReceiver()
    harness = _harness(receiver, PostSessionEndWebhookUrl=END)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h)
        await anyio.sleep(11)
        assert [b["eventType"] for b in receiver.bodies()] == ["PreSuspend"]

    run_mock(lambda: with_runtime(harness, body))


def test_soft_locked_suspend_carries_the_soft_locked_count():
    receiver = WebhookReceiver()
    harness = _harness(receiver)

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="b", SessionStateReason="x")
        await anyio.sleep(11)
        [posted] = receiver.bodies()
        assert posted == {"eventType": "PreSuspend", "reason": "SoftLocked", "softLockedSessionCount": 2}

    run_mock(lambda: with_runtime(harness, body))


class ControlledExits:
    def __init__(self) -> None:
        self.events: dict[int, anyio.Event] = {}

    def exit(self, pid: int) -> None:
        self.events.setdefault(pid, anyio.Event()).set()

    def is_alive(self, pid: int) -> bool:
        return not (pid in self.events and self.events[pid].is_set())

    def read_ancestry(self, pid: int) -> list[Any]:
        return []

    async def wait_for_exit(self, pid: int) -> None:
        await self.events.setdefault(pid, anyio.Event()).wait()


def test_watched_exit_suspends_without_pre_suspend_or_post_session_end():
    receiver = WebhookReceiver()
    harness = _harness(receiver, PostSessionEndWebhookUrl=END)
    exits = ControlledExits()
    harness.platform.process = exits

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=4242)
        exits.exit(4242)
        await anyio.sleep(11)
        assert "watched-process-exited" in h.log_names()
        assert h.actions().count("suspend-requested") == 1
        assert receiver.requests == []

    run_mock(lambda: with_runtime(harness, body))


def test_watched_exit_leaves_the_scheduled_suspend_and_its_pre_suspend_alone():
    receiver = WebhookReceiver()
    harness = _harness(receiver, PostSessionEndWebhookUrl=END)
    exits = ControlledExits()
    harness.platform.process = exits

    async def body(h: Harness) -> None:
        await h.start("a", WatchedProcessIdentifier=77)
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        await anyio.sleep(4)
        exits.exit(77)
        await anyio.sleep(6.5)
        assert h.actions().count("suspend-requested") == 1
        assert [b["reason"] for b in receiver.bodies()] == ["SoftLocked"]  # the original one, once

    run_mock(lambda: with_runtime(harness, body))


def test_cleanup_orphans_sends_no_webhook():
    receiver = WebhookReceiver()
    harness = _harness(receiver, machine=FakeMachine(lid=LidState.OPEN), PostSessionEndWebhookUrl=END)
    exits = ControlledExits()
    harness.platform.process = exits

    async def body(h: Harness) -> None:
        await h.start(WatchedProcessIdentifier=91)
        exits.events[91] = anyio.Event()
        exits.events[91].set()  # dead, its exit not yet observed
        await h.send("cleanup-orphans")
        await anyio.sleep(1)
        assert receiver.requests == []

    run_mock(lambda: with_runtime(harness, body))


def test_continued_stop_with_repeat_off_skips_the_delay():
    harness = _harness(RepeatClosedLidStopFollowUp=False)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h, StopHookActive=True)
        await anyio.sleep(0.5)
        assert h.actions().count("suspend-requested") == 1
        assert "immediately" in h.log_entries("stop-suspend-scheduled")[0]["Message"]

    run_mock(lambda: with_runtime(harness, body))


def test_continued_stop_with_repeat_on_keeps_the_delay():
    harness = _harness(RepeatClosedLidStopFollowUp=True)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h, StopHookActive=True)
        await anyio.sleep(9.5)
        assert "suspend-requested" not in h.actions()
        await anyio.sleep(1)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_slow_receiver_never_holds_the_suspend_past_the_5_second_bound_nor_a_status_reply():
    receiver = WebhookReceiver(delay=10)
    harness = _harness(receiver)

    async def body(h: Harness) -> None:
        await h.start()
        stopped = anyio.current_time()
        await h.stop()
        await anyio.sleep(11)  # the PreSuspend POST is waiting on the receiver
        asked = anyio.current_time()
        reply = await h.send("status")
        assert anyio.current_time() == asked  # answered without waiting (mock time did not move)
        assert receiver.finished == []  # the webhook is still in flight
        assert reply["Succeeded"] and reply["PendingSuspend"]["Stage"] == "webhook"
        await anyio.sleep(3.9)
        assert "suspend-requested" not in h.actions()
        await anyio.sleep(0.2)  # 10 s delay + the 5 s bound
        assert h.actions().count("suspend-requested") == 1
        assert 15 <= anyio.current_time() - stopped <= 15.2
        [failed] = h.log_entries("stop-suspend-webhook-failed")
        assert failed["Message"] == "The PreSuspend webhook request timed out." and failed["Succeeded"] is False

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("receiver_kind, expected", [
    ("down", "The PreSuspend webhook request failed: connection refused"),
    ("500", "The PreSuspend webhook returned 500 (Internal Server Error)."),
])
def test_a_receiver_that_is_down_or_answers_500_is_logged_and_the_suspend_is_on_time(receiver_kind, expected):
    receiver = WebhookReceiver(down=True) if receiver_kind == "down" else WebhookReceiver(status=500)
    harness = _harness(receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(10.1)
        assert h.actions().count("suspend-requested") == 1
        assert [e["Message"] for e in h.log_entries("stop-suspend-webhook-failed")] == [expected]

    run_mock(lambda: with_runtime(harness, body))


def test_status_shows_the_pending_suspend_with_its_deadline_and_stage():
    harness = _harness(PostStopSuspendDelaySeconds=30)

    async def body(h: Harness) -> None:
        await h.start()
        reply = await h.stop()
        pending = reply["PendingSuspend"]
        assert pending["Mode"] == "Sleep" and pending["Reason"] == "Completed" and pending["Stage"] == "delay"
        assert pending["DeadlineUtc"] == "2026-11-30T12:00:30Z"
        assert (await h.send("status"))["PendingSuspend"] == pending
        await anyio.sleep(31)
        assert (await h.send("status"))["PendingSuspend"] is None

    run_mock(lambda: with_runtime(harness, body))


def test_cleanup_waits_for_an_in_flight_post_session_end():
    receiver = WebhookReceiver(delay=3)
    harness = _harness(receiver, machine=FakeMachine(lid=LidState.OPEN), PostSessionEndWebhookUrl=END,
                       ServerRuntimeCleanupDelayMinutes=None)

    async def body(h: Harness) -> None:
        await h.start()
        await _provider_stop(h)
        await anyio.sleep(1)
        assert len(receiver.requests) == 1 and not h.runtime.exit_requested.is_set()
        assert h.runtime.busy()
        await anyio.sleep(2.5)
        assert receiver.finished and h.runtime.exit_requested.is_set()

    run_mock(lambda: with_runtime(harness, body))


def test_a_bad_webhook_url_is_logged_and_never_fails_the_suspend():
    harness = _harness()
    harness.runtime.settings = harness.runtime.settings.replace(**{"pre_suspend_webhook_url": "ftp://x"})

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(11)
        assert h.actions().count("suspend-requested") == 1
        [failed] = h.log_entries("stop-suspend-webhook-failed")
        assert "not an absolute http or https URL" in failed["Message"]

    run_mock(lambda: with_runtime(harness, body))
