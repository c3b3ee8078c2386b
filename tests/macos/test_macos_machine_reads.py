"""What the runtime asks the Mac for, and when (issue 32.10, seed 001): one cheap lid read
(ioreg AppleClamshellState) decides first; displays (system_profiler) are read only with the lid
closed; the thermal monitor reads temperatures only with the lid closed and no display; a hook's
request never waits for system_profiler (it gets the last snapshot, refreshed off its path).

In-process runtime on the macOS backend over the stand-ins (every tool call recorded): the lid-open
count runs on trio's MockClock (minutes pass at once), the timing tests on the real clock with a
stand-in system_profiler that sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
import trio.testing

from lidguard.platform import load_platform
from lidguard.platform.api import LidState
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.settings.model import Settings, headless_defaults

LID_READ = ["ioreg", "-r", "-k", "AppleClamshellState", "-d", "4"]
DISPLAY_READ = ["system_profiler", "SPDisplaysDataType", "-json"]


def _run(standins, body: Callable[[Runtime], Awaitable[None]], *, mock_clock: bool, **settings: Any) -> Runtime:
    raw = {**headless_defaults().to_file_json(), **settings}
    runtime = Runtime(platform=load_platform("macos"), paths=resolve_paths(), settings=Settings.from_raw(raw))

    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Claude",
                                                    "SessionIdentifier": "s1"})
            assert started["Succeeded"], started["Message"]
            await body(runtime)
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    options = {"clock": trio.testing.MockClock(autojump_threshold=0)} if mock_clock else {}
    anyio.run(main, backend="trio", backend_options=options)
    return runtime


def _hook(kind: str = "mark-session-active") -> dict[str, Any]:
    """A hook's request as the hook path sends it (no session list in the reply)."""
    return {"Command": kind, "Provider": "Claude", "SessionIdentifier": "s1", "ReplySessions": False}


def test_lid_open_for_minutes_never_runs_system_profiler(standins):
    """Two (mocked) minutes with the lid open, a hook request every 5 s: the monitor polls the lid
    every 10 s and reads nothing else; no display and no temperature is ever read."""
    standins.set_machine(clamshell="open", displays="apple-silicon-builtin")

    async def body(runtime: Runtime) -> None:
        began = anyio.current_time()
        while anyio.current_time() - began < 120 or standins.commands("ioreg").count(LID_READ) < 12:
            reply = await runtime.handle_message(_hook())
            assert reply["Succeeded"] and reply["LidSwitchState"] == "Open", reply
            await anyio.sleep(5)

    runtime = _run(standins, body, mock_clock=True)
    assert runtime.machine.latest.lid is LidState.OPEN
    assert standins.commands("ioreg").count(LID_READ) >= 12
    assert standins.commands("system_profiler") == []
    assert not [call for call in standins.commands("sudo") if "powermetrics" in call]


def test_lid_closed_reads_displays_and_with_a_display_on_no_temperature(standins):
    """Lid closed: the displays are read too; an external display keeps the thermal monitor idle."""
    standins.set_machine(clamshell="closed", displays="apple-silicon-clamshell-external")

    async def body(runtime: Runtime) -> None:
        while len(standins.commands("system_profiler")) < 5:
            await anyio.sleep(3)

    runtime = _run(standins, body, mock_clock=True)
    assert runtime.machine.latest.visible_display_count == 1
    assert not runtime.machine.latest.eligibility.eligible
    assert not [call for call in standins.commands("sudo") if "powermetrics" in call]


@pytest.fixture
def slow_profiler(standins, load_allowance):
    """Lid closed, and a system_profiler that answers only after several seconds."""
    bound = 1.0 + load_allowance()
    standins.set_machine(clamshell="closed", displays="apple-silicon-none", system_profiler_seconds=bound + 4)
    return bound


def test_a_hook_request_never_waits_for_a_slow_system_profiler(standins, slow_profiler):
    timings: dict[str, float] = {}

    async def body(runtime: Runtime) -> None:
        await anyio.sleep(2.5)  # the snapshot is now older than its 2 s: the next request re-reads the lid
        for kind in ("status", "mark-session-active"):
            began = time.monotonic()
            reply = await runtime.handle_message(_hook(kind))
            timings[kind] = time.monotonic() - began
            assert reply["Succeeded"] and reply["LidSwitchState"] == "Closed", reply["Message"]
        # The displays are read off the requests' path (the slow read may time out: a request then
        # starts another); once they are in, a reply shows them.
        standins.set_machine(system_profiler_seconds=0)
        with anyio.fail_after(60):
            while not (await runtime.handle_message(_hook("status")))["ClosedLidSuspendEligible"]:
                await anyio.sleep(0.2)

    _run(standins, body, mock_clock=False)
    assert max(timings.values()) < slow_profiler, timings
    assert DISPLAY_READ in standins.commands("system_profiler")


def test_a_stop_with_the_lid_closed_uses_the_recent_display_reading(standins, load_allowance):
    """A stop may schedule a suspend: it reads the lid afresh, and takes the displays read a moment
    ago with the lid closed instead of waiting for system_profiler again."""
    standins.set_machine(clamshell="closed", displays="apple-silicon-none")
    timings: dict[str, float] = {}

    async def body(runtime: Runtime) -> None:
        await runtime.machine.fresh()  # the displays, read with the lid closed (the monitor's poll does this)
        bound = 1.0 + load_allowance()
        standins.set_machine(system_profiler_seconds=bound + 4)
        began = time.monotonic()
        reply = await runtime.handle_message({**_hook("stop")})
        timings["stop"] = time.monotonic() - began
        assert reply["Succeeded"], reply
        timings["bound"] = bound
        assert runtime.suspend.pending is not None  # eligible: the suspend is scheduled

    _run(standins, body, mock_clock=False, PostStopSuspendDelaySeconds=600)
    assert timings["stop"] < timings["bound"], timings
