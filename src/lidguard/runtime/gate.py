"""The runtime's gate: one event at a time, and nothing to pay when nobody else holds it.

Every request takes the gate once or twice, and the code under it never awaits, so it is almost always
free. Taking a free gate is one flag: no checkpoint (no trip through the event loop), no task
lookup. A busy gate queues its waiters first come, first served and hands itself to the next one on
release (nobody can slip in between). A waiter cancelled before its turn leaves the queue; one
cancelled just as the gate was handed to it passes the gate on, so a cancellation never strands it.
Works on asyncio and trio alike (only ``anyio.Event``).
"""

from __future__ import annotations

from collections import deque
from types import TracebackType

import anyio

__all__ = ["Gate"]


class Gate:
    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    def locked(self) -> bool:
        return self._held

    async def acquire(self) -> None:
        if not self._held:
            self._held = True
            return
        turn = anyio.Event()
        self._waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():  # handed over just as the wait was cancelled: pass it on
                self.release()
            else:
                self._waiters.remove(turn)
            raise

    def release(self) -> None:
        if not self._held:
            raise RuntimeError("the gate is not held")
        if self._waiters:
            self._waiters.popleft().set()  # still held: it now belongs to the next waiter
        else:
            self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        self.release()
