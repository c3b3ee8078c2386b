"""A blocking Stop through the real socket server (in-process, trio MockClock): the hook's connection
stays open during the reply wait and gets ``FollowUpReply``; a hook killed while it waits (the user
pressed Esc) closes its connection, the wait goes on, the unwritable answer is dropped quietly and
the runtime keeps serving."""

from __future__ import annotations

import functools
import json
from typing import Any

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_settings
from test_followup_flow import DELAY, SETTINGS, FollowUpServer

from lidguard.ipc.protocol import encode_message
from lidguard.runtime import server as runtime_server

STOP = {"Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1", "IsProviderSessionEnd": True,
        "WaitForFollowUp": True, "LastAssistantMessage": "Done."}


async def _request(path: Any, message: dict[str, Any]) -> dict[str, Any]:
    stream = await anyio.connect_unix(path)
    async with stream:
        await stream.send(encode_message(message))
        data = b""
        while not data.endswith(b"\n"):
            data += await stream.receive()
    return json.loads(data)


def _run(body: Any) -> None:
    follow_up = FollowUpServer()
    h = Harness(settings=with_settings(**SETTINGS), machine=closed_lid_machine(), receiver=follow_up)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            await group.start(functools.partial(runtime_server.serve, h.runtime, h.paths))
            await body(h, follow_up)
            h.runtime.exit_requested.set()

    run_mock(main)
    assert not h.paths.exception_log_file.exists(), h.paths.exception_log_file.read_text()


async def _wait_for(predicate: Any, seconds: float = 120) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.05)


def test_the_hook_connection_waits_and_receives_the_reply():
    async def body(h: Harness, follow_up: FollowUpServer) -> None:
        assert (await _request(h.paths.socket_file, {"Command": "start", "Provider": "Claude",
                                                     "SessionIdentifier": "s1"}))["Succeeded"]
        answers: list[dict[str, Any]] = []

        async def hook() -> None:
            answers.append(await _request(h.paths.socket_file, STOP))

        async with anyio.create_task_group() as group:
            group.start_soon(hook)
            await _wait_for(lambda: len(follow_up.polls) >= 3)
            assert answers == []  # the connection is still open, well past the write timeout of a reply
            follow_up.status, follow_up.reply = "Replied", "now run the integration tests \u2713"
        [answer] = answers
        assert answer["FollowUpReply"] == "now run the integration tests \u2713"
        assert list(h.runtime.state.sessions)

    _run(body)


def test_a_hook_killed_while_waiting_leaves_the_runtime_consistent():
    async def body(h: Harness, follow_up: FollowUpServer) -> None:
        assert (await _request(h.paths.socket_file, {"Command": "start", "Provider": "Claude",
                                                     "SessionIdentifier": "s1"}))["Succeeded"]
        stream = await anyio.connect_unix(h.paths.socket_file)
        await stream.send(encode_message(STOP))
        await anyio.sleep(DELAY + 3)
        assert follow_up.polls
        await stream.aclose()  # Esc: the hook process is gone
        await anyio.sleep(5)
        assert h.runtime.suspend.pending is not None  # the wait goes on
        status = await _request(h.paths.socket_file, {"Command": "status"})
        assert status["Succeeded"] and status["PendingSuspend"]["Stage"] == "follow-up"
        follow_up.status, follow_up.reply = "Replied", "nobody reads this"
        await _wait_for(lambda: h.runtime.suspend.pending is None)
        await anyio.sleep(1)  # the runtime tried to answer the closed connection
        status = await _request(h.paths.socket_file, {"Command": "status"})
        assert [s["SessionIdentifier"] for s in status["Sessions"]] == ["s1"]
        assert h.runtime.protection.applied and "suspend-requested" not in h.actions()

    _run(body)
