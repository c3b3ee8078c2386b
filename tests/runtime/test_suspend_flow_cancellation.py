"""Cancelling the runtime at EVERY scheduling point of the full suspend flow - PreSuspend in flight,
the sound, the request, a PostSessionEnd fallback in the background, an Emergency Hibernation -
leaves no protection applied, no lid policy changed and no component busy (the cancellation and
the final release are shielded)."""

from __future__ import annotations

import anyio
from lidguard_runtime_harness import (
    Harness,
    WebhookReceiver,
    assert_nothing_left_applied,
    closed_lid_machine,
    run_mock,
    with_settings,
)
from test_runtime_cancellation import CancelAtStep

SETTINGS = dict(PreSuspendWebhookUrl="http://receiver.test/pre", PostSessionEndWebhookUrl="http://receiver.test/end",
                PostStopSuspendSound="Beep")


async def _flow(h: Harness) -> None:
    await h.start(InputPromptPreview="go")
    await h.stop(IsProviderSessionEnd=True, LastAssistantMessage="done")
    await anyio.sleep(13)  # delay, PreSuspend (slow receiver), sound, request
    await h.start("b")
    await h.stop("b", IsProviderSessionEnd=True)
    await anyio.sleep(2)
    await h.start("c")  # cancels before PreSuspend: PostSessionEnd falls back in the background
    h.platform.machine.temperatures_celsius = [99.0]
    await anyio.sleep(10.5)  # the thermal tick: Hibernate
    await h.stop("c")
    await h.send("status")


def _run(target: int | None) -> tuple[Harness, CancelAtStep]:
    harness = Harness(machine=closed_lid_machine(), settings=with_settings(**SETTINGS),
                      receiver=WebhookReceiver(delay=1))
    instrument = CancelAtStep(target)

    async def scenario() -> None:
        with anyio.CancelScope() as outer:
            try:
                async with anyio.create_task_group() as task_group:
                    await harness.runtime.run(task_group)
                    instrument.scope = outer
                    await _flow(harness)
                    instrument.scope = None
                    task_group.cancel_scope.cancel()
            finally:
                await harness.runtime.shutdown()

    run_mock(scenario, instruments=[instrument])
    return harness, instrument


def test_the_uncancelled_flow_reaches_every_stage():
    harness, _ = _run(None)
    names = harness.log_names()
    assert "stop-suspend-requested" in names and "emergency-hibernation-requested" in names
    assert [b["eventType"] for b in harness.receiver.bodies()] == ["PreSuspend", "PostSessionEnd", "PreSuspend"]
    assert_nothing_left_applied(harness)


def test_cancelling_at_every_step_of_the_webhook_sound_and_emergency_flow_leaves_nothing(monkeypatch, tmp_path):
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
            assert not runtime.webhooks.busy() and not runtime.emergency.busy()
        except AssertionError as error:
            raise AssertionError(f"cancelled after task step {target} of {total}: {error}") from error
