"""MachineView reads the lid first (issue 32.10): displays only with the lid closed, never awaited on
the request path (``cached``), reused by a suspend decision when recent (``for_decision``), and
counted for eligibility only when read since the lid last closed. A counting stub platform whose
reads go through an awaited ``call_platform`` (as a real backend's do); trio's MockClock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import trio.testing

from lidguard.platform.api import DisplayConnector, LidState
from lidguard.runtime.machine import DISPLAY_REUSE_SECONDS, MachineView


class Machine:
    def __init__(self) -> None:
        self.lid_state = LidState.OPEN
        self.connected: list[DisplayConnector] = []
        self.lid_reads = 0
        self.display_reads = 0
        self.lid = self
        self.display = self

    def read_lid_state(self) -> LidState:
        self.lid_reads += 1
        return self.lid_state

    def list_connected_displays(self) -> list[DisplayConnector]:
        self.display_reads += 1
        return list(self.connected)


def _run(test: Callable[[Machine, MachineView, list[Callable[[], Awaitable[None]]]], Awaitable[None]]) -> None:
    machine = Machine()
    jobs: list[Callable[[], Awaitable[None]]] = []

    async def call_platform(function: Callable[..., Any], *args: Any) -> Any:
        await anyio.sleep(0)  # a real backend's read yields (it runs in a worker thread)
        return function(*args)

    def spawn(job: Callable[[], Awaitable[None]]) -> bool:
        jobs.append(job)
        return True

    def on_error(name: str, error: BaseException) -> None:
        raise AssertionError(f"{name}: {error}")

    view = MachineView(machine, call_platform, max_age_seconds=2.0, on_error=on_error, spawn=spawn)  # type: ignore[arg-type]

    async def main() -> None:
        await test(machine, view, jobs)

    anyio.run(main, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


def test_the_lid_open_reads_no_display():
    async def test(machine: Machine, view: MachineView, jobs: list) -> None:
        for _ in range(5):
            await view.fresh()
            await view.for_decision()
            await anyio.sleep(3)
            await view.cached()
        assert machine.lid_reads == 15 and machine.display_reads == 0 and jobs == []
        assert view.latest.lid is LidState.OPEN and not view.latest.eligibility.eligible

    _run(test)


def test_a_request_with_the_lid_closed_never_waits_for_the_displays_and_refreshes_them_once():
    async def test(machine: Machine, view: MachineView, jobs: list) -> None:
        machine.lid_state = LidState.CLOSED
        reading = await view.cached()
        assert reading.lid is LidState.CLOSED and machine.display_reads == 0
        assert reading.eligibility.why_not == "the visible display monitors could not be counted."
        await view.cached()  # the refresh already started: no second one
        assert len(jobs) == 1
        await jobs.pop()()
        assert machine.display_reads == 1 and view.latest.eligibility.eligible
        await view.cached()  # the displays are fresh: nothing to refresh
        assert jobs == []

    _run(test)


def test_a_decision_reuses_recent_closed_lid_displays_and_reads_older_ones():
    async def test(machine: Machine, view: MachineView, jobs: list) -> None:
        machine.lid_state = LidState.CLOSED
        await view.fresh()
        assert (machine.lid_reads, machine.display_reads) == (1, 1)
        await anyio.sleep(DISPLAY_REUSE_SECONDS - 1)
        assert (await view.for_decision()).eligibility.eligible
        assert (machine.lid_reads, machine.display_reads) == (2, 1)  # the lid afresh, the displays reused
        await anyio.sleep(2)
        machine.connected = [DisplayConnector("DELL U2720Q", False)]
        reading = await view.for_decision()
        assert machine.display_reads == 2 and not reading.eligibility.eligible

    _run(test)


def test_displays_read_before_the_lid_last_closed_do_not_count():
    async def test(machine: Machine, view: MachineView, jobs: list) -> None:
        machine.lid_state = LidState.CLOSED
        await view.fresh()
        assert view.latest.eligibility.eligible
        machine.lid_state = LidState.OPEN
        await anyio.sleep(1)
        await view.fresh()
        assert view.latest.visible_display_count == 0 and machine.display_reads == 1
        machine.lid_state = LidState.CLOSED  # closed again: an external display may have come meanwhile
        await anyio.sleep(3)
        reading = await view.cached()
        assert reading.lid is LidState.CLOSED and reading.displays is not None  # the old ones, kept for the count
        assert reading.eligibility.why_not == "the visible display monitors could not be counted."
        reading = await view.for_decision()
        assert machine.display_reads == 2 and reading.displays_current and reading.eligibility.eligible

    _run(test)
