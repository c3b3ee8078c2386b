"""On Windows the runtime serves its requests over the per-user named pipe, not a Unix socket.

The pipe's blocking loop (``platform/windows/pipe_server.py``) is replaced by a fake that hands the
server a few request lines, exactly as the worker thread would, and records the reply lines.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

import lidguard.ipc.transport as transport
import lidguard.platform.windows.pipe_server as pipe_server
from lidguard.platform.fake import FakePlatform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime import server
from lidguard.runtime.app import Runtime
from lidguard.settings.model import headless_defaults


def _request(command: str, **fields: Any) -> bytes:
    return (json.dumps({"v": 1, "Command": command, **fields}) + "\n").encode()


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_runtime_answers_over_the_named_pipe_on_windows(monkeypatch, backend):
    replies: list[dict[str, Any]] = []
    socket_binds: list[Any] = []
    monkeypatch.setattr(transport, "host_os_name", lambda: "windows")
    monkeypatch.setattr(server, "default_transport", lambda: socket_binds.append("bound"))

    async def fake_serve_named_pipe(answer, *, api=None, task_status=anyio.TASK_STATUS_IGNORED):
        task_status.started(r"\\.\pipe\lidguard-S-1-5-21-test")
        lines = [
            _request("start", Provider="Claude", SessionIdentifier="pipe-session"),
            b"this is not json\n",
            _request("status"),
            b'{"v":1,"Command":"status"',  # no newline: the pipe closed mid-request
            _request("shutdown", Force=True),
        ]
        for line in lines:
            replies.append(json.loads(await answer(line)))
        await anyio.sleep_forever()

    monkeypatch.setattr(pipe_server, "serve_named_pipe", fake_serve_named_pipe)
    platform = FakePlatform()
    runtime = Runtime(platform=platform, paths=resolve_paths(), settings=headless_defaults())

    async def main() -> None:
        with anyio.fail_after(30):
            await server.serve(runtime, resolve_paths())

    anyio.run(main, backend=backend)
    assert socket_binds == []  # no Unix socket on Windows
    start, garbage, status, incomplete, shutdown = replies
    assert start["Succeeded"] is True and start["ActiveSessionCount"] == 1
    assert garbage["Succeeded"] is False and "invalid JSON" in garbage["Message"]
    assert status["Succeeded"] is True and status["Sessions"][0]["SessionIdentifier"] == "pipe-session"
    assert incomplete["Succeeded"] is False and "incomplete request" in incomplete["Message"]
    assert shutdown["Succeeded"] is True
    actions = [action["action"] for action in platform.actions]
    assert actions[0] == "protection-applied" and "protection-released" in actions  # released on exit
