"""The runtime's named-pipe loop: ``NamedPipeListener`` in a worker thread, answers on the event loop.

``serve_named_pipe(answer)`` runs until cancelled: the blocking ConnectNamedPipe/ReadFile/WriteFile
calls stay in one worker thread (one connection at a time, REFERENCE 3.1) and each request line is
answered by ``answer`` (a coroutine function, e.g. the server's decode-check-handle step) back on
the event loop through ``anyio.from_thread.run``. Cancellation stops the listener (waking a pending
ConnectNamedPipe) and waits for the worker, shielded, so no pipe handle outlives the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.from_thread

from ...ipc.transport_windows import NamedPipeListener
from .winapi import WindowsApi

__all__ = ["serve_named_pipe"]


async def serve_named_pipe(answer: Callable[[bytes], Coroutine[Any, Any, bytes]], *, api: WindowsApi | None = None,
                           task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    listener = NamedPipeListener(api)

    def handle_line(line: bytes) -> bytes:
        return anyio.from_thread.run(answer, line)

    def worker() -> None:
        listener.serve_forever(handle_line)

    async with anyio.create_task_group() as group:
        async def run_worker() -> None:
            await anyio.to_thread.run_sync(worker, abandon_on_cancel=True)

        group.start_soon(run_worker)
        task_status.started(listener.name)
        try:
            await anyio.sleep_forever()
        finally:
            listener.stop()
