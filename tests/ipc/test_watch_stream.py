"""``watch`` over the real socket server, in-process on asyncio and trio: the stream, bad input, the
caps, shutdown; and the ``ipc.watch.watch_status`` client (reconnect, stop, keep-alive, fallback)."""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from lidguard.ipc import watch as watch_client
from lidguard.ipc.client import send_request
from lidguard.ipc.transport import client_transport
from lidguard.platform.fake import FakePlatform
from lidguard.platform.paths import LidGuardPaths, resolve_paths
from lidguard.runtime import handlers, server
from lidguard.runtime.app import Runtime
from lidguard.settings import headless_defaults

BACKENDS = ["asyncio", "trio"]
WATCH = b'{"v":1,"Command":"watch"}\n'


class Reader:
    """A blocking client socket that reads the stream line by line (in a worker thread)."""

    def __init__(self, path: Path, request: bytes = WATCH) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.sock.sendall(request)
        self.buffer = b""

    def line(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def close(self) -> None:
        self.sock.close()


def _ids(message: dict[str, Any] | None) -> list[str]:
    assert message is not None
    return [s["SessionIdentifier"] for s in message["Sessions"]]


def _run(backend: str, body: Callable[[Runtime, LidGuardPaths], Awaitable[None]], **serve: Any) -> Runtime:
    paths = resolve_paths()
    runtime = Runtime(platform=FakePlatform(), paths=paths, settings=headless_defaults())

    async def main() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                await group.start(functools.partial(server.serve, runtime, paths, **serve))
                await body(runtime, paths)
                runtime.exit_requested.set()

    anyio.run(main, backend=backend)
    return runtime


async def _request(paths: LidGuardPaths, command: str, **fields: Any) -> dict[str, Any]:
    return await anyio.to_thread.run_sync(lambda: send_request(paths.socket_file, {"Command": command, **fields}))


async def _start(paths: LidGuardPaths, session: str) -> None:
    assert (await _request(paths, "start", Provider="claude", SessionIdentifier=session))["Succeeded"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_stream_carries_each_change_in_order_despite_extra_fields_and_input_after_the_request(backend):
    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        request = b'{"v":1,"Command":"watch","Sessions":"x","Extra":[1,{"a":null}],"Watch":false}\n{garbage\n'
        reader = await anyio.to_thread.run_sync(Reader, paths.socket_file, request)
        seen = [await anyio.to_thread.run_sync(reader.line)]
        await _start(paths, "a")
        seen.append(await anyio.to_thread.run_sync(reader.line))
        await _start(paths, "b")
        seen.append(await anyio.to_thread.run_sync(reader.line))
        assert (await _request(paths, "remove-session", Provider="claude", SessionIdentifier="a"))["Succeeded"]
        seen.append(await anyio.to_thread.run_sync(reader.line))
        assert [_ids(m) for m in seen] == [[], ["a"], ["a", "b"], ["b"]]
        assert [m["Sequence"] for m in seen if m] == [1, 2, 3, 4]
        assert all(m and m["Watch"] is True and m["Succeeded"] is True for m in seen)
        reader.close()

    _run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("request_line", "expected"), [
    (b'{"v":2,"Command":"watch"}\n', "protocol version"),
    (b'{"v":1,"Command":"watch","Provider":"\\ud800"}\n', "lone UTF-16 surrogate"),
    (b'{"v":1,"Command":"watch"', "incomplete request"),
    (b"[" * 5000 + b"\n", "nested deeper"),
    (b'{"v":1,"Command":"WATCH ","Force":[1]}\n', "Force"),
])
def test_a_bad_watch_request_gets_one_failure_line_and_the_connection_closes(backend, request_line, expected):
    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        def exchange() -> bytes:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(str(paths.socket_file))
                sock.sendall(request_line)
                sock.shutdown(socket.SHUT_WR)
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
                return data

        data = await anyio.to_thread.run_sync(exchange)
        assert data.count(b"\n") == 1
        reply = json.loads(data)
        assert reply["Succeeded"] is False and expected in reply["Message"] and "Watch" not in reply
        assert runtime.status_stream.watcher_count == 0

    _run(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_watchers_sit_outside_the_connection_cap_and_have_a_cap_of_their_own(backend):
    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        runtime.status_stream.max_watchers = 3
        readers = []
        for _ in range(3):
            reader = await anyio.to_thread.run_sync(Reader, paths.socket_file)
            assert (await anyio.to_thread.run_sync(reader.line) or {})["Sequence"] == 1
            readers.append(reader)
        refused = await anyio.to_thread.run_sync(Reader, paths.socket_file)
        reply = await anyio.to_thread.run_sync(refused.line)
        assert reply is not None and reply["Succeeded"] is False and reply["TooManyWatchers"] is True
        assert await anyio.to_thread.run_sync(refused.line) is None  # then closed
        # Three watchers and max_connections=2: ordinary requests still get through, one after another.
        for number in range(5):
            await _start(paths, f"s{number}")
        assert runtime.status_stream.watcher_count == 3
        readers[0].close()
        with anyio.fail_after(5):
            while runtime.status_stream.watcher_count != 2:
                await anyio.sleep(0.01)
        again = await anyio.to_thread.run_sync(Reader, paths.socket_file)
        assert _ids(await anyio.to_thread.run_sync(again.line)) == [f"s{n}" for n in range(5)]
        for reader in [*readers[1:], again]:
            reader.close()

    _run(backend, body, max_connections=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shutdown_ends_every_stream_at_once(backend):
    ended: list[Any] = []

    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        readers = [await anyio.to_thread.run_sync(Reader, paths.socket_file) for _ in range(3)]
        for reader in readers:
            await anyio.to_thread.run_sync(reader.line)
        started = time.monotonic()
        assert (await _request(paths, "shutdown"))["Succeeded"]
        with anyio.fail_after(10):
            await runtime.exit_requested.wait()
        for reader in readers:
            while (line := await anyio.to_thread.run_sync(reader.line)) is not None:
                assert line["Watch"] is True  # the last state, maybe; then the end
            ended.append(time.monotonic() - started)
            reader.close()

    _run(backend, body)
    assert len(ended) == 3 and max(ended) < server.EXIT_GRACE_SECONDS  # watchers never hold the exit


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reader_that_falls_behind_gets_the_newest_state_and_never_slows_requests(backend):
    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        slow = await anyio.to_thread.run_sync(Reader, paths.socket_file)
        slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        folder = "/" + "d" * 3000
        for number in range(30):  # one line each (further apart than the coalescing), up to 64 KiB
            started = time.monotonic()
            reply = await _request(paths, "start", Provider="claude", SessionIdentifier=f"s{number:02}",
                                   WorkingDirectory=folder)
            assert reply["Succeeded"] and time.monotonic() - started < 5  # never held up by the reader
            await anyio.sleep(0.17)
        built = runtime.status_stream.lines_built
        assert built >= 25
        lines = []
        while True:
            line = await anyio.to_thread.run_sync(slow.line)
            assert line is not None
            lines.append(line)
            if line["ActiveSessionCount"] == 30:  # (the reply lists only what fits its 64 KiB budget)
                break
        assert len(lines) < built / 2, (len(lines), built)  # what it was too slow for was skipped, not queued
        assert [m["Sequence"] for m in lines] == sorted({m["Sequence"] for m in lines})
        assert lines[-1]["Sequence"] == runtime.status_stream.sequence
        slow.close()

    _run(backend, body)


# -- the client ---------------------------------------------------------------------------------------------
def _follow(paths: LidGuardPaths, stop: threading.Event, out: list[Any], **options: Any) -> threading.Thread:
    def run() -> None:
        for status in watch_client.watch_status(paths, stop=stop, **options):
            out.append(None if status is None else _ids(status))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def _until(predicate: Callable[[], bool], seconds: float = 10.0) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.01)


@pytest.mark.parametrize("backend", BACKENDS)
def test_watch_status_yields_changes_then_none_once_when_the_runtime_exits_and_stops_promptly(backend):
    stop = threading.Event()
    seen: list[Any] = []
    paths = resolve_paths()
    thread = _follow(paths, stop, seen, reconnect_seconds=0.2)
    time.sleep(0.5)  # no runtime yet: one None, however many retries
    assert seen == [None]

    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        await _until(lambda: seen[-1:] == [[]])
        await _start(paths, "a")
        await _until(lambda: seen[-1:] == [["a"]])

    _run(backend, body)
    deadline = time.monotonic() + 10
    while seen[-1:] != [None] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen == [None, [], ["a"], None]
    _run(backend, lambda runtime, paths: _until(lambda: seen[-1:] == [[]]))  # a new runtime: followed again
    started = time.monotonic()
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - started < 1.0
    assert seen[:4] == [None, [], ["a"], None] and seen[4] == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_watch_status_polls_status_when_the_runtime_cannot_stream(backend, monkeypatch):
    monkeypatch.delitem(handlers.HANDLERS, "watch")  # a runtime older than watch: "Unsupported command"
    stop = threading.Event()
    seen: list[Any] = []

    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        thread = _follow(paths, stop, seen, poll_seconds=0.1)
        await _until(lambda: seen == [[]])
        await _start(paths, "a")
        await _until(lambda: seen == [[], ["a"]])
        await anyio.sleep(0.5)
        assert seen == [[], ["a"]]  # only changes are yielded
        stop.set()
        await anyio.to_thread.run_sync(thread.join, 5)

    _run(backend, body)


def _fake_runtime(paths: LidGuardPaths, lines: list[bytes]) -> tuple[socket.socket, threading.Thread]:
    """A listener on the runtime's socket that answers ``watch`` with ``lines`` and then says nothing."""
    paths.socket_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(paths.socket_file))
    listener.listen(4)
    accepted: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            connection, _ = listener.accept()
            accepted.append(connection)
            connection.recv(65536)
            for line in lines:
                connection.sendall(line)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


STATUS_LINE = b'{"v":1,"Succeeded":true,"Watch":true,"Sequence":1,"Sessions":[]}\n'


@pytest.mark.parametrize(("lines", "expected"), [
    ([STATUS_LINE], [[], None]),  # then silence: no keep-alive within the timeout = gone
    ([STATUS_LINE, b'{"v":1,"Succeeded":true,"Watch":true,"KeepAlive":true,"Sequence":1}\n'], [[], None]),
    ([STATUS_LINE, b"{not json\n"], [[], None]),
    ([b"x" * (watch_client.MAX_MESSAGE_BYTES + 70000)], [None]),
    ([b'{"v":1,"Succeeded":false,"Message":"The runtime already streams its state to 16 watchers"}\n'], [None]),
])
def test_watch_status_gives_up_on_a_silent_or_garbled_stream(monkeypatch, lines, expected):
    monkeypatch.setattr(watch_client, "KEEPALIVE_TIMEOUT_SECONDS", 0.5)
    monkeypatch.setattr(watch_client, "_connect", lambda s, lock, wait: (
        client_transport().connect(s, 1.0), True))
    paths = resolve_paths()
    listener, server_thread = _fake_runtime(paths, lines)
    stop = threading.Event()
    seen: list[Any] = []
    thread = _follow(paths, stop, seen, reconnect_seconds=30)
    try:
        deadline = time.monotonic() + 10
        while len(seen) < len(expected) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen == expected
    finally:
        stop.set()
        thread.join(5)
        listener.close()
        server_thread.join(5)
    assert not thread.is_alive()


def test_watch_status_starts_the_runtime_only_when_asked(lidguard):
    paths = resolve_paths()
    stop = threading.Event()
    passive: list[Any] = []
    thread = _follow(paths, stop, passive, reconnect_seconds=0.1)
    time.sleep(1.0)
    assert passive == [None] and lidguard.runtime_pids() == []  # retried for a second, started nothing
    stop.set()
    thread.join(5)
    started = watch_client.watch_status(paths, start_runtime=True)
    first = next(started)
    started.close()
    assert first is not None and first["Watch"] is True and first["Sequence"] == 1
    assert len(lidguard.runtime_pids()) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_watcher_refused_by_the_cap_says_why_and_polls_status_instead(backend):
    # Issue 39 item 9: every watcher slot taken meant None ("runtime not running") for the tray and
    # `status --watch`; the runtime is there and answers `status`.
    stop = threading.Event()
    seen: list[Any] = []

    def run(paths: LidGuardPaths) -> None:
        for status in watch_client.watch_status(paths, stop=stop, poll_seconds=0.1, reconnect_seconds=0.2):
            seen.append(status)

    async def body(runtime: Runtime, paths: LidGuardPaths) -> None:
        runtime.status_stream.max_watchers = 1
        holder = await anyio.to_thread.run_sync(Reader, paths.socket_file)
        assert (await anyio.to_thread.run_sync(holder.line) or {})["Sequence"] == 1
        thread = threading.Thread(target=run, args=(paths,), daemon=True)
        thread.start()
        await _until(lambda: len(seen) >= 1)
        await _start(paths, "a")
        await _until(lambda: seen and seen[-1] is not None and _ids(seen[-1]) == ["a"])
        assert None not in seen, seen
        assert all("already streams its state to 1 watchers" in status["WatchRefused"] for status in seen), seen
        stop.set()
        await anyio.to_thread.run_sync(thread.join, 5)
        holder.close()

    _run(backend, body)
