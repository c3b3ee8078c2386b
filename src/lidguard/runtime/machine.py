"""What the runtime knows about the machine: lid state and displays, read off the gate.

The lid decides first (issue 32.10, seed 001): its read is cheap (macOS ``ioreg``), the displays'
is not (macOS ``system_profiler``, up to 10 s), and the displays matter only with the lid closed.
So every reading reads the lid, and the displays only while the lid is closed; with the lid open
or unknown a reading keeps the displays last read (the reply's count), which never count for
eligibility: that takes only displays read since the lid was last seen closing.

- ``cached()`` (every request, hooks too): the lid re-read once the snapshot is older than
  ``max_age_seconds``; never waits for the displays. With the lid closed and no display reading
  from the last ``DISPLAY_REFRESH_SECONDS`` it starts one in the background, off the request's path.
- ``for_decision()`` (an event that may schedule a suspend): the lid afresh; the displays read in
  the last ``DISPLAY_REUSE_SECONDS`` with the lid closed are reused, else read (only right after the
  lid closed, before the monitor's 10 s poll or a request's background refresh read them).
- ``fresh()`` (the final re-check, the thermal monitor): the lid afresh and, with the lid closed,
  the displays afresh: a reading taken after the call began.

Concurrent callers share one read of each. Instant platforms (the fake) read both at once, inline.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import anyio

from ..platform.api import DisplayConnector, LidState, Platform, Unsupported, count_visible_displays
from .eligibility import Eligibility, closed_lid_eligibility
from .gate import Gate

__all__ = ["DISPLAY_REFRESH_SECONDS", "DISPLAY_REUSE_SECONDS", "MachineReading", "MachineView"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

DISPLAY_REFRESH_SECONDS = 10.0  # a request with the lid closed refreshes older displays in the background
DISPLAY_REUSE_SECONDS = 15.0  # a suspend decision reuses displays this recent (the monitor polls every 10 s)
NEVER = float("-inf")


@dataclass(frozen=True, slots=True)
class MachineReading:
    lid: LidState
    displays: list[DisplayConnector] | None  # the last displays read (only ever read with the lid closed)
    taken_at: float  # the event loop's clock, when the lid was read
    displays_taken_at: float = NEVER  # when the displays' read began
    closed_since: float = float("inf")  # when a lid read first saw the lid closed (inf: not closed)

    @property
    def displays_current(self) -> bool:
        """The displays were read while the lid was closed, in this closed period."""
        return self.lid is LidState.CLOSED and self.displays_taken_at >= self.closed_since

    @property
    def visible_display_count(self) -> int:
        return count_visible_displays(self.displays, exclude_internal=False) if self.displays is not None else 0

    @property
    def eligibility(self) -> Eligibility:
        return closed_lid_eligibility(self.lid, self.displays if self.displays_current else None)


UNKNOWN_READING = MachineReading(LidState.UNKNOWN, None, NEVER)


class _SharedRead(Generic[T]):
    """One read at a time; each caller gets a value read after its call began, sharing a read that
    began after it did."""

    def __init__(self, read: Callable[[], Awaitable[T]]) -> None:
        self._read = read
        self._lock = Gate()
        self._next_ticket = 0
        self._done_ticket = -1
        self._value: Any = None

    async def __call__(self) -> T:
        ticket = self._next_ticket
        self._next_ticket += 1
        async with self._lock:
            if self._done_ticket > ticket:  # a read that began after this call did the work
                return self._value  # type: ignore[no-any-return]
            started = self._next_ticket
            self._next_ticket += 1
            value = await self._read()
            self._value, self._done_ticket = value, started
            return value


class MachineView:
    def __init__(self, platform: Platform, call_platform: Callable[..., Awaitable[Any]], *,
                 max_age_seconds: float, on_error: Callable[[str, BaseException], None], instant: bool = False,
                 spawn: Callable[[Callable[[], Awaitable[None]]], bool] | None = None) -> None:
        self._platform = platform
        self._call_platform = call_platform
        self._max_age = max_age_seconds
        self._on_error = on_error
        self._instant = instant  # the platform answers at once, on the event loop (the fake, not offloaded)
        self._spawn = spawn  # starts a background job; False when the runtime does not run (yet)
        self._latest = UNKNOWN_READING
        self._lid_read = _SharedRead(self._timed_lid_read)
        self._display_read = _SharedRead(self._timed_display_read)
        self._refreshing = False

    @property
    def latest(self) -> MachineReading:
        return self._latest

    async def cached(self) -> MachineReading:
        """The request path: the lid (re-read when stale), never a wait for the displays."""
        if self._instant or self._max_age <= 0:
            return await self.fresh()
        if anyio.current_time() - self._latest.taken_at > self._max_age:
            await self._update_lid()
        reading = self._latest
        if reading.lid is LidState.CLOSED and (
                not reading.displays_current
                or anyio.current_time() - reading.displays_taken_at > DISPLAY_REFRESH_SECONDS):
            self._refresh_displays_later()
        return self._latest

    async def for_decision(self) -> MachineReading:
        """Before an event that may schedule a suspend: the lid afresh, recent closed-lid displays reused."""
        if self._instant:
            return await self.fresh()
        reading = await self._update_lid()
        if reading.lid is LidState.CLOSED:
            age = anyio.current_time() - reading.displays_taken_at
            if not reading.displays_current or age > DISPLAY_REUSE_SECONDS:
                await self._update_displays()
            elif age > DISPLAY_REFRESH_SECONDS:
                self._refresh_displays_later()
        return self._latest

    async def fresh(self) -> MachineReading:
        """The lid afresh, then (only with the lid closed) the displays afresh."""
        if self._instant:  # read right here: nothing can run meanwhile, so there is no read to share or wait for
            now = anyio.current_time()
            lid = self._read_lid()
            self._latest = self._with_lid(self._latest, lid, now)
            self._latest = replace(self._latest, displays=self._read_displays(), displays_taken_at=now)
            return self._latest
        reading = await self._update_lid()
        if reading.lid is LidState.CLOSED:
            await self._update_displays()
        return self._latest

    # -- the reads --------------------------------------------------------------------------------------
    @staticmethod
    def _with_lid(previous: MachineReading, lid: LidState, now: float) -> MachineReading:
        if lid is not LidState.CLOSED:
            closed_since = float("inf")
        elif previous.lid is LidState.CLOSED:
            closed_since = previous.closed_since
        else:
            closed_since = now
        return replace(previous, lid=lid, taken_at=now, closed_since=closed_since)

    async def _timed_lid_read(self) -> LidState:
        return await self._call_platform(self._read_lid)  # type: ignore[no-any-return]

    async def _timed_display_read(self) -> tuple[float, list[DisplayConnector] | None]:
        began = anyio.current_time()
        return began, await self._call_platform(self._read_displays)

    async def _update_lid(self) -> MachineReading:
        lid = await self._lid_read()
        self._latest = self._with_lid(self._latest, lid, anyio.current_time())
        return self._latest

    async def _update_displays(self) -> MachineReading:
        began, displays = await self._display_read()
        if began >= self._latest.displays_taken_at:  # never replace a newer reading with an older one
            self._latest = replace(self._latest, displays=displays, displays_taken_at=began)
        return self._latest

    def _refresh_displays_later(self) -> None:
        if self._refreshing or self._spawn is None:
            return

        async def refresh() -> None:
            try:
                await self._update_displays()
            finally:
                self._refreshing = False

        self._refreshing = self._spawn(refresh)

    def _read_lid(self) -> LidState:
        try:
            return self._platform.lid.read_lid_state()
        except (Unsupported, OSError):
            return LidState.UNKNOWN
        except Exception as error:  # a backend bug must not fail every reply
            self._on_error("lid-state-read-failed", error)
            return LidState.UNKNOWN

    def _read_displays(self) -> list[DisplayConnector] | None:
        try:
            return self._platform.display.list_connected_displays()
        except (Unsupported, OSError):
            return None
        except Exception as error:
            self._on_error("display-read-failed", error)
            return None
