"""The socket server in-process on asyncio and on trio: requests, refusals, eviction, shutdown."""

from __future__ import annotations

import functools
import json
import socket
from pathlib import Path

import anyio
import pytest

from lidguard.ipc.client import send_request
from lidguard.platform.fake import FakePlatform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime import server
from lidguard.runtime.app import Runtime
from lidguard.settings import headless_defaults


def _raw(path: Path, payload: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_serve_answers_survives_and_exits_on_both_backends(backend):
    paths = resolve_paths()

    async def main() -> None:
        runtime = Runtime(platform=FakePlatform(), paths=paths, settings=headless_defaults())
        async with anyio.create_task_group() as group:
            await group.start(functools.partial(server.serve, runtime, paths, max_connections=4))
            sock = paths.socket_file
            reply = await anyio.to_thread.run_sync(
                lambda: send_request(sock, {"Command": "start", "Provider": "claude", "SessionIdentifier": "s1"}))
            assert reply["Succeeded"], reply
            deep = await anyio.to_thread.run_sync(_raw, sock, b"[" * 5000 + b"\n")
            assert deep["Succeeded"] is False
            # More idle connections than the cap: the oldest are dropped, a real request still gets through.
            idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(10)]
            for connection in idle:
                connection.connect(str(sock))
            status = await anyio.to_thread.run_sync(lambda: send_request(sock, {"Command": "status"}))
            assert [s["SessionIdentifier"] for s in status["Sessions"]] == ["s1"]
            dropped = await anyio.to_thread.run_sync(idle[0].recv, 65536)
            assert b"too many open connections" in dropped
            for connection in idle:
                connection.close()
            runtime.exit_requested.set()
        assert not sock.exists()

    anyio.run(main, backend=backend)
