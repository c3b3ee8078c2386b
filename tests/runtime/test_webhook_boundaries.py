"""Webhook boundaries: the new request fields are bounded like the others, and a real HTTP client meets
a real closed port (connection refused) without costing the suspend anything (real clock, no delay)."""

from __future__ import annotations

import socket

import anyio
import pytest
from lidguard_runtime_harness import Harness, closed_lid_machine, run_on, wait_until, with_runtime, with_settings

from lidguard.ipc.limits import MAX_ASSISTANT_MESSAGE_CHARS, MAX_PROMPT_PREVIEW_CHARS


@pytest.mark.parametrize("field, limit", [("LastAssistantMessage", MAX_ASSISTANT_MESSAGE_CHARS),
                                          ("InputPromptPreview", MAX_PROMPT_PREVIEW_CHARS)])
def test_over_long_webhook_fields_are_refused_naming_the_field(field, limit):
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        refused = await h.stop(**{field: "x" * (limit + 1)})
        assert refused["Succeeded"] is False
        assert refused["Message"] == f"The request field {field} is longer than {limit} characters."
        assert refused["ActiveSessionCount"] == 1
        accepted = await h.stop(**{field: "x" * limit, "StopHookActive": True})
        assert accepted["Succeeded"] and accepted["ActiveSessionCount"] == 0

    run_on("trio", lambda: with_runtime(harness, body))


_HELD_PORTS: list[socket.socket] = []


def _closed_port() -> int:
    """A port nobody listens on: bound but never listening (a connect is refused) and held until this
    process ends, so that no other test or parallel worker can start listening on it meanwhile."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    _HELD_PORTS.append(probe)
    return probe.getsockname()[1]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_real_receiver_that_is_down_is_logged_and_the_suspend_still_happens(backend):
    url = f"http://127.0.0.1:{_closed_port()}/hook"
    harness = Harness(machine=closed_lid_machine(),
                      settings=with_settings(PostStopSuspendDelaySeconds=0, PreSuspendWebhookUrl=url))

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop(IsProviderSessionEnd=True)
        await wait_until(lambda: "suspend-requested" in h.actions(), seconds=20)
        [failed] = h.log_entries("stop-suspend-webhook-failed")
        assert failed["Message"].startswith("The PreSuspend webhook request failed: ")
        assert (await h.send("status"))["Succeeded"]
        await anyio.sleep(0)

    run_on(backend, lambda: with_runtime(harness, body))
