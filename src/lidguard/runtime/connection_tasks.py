"""The task each connection to the runtime is served in.

On asyncio (the runtime's loop) a connection gets a bare asyncio task: anyio's ``start_soon`` costs
~20 us to start and finish a task (a cancel scope and a task handle around each), a bare task ~4 us,
and a whole start / activity / stop request costs the runtime ~170-190 us of CPU (issue 22: the burst
of 100 clients). The tasks are kept in a set; ``aclose`` cancels and awaits whatever still runs, so the
server stops the way a task group would. On any other backend (trio: the tests' mock clock) the
connection goes to the task group as before.

A connection's task never fails (``server._serve_connection`` turns every error into a reply or a
record); one that did anyway is recorded through ``on_error``, not left to asyncio's "never retrieved".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import anyio

__all__ = ["ConnectionTasks"]


class ConnectionTasks:
    def __init__(self, task_group: Any, on_error: Callable[[str, BaseException], None]) -> None:
        self._task_group = task_group
        self._on_error = on_error
        self._tasks: set[asyncio.Task[None]] = set()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio)
            self._loop = None
        self.started = 0

    @property
    def bare(self) -> bool:
        """True when connections get bare asyncio tasks."""
        return self._loop is not None

    def start(self, function: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        self.started += 1
        if self._loop is None:
            self._task_group.start_soon(function, *args)
            return
        task = self._loop.create_task(function(*args))
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._on_error("connection-task-failed", task.exception())  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        """Cancels the bare tasks still running and waits for them (shielded: the server is stopping)."""
        with anyio.CancelScope(shield=True):
            while self._tasks:
                pending = list(self._tasks)
                for task in pending:
                    task.cancel()
                await asyncio.wait(pending)
