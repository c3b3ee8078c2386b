"""``runtime/connection_tasks.py``: on asyncio each connection gets a bare task (anyio's per-task cost was a
tenth of a request's), and the server still stops as a task group would: whatever runs is cancelled and
awaited, a failure is recorded. On trio the connection goes to the task group."""

from __future__ import annotations

import functools
import json
import socket
from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import Harness, run_on

from lidguard.ipc.protocol import encode_message
from lidguard.runtime import server as runtime_server
from lidguard.runtime.connection_tasks import ConnectionTasks


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_tasks_run_and_closing_cancels_and_awaits_what_still_runs(backend: str) -> None:
    ran: list[int] = []
    cleaned: list[int] = []
    errors: list[tuple[str, BaseException]] = []

    async def short(index: int) -> None:
        await anyio.sleep(0)
        ran.append(index)

    async def stuck(index: int) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled connection still awaits its cleanup
                await anyio.sleep(0)
            cleaned.append(index)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            tasks = ConnectionTasks(group, lambda name, error: errors.append((name, error)))
            assert tasks.bare is (backend == "asyncio")
            for index in range(50):
                tasks.start(short, index)
            for index in range(3):
                tasks.start(stuck, index)
            await anyio.sleep(0.05)
            assert sorted(ran) == list(range(50))
            if tasks.bare:
                assert len(tasks) == 3  # finished tasks leave the set
                with anyio.fail_after(10):
                    await tasks.aclose()
                assert len(tasks) == 0 and sorted(cleaned) == [0, 1, 2]
            group.cancel_scope.cancel()
        assert sorted(cleaned) == [0, 1, 2] and not errors

    run_on(backend, main)


def test_a_bare_task_that_fails_is_recorded() -> None:
    errors: list[tuple[str, BaseException]] = []

    async def failing() -> None:
        raise ValueError("boom")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            tasks = ConnectionTasks(group, lambda name, error: errors.append((name, error)))
            tasks.start(failing)
            await anyio.sleep(0.01)
            await tasks.aclose()
        assert [(name, str(error)) for name, error in errors] == [("connection-task-failed", "boom")]

    run_on("asyncio", main)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_server_answers_and_stops_with_a_silent_connection_open(backend: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A request is answered through the connection tasks; a client that connected and never wrote is
    cut off when the runtime exits (its task cancelled, its socket closed), and the server returns."""
    made: list[ConnectionTasks] = []

    class Recorded(ConnectionTasks):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(runtime_server, "ConnectionTasks", Recorded)
    harness = Harness()
    reply: dict[str, Any] = {}
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    async def main() -> None:
        path = harness.paths.socket_file
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                await group.start(functools.partial(runtime_server.serve, harness.runtime, harness.paths))
                stream = await anyio.connect_unix(path)
                async with stream:
                    await stream.send(encode_message({"Command": "start", "Provider": "Claude",
                                                      "SessionIdentifier": "s1"}))
                    data = b""
                    while not data.endswith(b"\n"):
                        data += await stream.receive()
                reply.update(json.loads(data))
                silent.connect(str(path))
                await anyio.sleep(0.05)  # accepted: its task waits for a request that never comes
                harness.runtime.exit_requested.set()

    try:
        run_on(backend, main)
        silent.settimeout(5)
        try:
            left = silent.recv(100)
        except ConnectionResetError:
            left = b""
        assert left == b""  # closed by the server, not left open
    finally:
        silent.close()
    assert reply.get("Succeeded") is True, reply
    [tasks] = made
    assert tasks.started == 2 and tasks.bare is (backend == "asyncio") and len(tasks) == 0
    assert not harness.paths.exception_log_file.exists(), harness.paths.exception_log_file.read_text()
