"""What the runtime knows about the machine: lid state and displays, read off the gate.

Replies carry the lid state and display count (REFERENCE 3.1) from ``latest``, a snapshot kept
fresh by ``cached()`` (re-read once it is older than ``max_age_seconds``; 0 for instant platforms).
Decisions that matter (suspend eligibility, the final re-check) call ``fresh()``, which always
returns a reading taken after the call began; concurrent callers share one read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from ..platform.api import DisplayConnector, LidState, Platform, Unsupported, count_visible_displays
from .eligibility import Eligibility, closed_lid_eligibility
from .gate import Gate

__all__ = ["MachineReading", "MachineView"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MachineReading:
    lid: LidState
    displays: list[DisplayConnector] | None
    taken_at: float  # the event loop's clock

    @property
    def visible_display_count(self) -> int:
        return count_visible_displays(self.displays, exclude_internal=False) if self.displays is not None else 0

    @property
    def eligibility(self) -> Eligibility:
        return closed_lid_eligibility(self.lid, self.displays)


UNKNOWN_READING = MachineReading(LidState.UNKNOWN, None, float("-inf"))


class MachineView:
    def __init__(self, platform: Platform, call_platform: Callable[..., Awaitable[Any]], *,
                 max_age_seconds: float, on_error: Callable[[str, BaseException], None], instant: bool = False) -> None:
        self._platform = platform
        self._call_platform = call_platform
        self._max_age = max_age_seconds
        self._on_error = on_error
        self._instant = instant  # the platform answers at once, on the event loop (the fake, not offloaded)
        self._lock = Gate()
        self._latest = UNKNOWN_READING
        self._latest_ticket = -1
        self._next_ticket = 0

    @property
    def latest(self) -> MachineReading:
        return self._latest

    async def cached(self) -> MachineReading:
        if self._max_age > 0 and anyio.current_time() - self._latest.taken_at <= self._max_age:
            return self._latest
        return await self.fresh()

    async def fresh(self) -> MachineReading:
        if self._instant:  # read right here: nothing can run meanwhile, so there is no read to share or wait for
            lid, displays = self._read()
            self._latest = MachineReading(lid, displays, anyio.current_time())
            return self._latest
        ticket = self._next_ticket
        self._next_ticket += 1
        async with self._lock:
            if self._latest_ticket > ticket:  # a read that began after this call did the work
                return self._latest
            started = self._next_ticket
            self._next_ticket += 1
            lid, displays = await self._call_platform(self._read)
            self._latest = MachineReading(lid, displays, anyio.current_time())
            self._latest_ticket = started
            return self._latest

    def _read(self) -> tuple[LidState, list[DisplayConnector] | None]:
        try:
            lid = self._platform.lid.read_lid_state()
        except (Unsupported, OSError):
            lid = LidState.UNKNOWN
        except Exception as error:  # a backend bug must not fail every reply
            self._on_error("lid-state-read-failed", error)
            lid = LidState.UNKNOWN
        try:
            displays: list[DisplayConnector] | None = self._platform.display.list_connected_displays()
        except (Unsupported, OSError):
            displays = None
        except Exception as error:
            self._on_error("display-read-failed", error)
            displays = None
        return lid, displays
