"""Other programs' sleep blockers on Windows (issue 34.3): the SYSTEM section of ``powercfg /requests``,
parsed, and named in status by the runtime over the fake binding (MockClock), whose suspend waits for
them and calls SetSuspendState once they are gone. powercfg comes from a command runner fed here."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
from fake_winapi import FakeWindowsApi
from test_windows_scenario import WindowsHarness, run, settings

from lidguard.platform.api import SuspendBlocker
from lidguard.platform.windows.backend import WindowsPlatform
from lidguard.platform.windows.requests import POWERCFG_REQUESTS, parse_power_requests
from lidguard.platform.windows.thermal import CommandResult

REQUESTS = """DISPLAY:
None.

SYSTEM:
[DRIVER] Realtek High Definition Audio (HDAUDIO\\FUNC_01&VEN_10EC&DEV_0295)
An audio stream is currently in use.
[PROCESS] \\Device\\HarddiskVolume3\\Program Files\\Backup\\backup.exe
Nightly backup to the NAS
[PROCESS] \\Device\\HarddiskVolume3\\Python311\\python.exe
LidGuard is keeping the system awake while an agent session is running.

AWAYMODE:
None.

EXECUTION:
[PROCESS] \\Device\\HarddiskVolume3\\Windows\\explorer.exe

PERFBOOST:
None.
"""
EMPTY = "DISPLAY:\nNone.\n\nSYSTEM:\nNone.\n\nAWAYMODE:\nNone.\n"


def test_parse_power_requests_reads_the_system_section_without_lidguards_own():
    assert parse_power_requests(REQUESTS) == [
        SuspendBlocker("Realtek High Definition Audio (HDAUDIO\\FUNC_01&VEN_10EC&DEV_0295)",
                       "An audio stream is currently in use.", None, None, "SYSTEM", "driver"),
        SuspendBlocker("backup.exe", "Nightly backup to the NAS", None, None, "SYSTEM", "process")]
    assert parse_power_requests(EMPTY) == []


class Powercfg:
    def __init__(self) -> None:
        self.output = REQUESTS.replace("[DRIVER] Realtek High Definition Audio (HDAUDIO\\FUNC_01&VEN_10EC&DEV_0295)\n"
                                       "An audio stream is currently in use.\n", "")
        self.calls = 0

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        if tuple(argv) == POWERCFG_REQUESTS:
            self.calls += 1
            return CommandResult(0, self.output, "")
        return CommandResult(1, "", "not fed by this test")


def test_a_failing_powercfg_names_nothing():
    def refused(argv: Sequence[str], timeout: float) -> CommandResult:
        return CommandResult(1, "", "This command requires administrator privileges.")

    platform = WindowsPlatform(FakeWindowsApi(), command_runner=refused)
    try:
        platform.suspend.list_blockers()
    except OSError as error:
        assert "administrator" in str(error)
    else:
        raise AssertionError("expected OSError")


def test_a_blocked_sleep_is_named_in_status_and_set_suspend_state_follows_the_release():
    api = FakeWindowsApi()
    api.monitors, api.display_paths = 0, []
    powercfg = Powercfg()
    harness = WindowsHarness(api, settings(PostStopSuspendDelaySeconds=0), command_runner=powercfg)

    async def body(h: WindowsHarness) -> None:
        assert (await h.send("start"))["Succeeded"]
        api.broadcast_lid(0)
        await h.send("stop")
        await anyio.sleep(1)
        assert api.suspends == []
        status = await h.send("status")
        [blocker] = status["SuspendBlocked"]["Blockers"]
        assert blocker["Who"] == "backup.exe" and blocker["Why"] == "Nightly backup to the NAS"
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["EventName"] == "stop-suspend-blocked"
        await anyio.sleep(60)
        assert api.suspends == []
        powercfg.output = EMPTY
        await anyio.sleep(2.5)
        assert api.suspends == [False]
        await anyio.sleep(60)
        assert api.suspends == [False]

    run(harness, body)
