"""The runtime in-process on trio's MockClock: protection, timers, suspend flow, cleanup, backups.

No real waiting: a 12-minute timeout or a 10-second delay passes in microseconds.
"""

from __future__ import annotations

import json

import anyio
import pytest
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime

from lidguard.platform.api import DisplayConnector, LidState
from lidguard.platform.fake import FakeMachine
from lidguard.settings.model import Settings, headless_defaults


def test_start_applies_protection_and_lid_policy_and_stop_restores_them():
    harness = Harness()

    async def body(h: Harness) -> None:
        response = await h.start()
        assert response["Succeeded"] and response["ActiveSessionCount"] == 1
        assert h.actions() == ["protection-applied", "lid-policy-changed"]
        backup = json.loads(h.paths.lid_backup_file.read_text())
        assert backup["AlternatingCurrentAction"] == 1 and backup["IncludesDirectCurrent"] is True
        assert oct(h.paths.lid_backup_file.stat().st_mode & 0o777) == "0o600"
        await h.stop()
        assert h.actions()[2:] == ["lid-policy-restored", "protection-released"]
        assert not h.paths.lid_backup_file.exists()
        assert h.platform.machine.lid_ac_action == 1

    run_mock(lambda: with_runtime(harness, body))


def test_second_session_does_not_apply_protection_twice():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        await h.stop("a")
        assert h.actions() == ["protection-applied", "lid-policy-changed"]
        await h.stop("b")
        assert h.actions().count("protection-released") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_existing_lid_backup_is_never_overwritten_and_is_the_restore_source():
    harness = Harness()
    harness.paths.data_dir.mkdir(parents=True, exist_ok=True)
    harness.paths.lid_backup_file.write_text(json.dumps({
        "SavedAt": "2026-01-01T00:00:00Z", "PowerSchemeIdentifier": "scheme-from-crash",
        "IncludesAlternatingCurrent": True, "AlternatingCurrentAction": 2,
        "IncludesDirectCurrent": True, "DirectCurrentAction": 3}))

    async def body(h: Harness) -> None:
        await h.start()
        assert json.loads(h.paths.lid_backup_file.read_text())["PowerSchemeIdentifier"] == "scheme-from-crash"
        await h.stop()
        restored = [a for a in h.platform.actions if a["action"] == "lid-policy-restored"]
        assert restored[0]["alternatingCurrentAction"] == 2 and restored[0]["directCurrentAction"] == 3

    run_mock(lambda: with_runtime(harness, body))


def test_missing_backup_at_restore_skips_the_lid_write_and_logs_a_failure():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        h.paths.lid_backup_file.unlink()
        await h.stop()
        assert "lid-policy-restored" not in h.actions()
        assert "lid-policy-hold-dropped" in h.actions()
        failures = [e for e in h.runtime.session_log.read() if e["EventName"] == "lid-action-restore-skipped"]
        assert failures and failures[0]["Succeeded"] is False

    run_mock(lambda: with_runtime(harness, body))


def test_inactive_timeout_soft_locks_after_twelve_minutes_and_releases_protection():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        started = anyio.current_time()
        await anyio.sleep(11 * 60 + 59)
        assert not h.runtime.state.sessions[next(iter(h.runtime.state.sessions))].soft_locked
        await anyio.sleep(2)
        session = next(iter(h.runtime.state.sessions.values()))
        assert session.soft_lock_reason == "session-timeout-expired:12 minutes"
        assert anyio.current_time() - started >= 12 * 60
        assert "protection-released" in h.actions()
        assert "session-timeout-suspend-skipped" in h.log_names()  # lid open

    run_mock(lambda: with_runtime(harness, body))


def test_last_stop_with_closed_lid_suspends_once_after_the_delay_keeping_protection_until_then():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        assert "stop-suspend-scheduled" in h.log_names()
        assert "protection-released" not in h.actions()  # kept during the delay
        await anyio.sleep(9.9)
        assert "suspend-requested" not in h.actions()
        await anyio.sleep(0.2)
        assert h.actions().count("suspend-requested") == 1
        assert h.actions().index("protection-released") < h.actions().index("suspend-requested")
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is True and entry["Reason"] == "Completed"
        assert entry["EventName"] == "stop-suspend-requested" and entry["SessionIdentifier"] == "s1"

    run_mock(lambda: with_runtime(harness, body))


def test_activity_during_the_delay_cancels_the_pending_suspend():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        await h.stop("b")
        await anyio.sleep(5)
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="a", SessionStateReason="y")
        await anyio.sleep(60)
        assert "suspend-requested" not in h.actions()
        assert "stop-suspend-canceled" in h.log_names()
        assert "protection-released" not in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_external_display_or_open_lid_skips_suspend():
    for machine in (closed_lid_machine(DisplayConnector("eDP-1", True), DisplayConnector("HDMI-A-1", False)),
                    FakeMachine(lid=LidState.OPEN)):
        harness = Harness(machine=machine)

        async def body(h: Harness) -> None:
            await h.start()
            await h.stop()
            await anyio.sleep(60)
            assert "suspend-requested" not in h.actions()
            assert "stop-suspend-skipped" in h.log_names()
            assert h.actions()[-1] == "protection-released"

        run_mock(lambda h=harness: with_runtime(h, body))


def test_failed_suspend_is_logged_and_recorded_without_crashing():
    machine = closed_lid_machine()
    machine.suspend_succeeds = False
    harness = Harness(machine=machine)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(11)
        assert "stop-suspend-failed" in h.log_names()
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is False
        assert (await h.send("status"))["Succeeded"]

    run_mock(lambda: with_runtime(harness, body))


