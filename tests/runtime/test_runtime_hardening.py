"""Issue 6 defects in the runtime core, each with a test that failed before the fix.

Protection is never dropped while wanted (settings changes are make-before-break), ``start`` carries
settings, an explicit watched pid wins, ``handle_message`` never raises, nothing slow under the gate,
the ``shutdown`` command, ``PendingSuspend`` in replies, wall-clock time that survives a resume.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

import anyio
import pytest
from lidguard_runtime_harness import (
    BACKENDS,
    Harness,
    JumpClock,
    SlowSuspendPlatform,
    assert_nothing_left_applied,
    closed_lid_machine,
    run_mock,
    run_on,
    wait_until,
    with_runtime,
    with_settings,
)

from lidguard.platform.api import LidState
from lidguard.platform.fake import FakePlatform
from lidguard.runtime.clock import WallClock
from lidguard.settings.model import headless_defaults


def power_actions(h: Harness) -> list[tuple[str, bool, str]]:
    return [(a["action"], a["preventDisplaySleep"], a["reason"]) for a in h.platform.actions
            if a["action"] in ("protection-applied", "protection-released")]


# -- protection is never dropped while wanted ---------------------------------------------------------
def test_settings_change_mid_session_is_make_before_break_and_keeps_the_lid_policy():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        backup = h.paths.lid_backup_file.read_text()
        changed = with_settings(PowerRequest={"PreventSystemSleep": True, "PreventDisplaySleep": True,
                                              "Reason": "new reason"})
        response = await h.send("settings", HasSettings=True, Settings=changed.to_file_json())
        assert response["Succeeded"]
        # the new request is acquired before the old one is released; the lid is never touched
        assert h.actions() == ["protection-applied", "lid-policy-changed", "protection-applied",
                               "protection-released"]
        applied_new, released_old = power_actions(h)[1:]
        assert applied_new[1:] == (True, "new reason") and released_old[1] is False
        assert h.paths.lid_backup_file.read_text() == backup
        assert h.platform.machine.lid_ac_action == 0
        # an unrelated setting touches nothing
        await h.send("settings", HasSettings=True,
                     Settings={**changed.to_file_json(), "PostStopSuspendDelaySeconds": 3})
        assert len(h.actions()) == 4
        # ChangeLidAction alone: only the lid policy moves, protection stays held
        await h.send("settings", HasSettings=True, Settings={**changed.to_file_json(), "ChangeLidAction": False})
        assert h.actions()[4:] == ["lid-policy-restored"]
        assert not h.paths.lid_backup_file.exists()
        await h.send("settings", HasSettings=True, Settings={**changed.to_file_json(), "ChangeLidAction": True})
        assert h.actions()[5:] == ["lid-policy-changed"]
        await h.stop()
        assert_nothing_left_applied(h)

    run_mock(lambda: with_runtime(harness, body))


def test_settings_on_start_apply_and_invalid_ones_are_rejected_but_the_session_starts():
    harness = Harness()

    async def body(h: Harness) -> None:
        edited = with_settings(SessionTimeoutMinutes=30).to_file_json()
        response = await h.start("a", HasSettings=True, Settings=edited)
        assert response["Succeeded"] and response["Settings"]["SessionTimeoutMinutes"] == 30
        # (the model itself is lenient with bad values; settings that are not an object are invalid)
        response = await h.start("c", HasSettings=True, Settings=["not", "an", "object"])
        assert response["Succeeded"] and response["ActiveSessionCount"] == 2
        assert response["Settings"]["SessionTimeoutMinutes"] == 30
        assert len(h.log_entries("settings-update-rejected")) == 1
        assert h.actions() == ["protection-applied", "lid-policy-changed"]

    run_mock(lambda: with_runtime(harness, body))


def test_explicit_watched_pid_wins_even_when_watch_parent_process_is_off():
    harness = Harness(settings=with_settings(WatchParentProcess=False))

    async def body(h: Harness) -> None:
        response = await h.start(WatchedProcessIdentifier=4242)
        assert response["Sessions"][0]["WatchedProcessIdentifier"] == 4242

    run_mock(lambda: with_runtime(harness, body))


# -- handle_message never raises ----------------------------------------------------------------------
def test_a_backend_bug_during_a_request_is_a_failure_reply_and_an_exception_log_entry():
    harness = Harness()

    def broken_is_alive(pid: int) -> bool:
        raise RuntimeError("backend bug")

    harness.platform.process.is_alive = broken_is_alive  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        # a live process: its exit watch (a pidfd) waits on, so only cleanup-orphans asks is_alive
        await h.start(WatchedProcessIdentifier=os.getpid())
        response = await h.send("cleanup-orphans")
        assert response["Succeeded"] is False and "backend bug" in response["Message"]
        assert "backend bug" in h.paths.exception_log_file.read_text()
        assert (await h.send("status"))["ActiveSessionCount"] == 1

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("weird", ["\ud800", "a\udfffb"])
def test_lone_surrogates_never_escape_handle_message(weird):
    harness = Harness()

    async def body(h: Harness) -> None:
        for command in ("start", "stop", "mark-session-active", "mark-session-softlocked", "remove-session"):
            response = await h.send(command, Provider="claude", SessionIdentifier=weird, SessionStateReason=weird,
                                    WorkingDirectory=weird, ProviderName=weird, SessionEndReason=weird)
            assert isinstance(response["Succeeded"], bool)
        response = await h.send(weird)
        assert response["Succeeded"] is False
        assert (await h.send("status"))["Succeeded"]

    run_mock(lambda: with_runtime(harness, body))


def test_a_value_that_recurses_is_a_failure_reply():
    harness = Harness()
    nested: list = []
    for _ in range(5000):
        nested = [nested]

    async def body(h: Harness) -> None:
        # Settings never reject a stored value (issue 17): a nested value where a setting belongs is
        # replaced, so the runtime either refuses the request or keeps sane defaults - never dies of it.
        response = await h.send("settings", HasSettings=True, Settings={"PowerRequest": nested})
        if response["Succeeded"]:
            assert h.runtime.settings.power_request.prevent_system_sleep is True
        assert (await h.send("status"))["Succeeded"] is True
        response = await h.runtime.handle_message({"v": 1, "Command": "start", "Provider": nested})
        assert response["Succeeded"] is False

    run_mock(lambda: with_runtime(harness, body))


# -- nothing slow under the gate -------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_slow_suspend_request_does_not_delay_status(backend):
    platform = SlowSuspendPlatform(closed_lid_machine(), latency=2.0)
    harness = Harness(settings=with_settings(PostStopSuspendDelaySeconds=0), platform=platform, offload=True)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.to_thread.run_sync(platform.entered.wait, 5)
        response = await h.send("status")
        # produced while the suspend request still sits in the worker thread
        assert not platform.finished.is_set()
        assert response["Succeeded"] and response["PendingSuspend"]["Stage"] == "requesting"
        platform.release.set()
        await wait_until(lambda: "stop-suspend-requested" in h.log_names())
        assert (await h.send("status"))["PendingSuspend"] is None

    run_on(backend, lambda: with_runtime(harness, body))


# -- shutdown and PendingSuspend --------------------------------------------------------------------------
def test_shutdown_refuses_while_sessions_are_active_unless_forced():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        refused = await h.send("shutdown", Force=False)
        assert refused["Succeeded"] is False
        assert refused["Message"] == "2 active session(s) are still running; use --force to stop the runtime anyway."
        assert not h.runtime.exit_requested.is_set()
        forced = await h.send("shutdown", Force=True)
        assert forced["Succeeded"] is True and forced["Message"] == "LidGuard runtime is stopping."
        assert h.runtime.exit_requested.is_set()
        assert_nothing_left_applied(h)

    run_mock(lambda: with_runtime(harness, body))


def test_shutdown_without_sessions_stops():
    harness = Harness()

    async def body(h: Harness) -> None:
        response = await h.send("shutdown")
        assert response["Succeeded"] and h.runtime.exit_requested.is_set()

    run_mock(lambda: with_runtime(harness, body))


def test_stop_reply_carries_the_pending_suspend_and_status_follows_its_stages():
    clock = JumpClock()
    harness = Harness(machine=closed_lid_machine(), clock=clock,
                      settings=with_settings(PostStopSuspendSound="Beep"))

    async def body(h: Harness) -> None:
        assert (await h.start())["PendingSuspend"] is None
        response = await h.stop()
        assert response["PendingSuspend"] == {"Mode": "Sleep", "Reason": "Completed", "Stage": "delay",
                                              "DeadlineUtc": "2026-11-30T12:00:10Z"}
        await anyio.sleep(11)
        assert (await h.send("status"))["PendingSuspend"] is None
        assert h.actions()[-2:] == ["protection-released", "suspend-requested"]

    run_mock(lambda: with_runtime(harness, body))


# -- time: wall clock, and timers that count sleep ------------------------------------------------------
def test_log_works_before_the_event_loop_exists():
    harness = Harness(clock=WallClock())  # the real wall clock, as run-server uses it
    harness.runtime.log("settings-load-failed", "run-server", "Using defaults.", succeeded=False)
    [entry] = harness.runtime.session_log.read()
    stamp = datetime.fromisoformat(entry["Timestamp"].replace("Z", "+00:00"))
    assert abs((stamp - datetime.now(timezone.utc)).total_seconds()) < 60


def test_inactivity_timeout_fires_promptly_after_the_wall_clock_jumps():
    clock = JumpClock()
    harness = Harness(clock=clock)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(60)
        clock.jump(15 * 60)  # slept 15 minutes with the lid closed: the monotonic clock stood still
        resumed = anyio.current_time()
        await wait_until(lambda: bool(h.log_entries("session-timeout-softlock-recorded")), seconds=120)
        assert anyio.current_time() - resumed <= 60
        [entry] = h.log_entries("session-timeout-softlock-recorded")
        assert entry["Timestamp"].startswith("2026-11-30T12:16")  # wall time, sleep included
        assert "protection-released" in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_cleanup_delay_counts_the_time_slept():
    clock = JumpClock()
    harness = Harness(clock=clock)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(30)
        clock.jump(11 * 60)
        await wait_until(h.runtime.exit_requested.is_set, seconds=120)

    run_mock(lambda: with_runtime(harness, body))


def test_timestamps_in_replies_are_wall_clock():
    clock = JumpClock()
    harness = Harness(clock=clock)

    async def body(h: Harness) -> None:
        clock.jump(3600)
        response = await h.start()
        assert response["Sessions"][0]["StartedAt"] == "2026-11-30T13:00:00Z"

    run_mock(lambda: with_runtime(harness, body))


def test_fake_platform_is_untouched_by_default_settings():
    assert headless_defaults().change_lid_action is True
    assert FakePlatform().name == "fake"


def test_a_refused_new_power_request_keeps_the_old_one_held():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()

        def refuse(request):
            raise OSError("logind said no")

        h.platform.power = type("Refusing", (), {"apply": staticmethod(refuse)})()  # type: ignore[assignment]
        changed = with_settings(PowerRequest={"PreventDisplaySleep": True})
        response = await h.send("settings", HasSettings=True, Settings=changed.to_file_json())
        assert response["Succeeded"] is False and "logind said no" in response["Message"]
        assert h.actions() == ["protection-applied", "lid-policy-changed"]  # nothing released
        h.platform.power = h.platform  # the platform recovers: the next change converges
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1")
        assert h.actions()[2:] == ["protection-applied", "protection-released"]
        await h.stop()
        assert_nothing_left_applied(h)

    run_mock(lambda: with_runtime(harness, body))


def test_settings_the_model_refuses_are_rejected_on_start(monkeypatch):
    from lidguard.runtime import handlers

    class Refusing:
        @staticmethod
        def from_raw(value):
            raise ValueError("refused by the model")

    monkeypatch.setattr(handlers, "Settings", Refusing)
    harness = Harness()

    async def body(h: Harness) -> None:
        response = await h.start(HasSettings=True, Settings={"SessionTimeoutMinutes": 30})
        assert response["Succeeded"] and response["Settings"]["SessionTimeoutMinutes"] == 12
        [entry] = h.log_entries("settings-update-rejected")
        assert "refused by the model" in entry["Message"] and entry["Succeeded"] is False

    run_mock(lambda: with_runtime(harness, body))


def test_suspend_eligibility_reads_the_machine_afresh_while_replies_use_the_snapshot():
    machine = closed_lid_machine()
    machine.lid = LidState.OPEN
    platform = FakePlatform(machine)
    harness = Harness(platform=platform, offload=True, settings=with_settings(PostStopSuspendDelaySeconds=600))
    reads: list[str] = []
    read_lid = platform.read_lid_state

    def counting_read() -> LidState:
        reads.append("lid")
        return read_lid()

    platform.lid = type("Lid", (), {"read_lid_state": staticmethod(counting_read)})()  # type: ignore[assignment]

    async def body(h: Harness) -> None:
        assert (await h.start())["LidSwitchState"] == "Open"
        for _ in range(5):
            await h.send("status")
        assert len(reads) == 1  # replies come from the snapshot, not a platform query each
        machine.lid = LidState.CLOSED  # closed right before the stop: the decision must see it
        response = await h.stop()
        assert response["PendingSuspend"] is not None and response["LidSwitchState"] == "Closed"
        assert len(reads) == 2

    anyio.run(lambda: with_runtime(harness, body), backend="trio")


def test_an_instant_platform_is_read_for_every_reply():
    harness = Harness()

    async def body(h: Harness) -> None:
        assert (await h.send("status"))["LidSwitchState"] == "Open"
        h.platform.machine.lid = LidState.CLOSED  # same MockClock instant: no cache may hide it
        assert (await h.send("status"))["LidSwitchState"] == "Closed"

    run_mock(lambda: with_runtime(harness, body))
