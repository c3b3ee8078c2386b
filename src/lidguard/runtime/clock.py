"""Runtime time: stored times are wall-clock UTC; timers that must count sleep re-check a wall deadline.

``anyio.sleep`` counts the loop's monotonic clock, which stands still while the machine sleeps, so
after a resume a 12-minute timer would still wait its full remainder. Timers that must count the
time slept (inactivity timeout, pending-work abandonment, cleanup delay, the pending suspend) sleep
in bounded chunks and compare the wall clock with their deadline each time they wake, so after a
resume they fire within one chunk. ``now()`` never touches the event loop: it works before it exists.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Protocol

import anyio

__all__ = ["WALL_CHECK_SECONDS", "Clock", "RuntimeClock", "WallClock", "seconds_until", "sleep_until"]

# How long a timer may sleep before it looks at the wall clock again (the worst delay after a resume).
WALL_CHECK_SECONDS = 15.0


class Clock(Protocol):
    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware UTC."""
        ...


class WallClock:
    """The system's wall clock in UTC; ``source`` can replace it (tests)."""

    def __init__(self, source: Callable[[], datetime] | None = None) -> None:
        self._source = source or (lambda: datetime.now(timezone.utc))

    def now(self) -> datetime:
        return self._source()


RuntimeClock = WallClock  # the name the runtime used before the clock had its own module


def seconds_until(clock: Clock, deadline: datetime) -> float:
    return (deadline - clock.now()).total_seconds()


async def sleep_until(clock: Clock, deadline: datetime, *, check_every: float = WALL_CHECK_SECONDS) -> None:
    """Returns once the wall clock reaches ``deadline``, waking at least every ``check_every`` seconds."""
    while True:
        remaining = seconds_until(clock, deadline)
        if remaining <= 0:
            return
        await anyio.sleep(min(remaining, check_every))
