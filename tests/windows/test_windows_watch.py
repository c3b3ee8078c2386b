"""``watch`` on Windows: the runtime's named pipe serves one connection at a time, so it refuses to
stream (``WatchUnsupported``) and ``ipc.watch.watch_status`` follows it by polling ``status`` over
the same pipe (the real server and pipe loop over ``fake_winapi``)."""

from __future__ import annotations

import functools
import threading
from typing import Any

import anyio
import pytest
from fake_winapi import FakeWindowsApi

import lidguard.ipc.transport as transport
import lidguard.ipc.transport_windows as transport_windows
import lidguard.platform.windows.pipe_server as pipe_server
from lidguard.ipc import watch as watch_client
from lidguard.ipc.client import send_request
from lidguard.platform.fake import FakePlatform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime import server
from lidguard.runtime.app import Runtime
from lidguard.settings.model import headless_defaults


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_watch_status_follows_a_windows_runtime_by_polling_over_the_named_pipe(monkeypatch, backend):
    api = FakeWindowsApi()
    monkeypatch.setattr(transport, "host_os_name", lambda: "windows")
    monkeypatch.setattr(transport_windows, "_live_api", lambda: api)
    monkeypatch.setattr(pipe_server, "serve_named_pipe", functools.partial(pipe_server.serve_named_pipe, api=api))
    paths = resolve_paths()
    runtime = Runtime(platform=FakePlatform(), paths=paths, settings=headless_defaults())
    stop = threading.Event()
    seen: list[Any] = []

    def follow() -> None:
        for status in watch_client.watch_status(paths, stop=stop, poll_seconds=0.1):
            seen.append(None if status is None else [s["SessionIdentifier"] for s in status["Sessions"]])

    async def until(predicate: Any) -> None:
        with anyio.fail_after(20):
            while not predicate():
                await anyio.sleep(0.01)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            await group.start(functools.partial(server.serve, runtime, paths))
            raw = await anyio.to_thread.run_sync(lambda: send_request(paths.socket_file, {"Command": "watch"}))
            assert raw["Succeeded"] is False and raw.get("WatchUnsupported") is True, raw
            thread = threading.Thread(target=follow, daemon=True)
            thread.start()
            await until(lambda: seen == [[]])
            reply = await anyio.to_thread.run_sync(lambda: send_request(
                paths.socket_file, {"Command": "start", "Provider": "claude", "SessionIdentifier": "w1"}))
            assert reply["Succeeded"]
            await until(lambda: seen == [[], ["w1"]])
            stop.set()
            await anyio.to_thread.run_sync(thread.join, 5)
            assert not thread.is_alive()
            runtime.exit_requested.set()

    anyio.run(main, backend=backend)
