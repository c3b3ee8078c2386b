"""The fake/Linux runtime scenario with the Windows backend over the fake binding, in-process.

start -> protection (power request + LIDACTION 0, backed up once with the scheme GUID), lid closed by
a GUID_LIDSWITCH_STATE_CHANGE broadcast, stop -> SetSuspendState after protection is released;
a crash leaves the backup and the next command's recovery restores the scheme from it. Time comes
from trio's MockClock (no real waiting); platform calls run inline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import trio.testing
from fake_winapi import BALANCED, FakeWindowsApi

from lidguard.platform.paths import resolve_paths
from lidguard.platform.windows.backend import WindowsPlatform
from lidguard.platform.windows.winapi import (
    ERROR_ACCESS_DENIED,
    POWER_REQUEST_DISPLAY_REQUIRED,
    POWER_REQUEST_SYSTEM_REQUIRED,
)
from lidguard.runtime.app import Runtime
from lidguard.runtime.protection import restore_pending_lid_backup
from lidguard.settings.model import Settings, headless_defaults

EPOCH = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


class LoopClock:
    """Wall clock = a fixed epoch + the event loop's (mock) clock, so post-stop delays elapse in mock time."""

    def now(self) -> datetime:
        try:
            loop_time = anyio.current_time()
        except Exception:  # before the loop exists
            loop_time = 0.0
        return EPOCH + timedelta(seconds=loop_time)


def settings(**changes: Any) -> Settings:
    return Settings.from_raw({**headless_defaults().to_file_json(), "ChangeLidAction": True, **changes})


class WindowsHarness:
    def __init__(self, api: FakeWindowsApi, configured: Settings, **platform_options: Any) -> None:
        self.api = api
        self.platform = WindowsPlatform(api, binding_reason="fake binding", **platform_options)
        self.paths = resolve_paths()
        self.runtime = Runtime(platform=self.platform, paths=self.paths, settings=configured,
                               clock=LoopClock(), offload_platform_calls=False)

    async def send(self, command: str, **fields: Any) -> dict[str, Any]:
        return await self.runtime.handle_message({"v": 1, "Command": command, "Provider": "Claude",
                                                  "SessionIdentifier": "s1", **fields})

    def backup(self) -> dict[str, Any]:
        return json.loads(self.paths.lid_backup_file.read_text(encoding="utf-8"))


def run(harness: WindowsHarness, body: Callable[[WindowsHarness], Awaitable[None]], *, shutdown: bool = True) -> None:
    async def main() -> None:
        async with anyio.create_task_group() as group:
            await harness.runtime.run(group)
            await body(harness)
            group.cancel_scope.cancel()
        if shutdown:
            await harness.runtime.shutdown()

    anyio.run(main, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


def test_start_protects_and_closed_lid_stop_suspends_after_release():
    api = FakeWindowsApi()
    api.monitors, api.display_paths = 0, []
    harness = WindowsHarness(api, settings(PostStopSuspendDelaySeconds=30))

    async def body(h: WindowsHarness) -> None:
        reply = await h.send("start")
        assert reply["Succeeded"] and reply["LidSwitchState"] == "Unknown"
        assert api.active_requests() == [{POWER_REQUEST_SYSTEM_REQUIRED}]
        assert api.lid_values == {(BALANCED, True): 0, (BALANCED, False): 0}
        assert h.backup()["PowerSchemeIdentifier"] == BALANCED
        assert h.backup()["AlternatingCurrentAction"] == 1 and h.backup()["DirectCurrentAction"] == 1
        api.broadcast_lid(0)
        reply = await h.send("stop")
        assert reply["PendingSuspend"]["Mode"] == "Sleep"
        assert api.active_requests(), "protection stays during the post-stop delay"
        with anyio.fail_after(120):
            while not api.suspends:
                await anyio.sleep(1)
        assert api.suspends == [False]
        names = api.names()
        assert names.index("PowerClearRequest") < names.index("SetSuspendState")
        assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 1}
        assert not h.paths.lid_backup_file.exists()
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is True

    run(harness, body)
    assert api.requests == {} and api.notification_callbacks == {}


def test_a_refused_lidaction_write_keeps_the_power_request_and_the_next_start_retries():
    api = FakeWindowsApi()
    api.fail("PowerWriteACValueIndex", ERROR_ACCESS_DENIED)
    harness = WindowsHarness(api, settings())

    async def body(h: WindowsHarness) -> None:
        reply = await h.send("start")
        assert reply["Succeeded"], reply["Message"]
        assert api.active_requests() == [{POWER_REQUEST_SYSTEM_REQUIRED}]
        assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 1}
        assert "Lid-close action held back: keeping awake; the lid-close action" in reply["Message"]
        assert "access" in reply["LidPolicyHeldBack"].lower()
        assert not h.paths.lid_backup_file.exists()
        reply = await h.send("start", SessionIdentifier="s2")  # the refusal is gone now
        assert reply["Succeeded"] and reply["LidPolicyHeldBack"] is None
        assert api.lid_values == {(BALANCED, True): 0, (BALANCED, False): 0}
        assert h.backup()["AlternatingCurrentAction"] == 1

    run(harness, body)
    assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 1}


