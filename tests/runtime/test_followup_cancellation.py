"""Cancelling the runtime at EVERY scheduling point of the ask-before-sleep flow - the StopFollowUp
webhook, the sound, each poll, the reply restoring the session, a Canceled answer running PreSuspend,
the sound and the request - leaves no protection applied, no lid policy changed, no pending suspend
and no busy component (the wait's cleanup and the final release are shielded)."""

from __future__ import annotations

import anyio
from lidguard_runtime_harness import Harness, assert_nothing_left_applied, closed_lid_machine, run_mock, with_settings
from test_followup_flow import DELAY, SETTINGS, BlockingStop, FollowUpServer
from test_runtime_cancellation import CancelAtStep

FLOW_SETTINGS = {**SETTINGS, "ClosedLidStopFollowUpDelaySeconds": 20, "ClosedLidStopFollowUpSound": "Beep",
                 "PostStopSuspendSound": "Beep"}


async def _wait_for(predicate: object, seconds: float = 60) -> None:
    with anyio.fail_after(seconds):
        while not predicate():  # type: ignore[operator]
            await anyio.sleep(0.5)


async def _flow(h: Harness, server: FollowUpServer) -> None:
    await h.start(InputPromptPreview="go")
    async with anyio.create_task_group() as group:
        first = BlockingStop(h, group)
        await anyio.sleep(DELAY + 4.5)
        server.status, server.reply = "Replied", "continue"
        await _wait_for(lambda: first.reply is not None)
    server.status, server.reply = "Pending", None
    async with anyio.create_task_group() as group:
        second = BlockingStop(h, group, StopHookActive=True)
        await anyio.sleep(DELAY + 2.5)
        server.status = "Canceled"
        await _wait_for(lambda: second.reply is not None)
    await anyio.sleep(1)  # PreSuspend, the sound, the request
    await h.send("status")


def _run(target: int | None) -> tuple[Harness, CancelAtStep]:
    server = FollowUpServer()
    harness = Harness(machine=closed_lid_machine(), settings=with_settings(**FLOW_SETTINGS), receiver=server)
    instrument = CancelAtStep(target)

    async def scenario() -> None:
        with anyio.CancelScope() as outer:
            try:
                async with anyio.create_task_group() as task_group:
                    await harness.runtime.run(task_group)
                    instrument.scope = outer
                    await _flow(harness, server)
                    instrument.scope = None
                    task_group.cancel_scope.cancel()
            finally:
                await harness.runtime.shutdown()

    run_mock(scenario, instruments=[instrument])
    return harness, instrument


def test_the_uncancelled_flow_reaches_every_stage():
    harness, _ = _run(None)
    names = harness.log_names()
    assert "stop-follow-up-replied" in names and "stop-follow-up-canceled" in names
    assert "stop-suspend-requested" in names
    assert_nothing_left_applied(harness)


def test_cancelling_at_every_step_of_the_follow_up_flow_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "complete"))
    _, counted = _run(None)
    total = counted.steps
    assert total > 20
    for target in range(1, total + 1):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / f"cancelled-at-{target}"))
        harness, instrument = _run(target)
        if not instrument.fired:
            break
        try:
            assert_nothing_left_applied(harness)
            runtime = harness.runtime
            assert runtime.suspend.pending is None
            assert not any(component.busy() for component in runtime.components)
            assert not harness.paths.exception_log_file.exists()
        except AssertionError as error:
            raise AssertionError(f"cancelled after task step {target} of {total}: {error}") from error
