"""Cancellation anywhere leaves nothing behind: SIGTERM makes the server cancel the runtime's task group
and call ``shutdown()``; these tests do the same at EVERY scheduling point of a session and its
suspend flow (a trio instrument counts task steps and cancels the task group at step N, for every N).
Afterwards no protection is left applied in the fake platform and no lid policy stays changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
import trio
from lidguard_runtime_harness import (
    Harness,
    assert_nothing_left_applied,
    closed_lid_machine,
    run_mock,
    wait_until,
    with_settings,
)

from lidguard.settings.model import Settings


class CancelAtStep(trio.abc.Instrument):
    """Counts task steps once armed and cancels ``scope`` after step ``target``."""

    def __init__(self, target: int | None) -> None:
        self.target = target
        self.steps = 0
        self.scope: Any = None
        self.fired = False

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if self.scope is None:
            return
        self.steps += 1
        if self.steps == self.target and not self.fired:
            self.fired = True
            self.scope.cancel()


def _settings(delay: int) -> Settings:
    return with_settings(PostStopSuspendSound="Beep", PostStopSuspendDelaySeconds=delay)


async def _suspend_flow(h: Harness) -> None:
    """A session, a settings change while protected, its stop, the delay, the sound, the suspend."""
    await h.start()
    changed = with_settings(**{**h.runtime.settings.to_file_json(), "PowerRequest": {"PreventDisplaySleep": True}})
    await h.send("settings", HasSettings=True, Settings=changed.to_file_json())
    await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1", SessionStateReason="x")
    await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1")
    await h.stop()
    if h.runtime.offload:  # real clock, no delay: wait for the request (in memory, not the log file)
        await wait_until(lambda: "suspend-requested" in h.actions(), seconds=20)
    else:  # MockClock: the 10 s delay passes at once
        await anyio.sleep(11)
    await h.start("again")
    await h.send("status")


def _run_cancelled_at(target: int | None, *, offload: bool,
                      flow: Callable[[Harness], Awaitable[None]] = _suspend_flow) -> tuple[Harness, CancelAtStep]:
    # Threads and trio's MockClock do not mix (the clock jumps while a worker thread runs): the
    # threaded variant runs on the real clock with no suspend delay.
    harness = Harness(machine=closed_lid_machine(), offload=offload, settings=_settings(0 if offload else 10))
    instrument = CancelAtStep(target)

    async def scenario() -> None:
        # The cancelled scope encloses shutdown() too (as when the server's own scope is cancelled):
        # shutdown must shield itself to release anything.
        with anyio.CancelScope() as outer:
            try:
                async with anyio.create_task_group() as task_group:
                    await harness.runtime.run(task_group)
                    instrument.scope = outer
                    await flow(harness)
                    instrument.scope = None
                    task_group.cancel_scope.cancel()
            finally:
                await harness.runtime.shutdown()

    if offload:
        trio.run(scenario, instruments=[instrument])  # type: ignore[arg-type]
    else:
        run_mock(scenario, instruments=[instrument])
    return harness, instrument


@pytest.mark.parametrize("offload", [False, True], ids=["inline", "threaded"])
def test_cancelling_the_runtime_at_every_step_of_the_suspend_flow_leaves_nothing_applied(
        offload, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "complete"))
    complete, counted = _run_cancelled_at(None, offload=offload)
    assert "stop-suspend-requested" in complete.log_names()  # the uncancelled flow runs to the end
    assert_nothing_left_applied(complete)
    total = counted.steps
    assert total > 20
    for target in range(1, total + 1):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / f"cancelled-at-{target}"))  # fresh logs and backup
        harness, instrument = _run_cancelled_at(target, offload=offload)
        if not instrument.fired:
            break
        try:
            assert_nothing_left_applied(harness)
            assert harness.runtime.suspend.pending is None
        except AssertionError as error:
            raise AssertionError(f"cancelled after task step {target} of {total}: {error}") from error


def test_cancelling_while_a_suspend_request_is_in_flight_still_records_it_and_restores():
    """The request itself is shielded: SIGTERM during it waits for the answer and records it."""
    harness = Harness(machine=closed_lid_machine(), settings=with_settings(PostStopSuspendDelaySeconds=0))
    suspender = harness.platform.suspend
    async def scenario() -> None:
        async with anyio.create_task_group() as task_group:
            await harness.runtime.run(task_group)
            await harness.start()
            original = suspender.suspend

            def suspend(mode: Any) -> Any:
                task_group.cancel_scope.cancel()  # SIGTERM arrives while the request runs
                return original(mode)

            suspender.suspend = suspend  # type: ignore[method-assign]
            await harness.stop()
            await anyio.sleep(5)
        await harness.runtime.shutdown()

    run_mock(scenario)
    assert harness.actions().count("suspend-requested") == 1
    assert "stop-suspend-requested" in harness.log_names()
    [entry] = harness.runtime.suspend_history.newest_first()
    assert entry["Succeeded"] is True
    assert_nothing_left_applied(harness)