def test_open_lid_stop_does_not_suspend_and_modern_standby_failure_is_recorded():
    api = FakeWindowsApi()
    harness = WindowsHarness(api, settings(PostStopSuspendDelaySeconds=0))

    async def body(h: WindowsHarness) -> None:
        await h.send("start")
        api.broadcast_lid(1)
        assert (await h.send("stop"))["PendingSuspend"] is None
        api.broadcast_lid(0)
        api.monitors, api.display_paths = 1, [(11, True)]  # only the internal panel: excluded when closed
        api.modern_standby = True
        api.fail("SetSuspendState", 50)
        await h.send("start")
        await h.send("stop")
        with anyio.fail_after(60):
            while not h.runtime.suspend_history.newest_first():
                await anyio.sleep(1)
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is False and "Modern Standby" in entry["Message"]

    run(harness, body)
    assert api.suspends == []


def test_settings_change_is_make_before_break_and_the_backup_is_taken_once():
    api = FakeWindowsApi()
    harness = WindowsHarness(api, settings())
    harness.paths.data_dir.mkdir(parents=True, exist_ok=True)

    async def body(h: WindowsHarness) -> None:
        await h.send("start")
        first_backup = h.backup()
        before = len(api.calls)
        changed = settings(PowerRequest={"PreventDisplaySleep": True})
        await h.send("settings", HasSettings=True, Settings=changed.to_file_json())
        names = api.names()[before:]
        assert names.index("PowerCreateRequest") < names.index("CloseHandle")
        assert api.active_requests() == [{POWER_REQUEST_SYSTEM_REQUIRED, POWER_REQUEST_DISPLAY_REQUIRED}]
        assert not any(name.startswith(("PowerRead", "PowerWrite")) for name in names)
        assert h.backup() == first_backup

    run(harness, body)
    assert api.requests == {} and api.lid_values[(BALANCED, True)] == 1


def test_an_existing_backup_is_never_overwritten_and_is_what_gets_restored():
    api = FakeWindowsApi()
    harness = WindowsHarness(api, settings())
    harness.paths.data_dir.mkdir(parents=True, exist_ok=True)
    harness.paths.lid_backup_file.write_text(json.dumps({
        "SavedAt": "2026-11-30T10:00:00Z", "PowerSchemeIdentifier": BALANCED,
        "IncludesAlternatingCurrent": True, "AlternatingCurrentAction": 2,
        "IncludesDirectCurrent": True, "DirectCurrentAction": 3}))

    async def body(h: WindowsHarness) -> None:
        await h.send("start")
        assert h.backup()["AlternatingCurrentAction"] == 2
        assert not any(name.startswith("PowerRead") for name in api.names())
        await h.send("stop")

    run(harness, body)
    assert api.lid_values == {(BALANCED, True): 2, (BALANCED, False): 3}


def test_a_crashed_runtime_leaves_the_backup_and_recovery_restores_the_scheme():
    api = FakeWindowsApi()
    harness = WindowsHarness(api, settings())

    async def body(h: WindowsHarness) -> None:
        await h.send("start")

    run(harness, body, shutdown=False)  # the process dies: no release, no restore
    assert api.lid_values[(BALANCED, False)] == 0 and harness.paths.lid_backup_file.exists()
    api.active_scheme = "a1841308-3541-4fab-bc81-f71556f20b4a"  # the user moved to another scheme
    recovering = WindowsPlatform(api)
    assert restore_pending_lid_backup(recovering, harness.paths.lid_backup_file)
    assert api.lid_values[(BALANCED, True)] == 1 and api.lid_values[(BALANCED, False)] == 1
    assert api.active_scheme == BALANCED and not harness.paths.lid_backup_file.exists()


def test_doctor_under_the_windows_platform_on_this_os_lists_each_capability_with_its_reason():
    env_probe = [sys.executable, "-m", "lidguard", "doctor", "--json"]
    result = subprocess.run(env_probe, capture_output=True, text=True, timeout=60,
                            env={**_environment(), "LIDGUARD_PLATFORM": "windows"})
    assert result.returncode == 1, result.stderr  # nothing can keep this machine awake through Win32
    report = json.loads(result.stdout)
    assert report["platform"] == "windows" and report["verdict"]["canProtect"] is False
    capabilities = capability_texts(report)
    assert set(capabilities) >= {"power", "lid_policy", "lid", "display", "suspend", "thermal", "process",
                                 "sound", "permission"}
    assert all(":" in text or text.startswith("available") for text in capabilities.values())
    assert "SetSuspendState" in capabilities["suspend"] and "unsupported" in capabilities["power"]


