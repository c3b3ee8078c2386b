"""``runtime/connection_tasks.py``: on asyncio each connection gets a bare task (anyio's per-task cost was a
tenth of a request's), and the server still stops as a task group would: whatever runs is cancelled and
awaited, a failure is recorded. On trio the connection goes to the task group."""

from __future__ import annotations

import contextlib
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


def _read_reply(sock: socket.socket) -> bytes:
    """The reply line; fails (never spins) when the server closes first."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        assert chunk, "closed before the reply"
        data += chunk
    return data


@pytest.mark.parametrize("tail", [b"", b"more bytes after the request line", b"x" * 200_000])
def test_a_client_that_sent_more_than_its_line_still_reads_its_reply(tail: bytes) -> None:
    """The server drains what a client sent after its request line before closing (closing over unread
    input resets the connection, and the client would lose the reply); a client that sent just its line
    needs no drain."""
    harness = Harness()
    replies: list[dict[str, Any]] = []

    def client(path: str) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(path)
            line = encode_message({"Command": "status"})
            sock.sendall(line + tail[:1000])
            if len(tail) > 1000:
                with contextlib.suppress(OSError):
                    sock.sendall(tail[1000:])  # the server may have closed after draining its limit
            replies.append(json.loads(_read_reply(sock)))

    async def main() -> None:
        async with anyio.create_task_group() as group:
            await group.start(functools.partial(runtime_server.serve, harness.runtime, harness.paths))
            for _ in range(5):
                await anyio.to_thread.run_sync(client, str(harness.paths.socket_file))
            harness.runtime.exit_requested.set()

    run_on("asyncio", main)
    assert len(replies) == 5 and all(reply["Succeeded"] for reply in replies), replies


def test_only_a_client_that_sent_more_than_its_line_is_drained(monkeypatch: pytest.MonkeyPatch) -> None:
    harness = Harness()
    drained: list[bool] = []
    real = runtime_server._drain_and_close

    def recording(sock: socket.socket, drain: bool = True) -> None:
        drained.append(drain)
        real(sock, drain)

    monkeypatch.setattr(runtime_server, "_drain_and_close", recording)

    def client(path: str, tail: bytes) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(path)
            sock.sendall(encode_message({"Command": "status"}) + tail)
            assert json.loads(_read_reply(sock))["Succeeded"]

    async def main() -> None:
        async with anyio.create_task_group() as group:
            await group.start(functools.partial(runtime_server.serve, harness.runtime, harness.paths))
            await anyio.to_thread.run_sync(client, str(harness.paths.socket_file), b"")
            await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(client, str(harness.paths.socket_file), b"extra")
            await anyio.sleep(0.05)
            harness.runtime.exit_requested.set()

    run_on("asyncio", main)
    assert drained == [False, True]
