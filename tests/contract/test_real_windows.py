"""Windows contract: the cffi binding against the real Win32 API (powrprof, kernel32, user32, ntdll).
Written from the documented behaviour of PowerCreateRequest/PowerSetRequest/PowerClearRequest,
PowerReadACValueIndex, GetSystemMetrics, QueryDisplayConfig and NtQueryInformationProcess; run on
windows-2022 in the workflows (an administrator there, which `powercfg /requests` needs), skipped
everywhere else. Nothing here writes a power setting: LIDACTION is read, never written."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.real_os("windows")


def api():
    module = importlib.import_module("lidguard._native._windows")
    from lidguard.platform.windows._binding import CffiWindowsApi

    return CffiWindowsApi(module.ffi)


def powercfg_requests() -> str:
    result = subprocess.run(["powercfg", "/requests"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_power_request_shows_in_powercfg_and_goes() -> None:
    from lidguard.platform.windows.winapi import POWER_REQUEST_SYSTEM_REQUIRED

    win = api()
    reason = f"lidguard contract test {uuid.uuid4()}"
    handle = win.power_create_request(reason)
    try:
        win.power_set_request(handle, POWER_REQUEST_SYSTEM_REQUIRED)
        assert reason in powercfg_requests()
        win.power_clear_request(handle, POWER_REQUEST_SYSTEM_REQUIRED)
    finally:
        win.close_handle(handle)
    assert reason not in powercfg_requests()


def test_lidaction_of_the_active_scheme_is_read() -> None:
    from lidguard.platform.windows.power import WindowsLidPolicy

    snapshot = WindowsLidPolicy(api()).read_lid_actions()
    uuid.UUID(snapshot.power_scheme_identifier)
    # 0 Do nothing, 1 Sleep, 2 Hibernate, 3 Shut down (powercfg /q SUB_BUTTONS LIDACTION).
    assert snapshot.alternating_current_action in (0, 1, 2, 3)
    assert snapshot.direct_current_action in (0, 1, 2, 3)


def test_monitors_and_display_paths() -> None:
    from lidguard.platform.windows.display import WindowsDisplayReader
    from lidguard.platform.windows.winapi import SM_CMONITORS

    win = api()
    assert win.get_system_metrics(SM_CMONITORS) >= 0
    displays = WindowsDisplayReader(win).list_connected_displays()
    assert len(displays) <= max(win.get_system_metrics(SM_CMONITORS), 0) or displays == []


def test_ancestry_of_a_child_names_this_process() -> None:
    from lidguard.platform.windows.process import WindowsProcessWatcher

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        chain = WindowsProcessWatcher(api()).read_ancestry(child.pid)
        assert [info.pid for info in chain[:2]] == [child.pid, os.getpid()]
    finally:
        child.kill()
        child.wait(timeout=20)


def test_the_watchdog_handle_wait_sees_a_real_child_end() -> None:
    win = api()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
    handle = win.open_process_for_wait(child.pid)
    try:
        started = time.monotonic()
        while win.wait_for_single_object(handle, 500) != 0:  # WAIT_OBJECT_0
            assert time.monotonic() - started < 60, "the process handle never signalled"
    finally:
        win.close_handle(handle)
        child.wait(timeout=20)


def test_named_pipe_round_trip_with_a_real_runtime(tmp_path) -> None:
    home = tmp_path / "home"
    env = {**{key: value for key, value in os.environ.items() if not key.startswith("LIDGUARD_")},
           "USERPROFILE": str(home), "LOCALAPPDATA": str(home / "local"), "APPDATA": str(home / "roaming"),
           "LIDGUARD_WATCHDOG": "off"}
    lidguard = [sys.executable, "-m", "lidguard"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*lidguard, *args], capture_output=True, text=True, env=env, timeout=120)

    # Keep-awake only: the lid-close action stays as it is (no power setting is written).
    assert run("settings", "--change-lid-action", "false").returncode == 0
    started = run("start", "--provider", "custom", "--session-id", "contract", "--parent-pid", str(os.getpid()))
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        status = run("status", "--json")
        assert status.returncode == 0 and '"contract"' in status.stdout, status.stdout + status.stderr
    finally:
        run("stop", "--provider", "custom", "--session-id", "contract")
        run("stop-runtime")