def _environment() -> dict[str, str]:
    import os

    return dict(os.environ)


def capability_texts(report):
    """doctor --json capabilities as the human lines' texts (the one formatter doctor uses)."""
    from lidguard.cli.doctor import capability_text

    return {item["name"]: capability_text(item) for item in report["capabilities"]}


def test_a_running_tool_that_uses_cpu_keeps_the_session_then_idle_it_is_abandoned_and_suspends():
    """Issue 16 item 2 with the Windows backend: the timer reads the agent's descendants through
    Toolhelp + GetProcessTimes; a busy compiler keeps the session, an idle one lets it go."""
    api = FakeWindowsApi()
    api.monitors, api.display_paths = 0, []
    agent, shell, compiler = 1300, 1400, 1500
    api.processes = [(900, 4, "explorer.exe"), (agent, 900, "node.exe"), (shell, agent, "cmd.exe"),
                     (compiler, shell, "cl.exe")]
    api.alive = {agent, shell, compiler}
    created = 133_000_000_000_000_000
    api.times = {agent: (created, 0, 0), shell: (created + 1, 0, 0), compiler: (created + 2, 0, 0)}
    harness = WindowsHarness(api, settings(SessionTimeoutMinutes=1, PostStopSuspendDelaySeconds=0))

    async def body(h: WindowsHarness) -> None:
        await h.send("start", WatchedProcessIdentifier=agent)
        await h.send("mark-session-active", SessionStateReason="PreToolUse:Bash", ToolCallId="toolu_1",
                     ToolCallState="Running")
        api.broadcast_lid(0)
        await anyio.sleep(30)  # act between the timer's checks
        for minute in range(1, 4):
            api.times[compiler] = (created + 2, 0, minute * 600_000_000)  # one more CPU minute
            await anyio.sleep(60)
            assert not next(iter(h.runtime.state.sessions.values())).soft_locked, minute
        assert api.suspends == []
        reads = [call for call in api.calls if call[0] == "GetProcessTimes"]
        assert len(reads) == 3 * 3  # three timer firings x (agent + shell + compiler), no polling
        await anyio.sleep(60)  # the compiler went idle
        with anyio.fail_after(120):
            while not api.suspends:
                await anyio.sleep(1)
        assert api.suspends == [False]

    run(harness, body)
    logged = [entry["EventName"] for entry in harness.runtime.session_log.read()]
    assert logged.count("running-tool-activity") == 3 and "session-running-tool-abandoned" in logged


def test_a_runtime_killed_owning_lidaction_is_restored_by_its_watchdog_once_with_no_other_command(monkeypatch):
    """Issue 32.4 on the Windows backend: the runtime dies (TerminateProcess from outside, a crash) with the
    power scheme's LIDACTION at Do Nothing, and nothing calls lidguard again. The watchdog, waiting on the
    runtime's process handle, sees it end and runs the crash recovery: LIDACTION back, once."""
    from lidguard.platform.windows.runtime_link import ProcessRuntimeLink
    from lidguard.runtime.watchdog import WatchdogConfig, watch

    api = FakeWindowsApi()
    harness = WindowsHarness(api, settings())

    async def body(h: WindowsHarness) -> None:
        assert (await h.send("start"))["Succeeded"]

    run(harness, body, shutdown=False)  # no clean exit: what a killed runtime leaves behind
    assert api.lid_values == {(BALANCED, True): 0, (BALANCED, False): 0}
    assert harness.paths.lid_backup_file.exists()
    runtime_pid, watchdog_pid = 4242, 4343
    api.alive = {runtime_pid}
    api.times = {runtime_pid: (1_000, 0, 0), watchdog_pid: (2_000, 0, 0)}
    link = ProcessRuntimeLink(api, runtime_pid, watchdog_pid)
    assert not link.refused
    api.alive.discard(runtime_pid)  # the runtime is gone
    restores: list[str] = []
    monkeypatch.setattr("lidguard.platform.load_platform",
                        lambda: restores.append("loaded") or WindowsPlatform(api, binding_reason="fake binding"))
    config = WatchdogConfig(data_dir=harness.paths.data_dir, runtime_pid=runtime_pid, pipe_fd=None,
                            stale_seconds=60, poll_seconds=0.05)
    assert watch(config, link) == "runtime vanished"
    assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 1}
    assert not harness.paths.lid_backup_file.exists() and restores == ["loaded"]
    log = [json.loads(line) for line in harness.paths.session_log_file.read_text().splitlines()]
    assert [entry["EventName"] for entry in log][-2:] == ["watchdog-runtime-vanished", "watchdog-recovered"]
    # A later command finds nothing more to restore.
    assert not restore_pending_lid_backup(WindowsPlatform(api, binding_reason="fake binding"),
                                          harness.paths.lid_backup_file)
    assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 1}
