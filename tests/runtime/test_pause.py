"""Pause, resume and emergency restore in the runtime (issue 19 item 4) on the fake platform and trio's
MockClock: a pause releases protection and the lid policy and holds every suspend back while the sessions
stay tracked; it ends at its deadline (also across a wall-clock jump) or on resume; emergency-restore
pauses, clears every session and restores the lid policy."""

from __future__ import annotations

import anyio
import pytest
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.runtime.components.pause import MAX_PAUSE_SECONDS


def _power(h: Harness) -> list[str]:
    wanted = ("protection-applied", "protection-released", "lid-policy-changed", "lid-policy-restored",
              "suspend-requested", "hibernate-requested")
    return [action for action in h.actions() if action in wanted]


def test_pause_releases_protection_keeps_sessions_and_blocks_the_suspend_after_the_last_stop():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        assert h.runtime.protection.applied
        reply = await h.send("pause")
        assert reply["Succeeded"] and reply["Paused"] == {"UntilUtc": None}
        assert not h.runtime.protection.applied and not h.paths.lid_backup_file.exists()
        assert [s["SessionIdentifier"] for s in reply["Sessions"]] == ["a", "b"]
        [reason] = reply["ProtectionHeldBack"]
        assert reason.startswith("lidguard is paused")
        await h.start("c")  # a new session is tracked, not protected
        assert not h.runtime.protection.applied and len(h.runtime.state.sessions) == 3
        for session in ("a", "b", "c"):
            await h.stop(session)
        await anyio.sleep(3600)
        assert "suspend-requested" not in h.actions() and h.runtime.suspend.pending is None
        assert any("paused" in entry["Message"] for entry in h.log_entries("stop-suspend-skipped"))
        assert not h.runtime.exit_requested.is_set()  # a paused runtime stays up: it remembers the pause
        reply = await h.send("resume")
        assert reply["Succeeded"] and reply["Paused"] is None and reply["ProtectionHeldBack"] == []
        await anyio.sleep(3600)
        assert "suspend-requested" not in h.actions()  # resuming schedules no suspend by itself
        assert _power(h) == ["protection-applied", "lid-policy-changed", "lid-policy-restored",
                             "protection-released"]

    run_mock(lambda: with_runtime(harness, body))


def test_a_pause_cancels_the_pending_suspend_and_resume_re_applies_protection_for_working_sessions():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.stop("a")
        assert h.runtime.suspend.pending is not None
        await h.start("b")  # cancels; now stop b and pause during its delay
        await h.stop("b")
        assert h.runtime.suspend.pending is not None
        await h.send("pause")
        assert h.runtime.suspend.pending is None
        assert "stop-suspend-canceled" in h.log_names()
        await anyio.sleep(600)
        assert "suspend-requested" not in h.actions()
        await h.start("c")
        await h.send("resume")
        assert h.runtime.protection.applied

    run_mock(lambda: with_runtime(harness, body))


def test_a_timed_pause_ends_at_its_deadline_even_when_the_wall_clock_jumps():
    harness = Harness(machine=closed_lid_machine(), settings=with_settings(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start("a")
        reply = await h.send("pause", PauseSeconds=1800)
        assert reply["Paused"]["UntilUtc"] is not None and "30 min" in reply["Message"]
        await anyio.sleep(1790)
        assert not h.runtime.protection.applied
        await anyio.sleep(20)
        assert h.runtime.protection.applied and (await h.send("status"))["Paused"] is None
        assert "runtime-resumed" in h.log_names()
        await h.send("pause", PauseSeconds=7200)
        h.clock.jump(7200)  # the machine slept through the pause
        await anyio.sleep(61)
        assert h.runtime.protection.applied

    run_mock(lambda: with_runtime(harness, body))


def test_a_new_pause_replaces_the_old_deadline_and_resume_cancels_the_timer():
    harness = Harness(machine=closed_lid_machine(), settings=with_settings(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.send("pause", PauseSeconds=60)
        await h.send("pause")  # until resume now
        await anyio.sleep(600)
        assert not h.runtime.protection.applied
        await h.send("resume")
        await h.send("pause", PauseSeconds=60)
        await h.send("resume")
        await h.send("pause", PauseSeconds=120)
        await anyio.sleep(61)  # the first timer was canceled: still paused
        assert not h.runtime.protection.applied
        await anyio.sleep(60)
        assert h.runtime.protection.applied
        assert (await h.send("resume"))["Message"] == "LidGuard is not paused."

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("seconds", [0, -5, MAX_PAUSE_SECONDS + 1, 1.5, "60", True, float("nan"), 10**40])
def test_pause_refuses_a_bad_duration(seconds):
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        reply = await h.send("pause", PauseSeconds=seconds)
        assert not reply["Succeeded"] and "PauseSeconds" in reply["Message"]
        assert reply["Paused"] is None

    run_mock(lambda: with_runtime(harness, body))


def test_emergency_restore_pauses_clears_every_session_and_restores_the_lid_policy():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        assert h.paths.lid_backup_file.exists()
        reply = await h.send("emergency-restore")
        assert reply["Succeeded"], reply
        assert sorted(reply["RemovedSessions"]) == ["Claude:a", "Claude:b"] or len(reply["RemovedSessions"]) == 2
        assert reply["Sessions"] == [] and reply["Paused"] == {"UntilUtc": None}
        assert not h.paths.lid_backup_file.exists()
        assert h.platform.machine.lid_ac_action == 1 and h.platform.machine.lid_dc_action == 1
        await anyio.sleep(3600)
        assert "suspend-requested" not in h.actions()  # clearing the sessions suspends nothing
        await h.start("c")  # a hook that still runs: tracked, unprotected until resume
        assert not h.runtime.protection.applied
        await h.send("resume")
        assert h.runtime.protection.applied

    run_mock(lambda: with_runtime(harness, body))
