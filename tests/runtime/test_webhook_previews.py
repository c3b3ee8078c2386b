"""Privacy (issue 19 item 5, part): ``WebhookPreviews`` false keeps the prompt preview and the last
assistant message out of every webhook (PreSuspend, PostSessionEnd, StopFollowUp); the rest of each
body is unchanged. Default true (the seeds' fields)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from lidguard_runtime_harness import Harness, WebhookReceiver, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.settings.model import Settings

PRE = "http://receiver.test/pre"
END = "http://receiver.test/end"
PREVIEWS = {"inputPromptPreview", "lastAssistantMessage"}


def _flow(previews: bool) -> list[dict[str, Any]]:
    receiver = WebhookReceiver()
    settings = with_settings(PreSuspendWebhookUrl=PRE, PostSessionEndWebhookUrl=END, WebhookPreviews=previews)
    harness = Harness(settings=settings, machine=closed_lid_machine(), receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start("a", InputPromptPreview="secret prompt")
        await h.start("b", InputPromptPreview="other secret")
        await h.stop("b", IsProviderSessionEnd=True, SessionEndReason="Stop", LastAssistantMessage="secret answer")
        await h.stop("a", IsProviderSessionEnd=True, SessionEndReason="Stop", LastAssistantMessage="secret answer")
        await anyio.sleep(11)

    run_mock(lambda: with_runtime(harness, body))
    return receiver.bodies()


def test_previews_are_sent_by_default_and_left_out_when_off():
    on = _flow(True)
    assert [b["eventType"] for b in on] == ["PostSessionEnd", "PreSuspend"]
    assert all(PREVIEWS <= set(b) for b in on)
    off = _flow(False)
    assert [b["eventType"] for b in off] == ["PostSessionEnd", "PreSuspend"]
    assert all(not PREVIEWS & set(b) for b in off)
    assert [{k: v for k, v in b.items() if k not in PREVIEWS and not k.endswith("AtUtc")} for b in on] == [
        {k: v for k, v in b.items() if not k.endswith("AtUtc")} for b in off]
    assert "secret" not in json.dumps(off)


def test_stop_follow_up_leaves_previews_out_when_off():
    posts: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            posts.append(json.loads(request.content))
            return httpx.Response(202, json={"pollUrl": "http://notify.test/poll/x", "expiresAtUtc": None})
        return httpx.Response(200, json={"status": "Canceled"})

    class Receiver(WebhookReceiver):
        def __init__(self) -> None:
            super().__init__()
            self.transport = httpx.MockTransport(handle)

    settings = with_settings(ClosedLidStopFollowUpWebhookUrl="http://notify.test/hook",
                             ClosedLidStopFollowUpDelaySeconds=60, PostStopSuspendDelaySeconds=10,
                             WebhookPreviews=False)
    harness = Harness(settings=settings, machine=closed_lid_machine(), receiver=Receiver())

    async def body(h: Harness) -> None:
        await h.start(InputPromptPreview="secret prompt")
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: h.stop(IsProviderSessionEnd=True, SessionEndReason="Stop", WaitForFollowUp=True,
                                         LastAssistantMessage="secret answer"))
            await anyio.sleep(20)

    run_mock(lambda: with_runtime(harness, body))
    [follow_up] = [p for p in posts if p["eventType"] == "StopFollowUp"]
    assert not PREVIEWS & set(follow_up) and follow_up["sessionIdentifier"] == "s1"


@pytest.mark.parametrize(("stored", "expected"), [({}, True), ({"WebhookPreviews": False}, False),
                                                  ({"WebhookPreviews": "no"}, True), ({"WebhookPreviews": 0}, True)])
def test_the_setting_takes_only_json_booleans(stored, expected):
    assert Settings.from_raw(stored).webhook_previews is expected
