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

__all__ = ["STEP_BACK_TOLERANCE_SECONDS", "WALL_CHECK_SECONDS", "Clock", "RuntimeClock", "StepBackDetector",
           "WallClock", "seconds_until", "sleep_until"]

# How long a timer may sleep before it looks at the wall clock again (the worst delay after a resume).
WALL_CHECK_SECONDS = 15.0
# A drop of the wall clock against the monotonic one smaller than this is reading jitter, not a step.
STEP_BACK_TOLERANCE_SECONDS = 0.05


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


class StepBackDetector:
    """How far the wall clock stepped back (an NTP or manual step) against a monotonic clock that never
    steps (the event loop's). A suspend moves the wall clock forward against it and is no step back; a
    slewed clock moves both alike."""

    __slots__ = ("_offset",)

    def __init__(self) -> None:
        self._offset: float | None = None  # wall minus monotonic at the last look (its highest since a step)

    def observe(self, wall: datetime, monotonic: float) -> float:
        """Seconds the wall clock stepped back since the last look (0.0: none)."""
        offset, previous = wall.timestamp() - monotonic, self._offset
        if previous is None or offset > previous:
            self._offset = offset
            return 0.0
        if previous - offset <= STEP_BACK_TOLERANCE_SECONDS:
            return 0.0
        self._offset = offset
        return previous - offset
