"""Runtime flows on asyncio as well as trio, with platform calls inline and in worker threads.

No MockClock here (threads and asyncio do not use it): every flow either needs no timer or uses a
zero suspend delay, and waits are bounded polls.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import (
    BACKENDS,
    Harness,
    assert_nothing_left_applied,
    closed_lid_machine,
    run_on,
    wait_until,
    with_runtime,
    with_settings,
)

from lidguard.ipc.protocol import RUNTIME_STOPPING_MESSAGE

VARIANTS = [(backend, offload) for backend in BACKENDS for offload in (False, True)]
IDS = [f"{backend}-{'threaded' if offload else 'inline'}" for backend, offload in VARIANTS]
pytestmark = pytest.mark.parametrize("backend, offload", VARIANTS, ids=IDS)


def test_start_stop_protects_and_restores(backend, offload):
    harness = Harness(offload=offload)
    assert harness.runtime.offload is offload

    async def body(h: Harness) -> None:
        assert (await h.start("a"))["Succeeded"]
        assert (await h.start("b"))["ActiveSessionCount"] == 2
        assert h.actions() == ["protection-applied", "lid-policy-changed"]
        await h.stop("a")
        await h.stop("b")
        assert h.actions()[2:] == ["lid-policy-restored", "protection-released"]
        assert_nothing_left_applied(h)

    run_on(backend, lambda: with_runtime(harness, body))


def test_settings_change_keeps_protection_held(backend, offload):
    harness = Harness(offload=offload)

    async def body(h: Harness) -> None:
        await h.start()
        changed = with_settings(PowerRequest={"PreventDisplaySleep": True})
        await h.send("settings", HasSettings=True, Settings=changed.to_file_json())
        assert h.actions() == ["protection-applied", "lid-policy-changed", "protection-applied",
                               "protection-released"]
        await h.stop()
        assert_nothing_left_applied(h)

    run_on(backend, lambda: with_runtime(harness, body))


def test_closed_lid_stop_suspends_after_releasing_protection(backend, offload):
    harness = Harness(machine=closed_lid_machine(), offload=offload,
                      settings=with_settings(PostStopSuspendDelaySeconds=0, PostStopSuspendSound="Beep"))

    async def body(h: Harness) -> None:
        await h.start()
        response = await h.stop()
        assert response["PendingSuspend"]["Stage"] == "delay"
        await wait_until(lambda: "suspend-requested" in h.actions())
        await wait_until(lambda: h.runtime.suspend.pending is None)
        actions = h.actions()
        assert actions.index("sound-played") < actions.index("protection-released") < actions.index(
            "suspend-requested")
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is True
        assert_nothing_left_applied(h)

    run_on(backend, lambda: with_runtime(harness, body))


def test_activity_cancels_a_pending_suspend(backend, offload):
    harness = Harness(machine=closed_lid_machine(), offload=offload,
                      settings=with_settings(PostStopSuspendDelaySeconds=600))

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        assert (await h.stop("b"))["PendingSuspend"]["Reason"] == "SoftLocked"
        response = await h.send("mark-session-active", Provider="Claude", SessionIdentifier="a")
        assert response["PendingSuspend"] is None
        assert "stop-suspend-canceled" in h.log_names()
        assert "protection-released" not in h.actions()

    run_on(backend, lambda: with_runtime(harness, body))


class ControlledProcesses:
    def __init__(self) -> None:
        self._exits: dict[int, anyio.Event] = {}

    def exit(self, pid: int) -> None:
        self._exits.setdefault(pid, anyio.Event()).set()

    def is_alive(self, pid: int) -> bool:
        return not (pid in self._exits and self._exits[pid].is_set())

    def read_ancestry(self, pid: int) -> list[Any]:
        return []

    async def wait_for_exit(self, pid: int) -> None:
        await self._exits.setdefault(pid, anyio.Event()).wait()


def test_watched_process_exit_stops_the_session(backend, offload):
    harness = Harness(offload=offload)
    processes = ControlledProcesses()
    harness.platform.process = processes  # type: ignore[assignment]

    async def body(h: Harness) -> None:
        await h.start("a", WatchedProcessIdentifier=301)
        processes.exit(301)
        await wait_until(lambda: not h.runtime.state.sessions)
        await wait_until(lambda: "protection-released" in h.actions())
        assert "watched-process-exited" in h.log_names()
        assert_nothing_left_applied(h)

    run_on(backend, lambda: with_runtime(harness, body))


def test_bad_requests_and_forced_shutdown(backend, offload):
    harness = Harness(offload=offload)

    async def body(h: Harness) -> None:
        await h.start()
        assert (await h.send("explode"))["Succeeded"] is False
        assert (await h.send("start", Provider="claude"))["Succeeded"] is False
        assert (await h.send("shutdown"))["Succeeded"] is False
        assert (await h.send("shutdown", Force=True))["Succeeded"] is True
        assert h.runtime.exit_requested.is_set()
        late = await h.start("late")  # a stopping runtime takes no new session; the client retries
        assert late["Succeeded"] is False and late["RuntimeStopping"] is True
        assert late["Message"] == RUNTIME_STOPPING_MESSAGE
        assert_nothing_left_applied(h)

    run_on(backend, lambda: with_runtime(harness, body))