def test_hibernate_mode_requests_hibernate():
    settings = Settings.from_raw({**headless_defaults().to_file_json(), "SuspendMode": "Hibernate"})
    harness = Harness(settings=settings, machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(11)
        assert h.actions().count("hibernate-requested") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_all_soft_locked_suspends_with_reason_soft_locked():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start()
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1",
                     SessionStateReason="permission_prompt")
        await anyio.sleep(11)
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Reason"] == "SoftLocked" and entry["SuspendTriggerSessionCount"] == 1
        assert entry["SessionStateReason"] == "permission_prompt"

    run_mock(lambda: with_runtime(harness, body))


def test_cleanup_delay_off_requests_exit_once_idle():
    settings = Settings.from_raw({**headless_defaults().to_file_json(), "ServerRuntimeCleanupDelayMinutes": None})
    harness = Harness(settings=settings)

    async def body(h: Harness) -> None:
        await h.start()
        assert not h.runtime.exit_requested.is_set()
        await h.stop()
        assert h.runtime.exit_requested.is_set()

    run_mock(lambda: with_runtime(harness, body))


def test_cleanup_timer_exits_after_ten_minutes_and_a_start_cancels_it():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(9 * 60)
        await h.start()
        await anyio.sleep(2 * 60)
        assert not h.runtime.exit_requested.is_set()
        await h.stop()
        await anyio.sleep(10 * 60 + 1)
        assert h.runtime.exit_requested.is_set()
        assert "server-runtime-cleanup-requested" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_protection_failure_rolls_the_session_back():
    harness = Harness()

    def broken_apply(request):
        raise OSError("power request refused")

    harness.platform.power = type("Broken", (), {"apply": staticmethod(broken_apply)})()

    async def body(h: Harness) -> None:
        response = await h.start()
        assert not response["Succeeded"]
        assert "power request refused" in response["Message"]
        assert response["ActiveSessionCount"] == 0

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("message, expected", [
    ({"v": 1, "Command": "explode"}, "Unsupported command: explode"),
    ({"v": 1, "Command": "start", "Provider": "martian", "SessionIdentifier": "x"}, "A provider is required"),
    ({"v": 1, "Command": "start", "Provider": "claude"}, "A session identifier is required."),
    ({"v": 1, "Command": "start", "Provider": "mcp", "SessionIdentifier": "x"}, "provider name is required"),
    ({"v": 1, "Command": "start", "Provider": "claude", "SessionIdentifier": "x",
      "WatchedProcessIdentifier": "many"}, "WatchedProcessIdentifier"),
    ({"v": 1, "Command": "settings"}, "Settings payload is required."),
])
def test_bad_requests_get_error_replies(message, expected):
    harness = Harness()

    async def body(h: Harness) -> None:
        response = await h.runtime.handle_message(message)
        assert response["Succeeded"] is False
        assert expected in response["Message"]
        assert (await h.send("status"))["Succeeded"]

    run_mock(lambda: with_runtime(harness, body))


def test_settings_update_reaches_the_runtime_and_changes_only_the_lid_policy():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start()
        updated = {**headless_defaults().to_file_json(), "ChangeLidAction": False}
        response = await h.send("settings", HasSettings=True, Settings=updated)
        assert response["Succeeded"] and response["Settings"]["ChangeLidAction"] is False
        assert h.actions() == ["protection-applied", "lid-policy-changed", "lid-policy-restored"]

    run_mock(lambda: with_runtime(harness, body))


class ControlledProcesses:
    """Process watching the test controls: ``exit(pid)`` makes ``wait_for_exit(pid)`` return."""

    def __init__(self) -> None:
        self._exits: dict[int, anyio.Event] = {}
        self.dead: set[int] = set()

    def _event(self, pid: int) -> anyio.Event:
        return self._exits.setdefault(pid, anyio.Event())

    def exit(self, pid: int) -> None:
        self.dead.add(pid)
        self._event(pid).set()

    def is_alive(self, pid: int) -> bool:
        return pid not in self.dead

    def read_ancestry(self, pid: int):
        return []

    async def wait_for_exit(self, pid: int) -> None:
        await self._event(pid).wait()


def test_watched_exit_is_a_cancel_path_that_keeps_the_suspend_already_scheduled():
    harness = Harness(machine=closed_lid_machine())
    processes = ControlledProcesses()
    harness.platform.process = processes

    async def body(h: Harness) -> None:
        await h.start("a", WatchedProcessIdentifier=101)
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="a", SessionStateReason="x")
        scheduled_at = anyio.current_time()
        await anyio.sleep(6)
        processes.exit(101)  # the agent dies while the soft-lock suspend is pending
        await anyio.sleep(0.01)
        assert not h.runtime.state.sessions
        await anyio.sleep(4.5)
        # fired at the original 10 s, not 10 s after the exit
        assert h.actions().count("suspend-requested") == 1
        assert anyio.current_time() - scheduled_at < 11
        assert "watched-process-exited" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_watched_exit_ends_the_session_and_cleanup_orphans_removes_dead_ones():
    harness = Harness()
    processes = ControlledProcesses()
    harness.platform.process = processes

    async def body(h: Harness) -> None:
        await h.start("a", WatchedProcessIdentifier=201)
        await h.start("b", WatchedProcessIdentifier=202)
        processes.exit(201)
        await anyio.sleep(0.1)
        assert [k.session_identifier for k in h.runtime.state.sessions] == ["b"]
        processes.dead.add(202)  # dead, but its exit was never observed
        response = await h.send("cleanup-orphans")
        assert response["Message"] == "Cleaned 1 orphan session(s)." and response["ActiveSessionCount"] == 0

    run_mock(lambda: with_runtime(harness, body))
