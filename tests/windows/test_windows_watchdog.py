"""The watchdog on Windows (issue 19 item 2): no inherited pipe there, so it holds a handle on the
runtime's process (guarded against a reused pid by the creation time), waits on it, and ends a stale
runtime with TerminateProcess, then runs the crash recovery. The Win32 calls go to the fake binding;
the runtime is a real process holding the real runtime lock, which the fake's TerminateProcess ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_winapi import FakeWindowsApi

from lidguard.platform import runtime_link
from lidguard.platform.locking import held_by_another_process
from lidguard.platform.windows.runtime_link import TERMINATED_EXIT_CODE, ProcessRuntimeLink
from lidguard.runtime.watchdog import HEARTBEAT_FILE_NAME, WatchdogConfig, watch

OWN = os.getpid()
RUNTIME_CREATED, WATCHDOG_CREATED = 1_000, 2_000  # FILETIME units: the runtime started first

HOLD_LOCK = """
import sys, time
from pathlib import Path
from lidguard.platform.locking import InstanceLock
lock = InstanceLock(Path(sys.argv[1]), record_pid=sys.argv[2] == "record")
assert lock.try_acquire()
lock.mark_ready()
print("locked", flush=True)
time.sleep(600)
"""


def _api(runtime_pid: int, *, created: int = RUNTIME_CREATED) -> FakeWindowsApi:
    api = FakeWindowsApi()
    api.alive = {runtime_pid}
    api.times = {runtime_pid: (created, 0, 0), OWN: (WATCHDOG_CREATED, 0, 0)}
    return api


@pytest.fixture(params=["record", "unreadable"])
def runtime(tmp_path, request):
    """A real process holding ``<tmp>/runtime.lock`` with "<pid> ready", as a runtime does; or with a
    record others cannot read, as on Windows (the holder's byte-range lock is mandatory there)."""
    process = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path / "runtime.lock"), request.param],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    yield process
    process.kill()
    process.wait()


def _stale_heartbeat(data_dir: Path) -> None:
    path = data_dir / HEARTBEAT_FILE_NAME
    path.write_text("")
    old = time.time() - 3600
    os.utime(path, (old, old))


def _config(data_dir: Path, pid: int) -> WatchdogConfig:
    return WatchdogConfig(data_dir=data_dir, runtime_pid=pid, pipe_fd=None, stale_seconds=0.2, poll_seconds=0.05)


def _events(data_dir: Path) -> list[str]:
    log = data_dir / "session-execution.log"
    if not log.exists():
        return []
    return [json.loads(line)["EventName"] for line in log.read_text().splitlines() if line.strip()]


def test_a_stale_runtime_is_terminated_once_through_its_handle_and_recovered(tmp_path, runtime):
    api = _api(runtime.pid)
    api.on_terminate = lambda pid: (runtime.kill(), runtime.wait())  # TerminateProcess ends it for real
    _stale_heartbeat(tmp_path)
    link = ProcessRuntimeLink(api, runtime.pid, OWN)
    assert watch(_config(tmp_path, runtime.pid), link) == "acted"
    handle = next(handle for handle, pid in api.wait_handles.items() if pid == runtime.pid)
    assert api.terminated == [runtime.pid]
    assert [call for call in api.calls if call[0] == "TerminateProcess"] == [
        ("TerminateProcess", handle, TERMINATED_EXIT_CODE)]
    assert ("CloseHandle", handle) in api.calls  # the link closes its handle
    assert _events(tmp_path) == ["watchdog-runtime-stale", "watchdog-runtime-ended", "watchdog-recovered"]
    ended = [json.loads(line) for line in (tmp_path / "session-execution.log").read_text().splitlines()][1]
    assert "ended by TerminateProcess" in ended["Message"] and ended["Succeeded"] is True
    assert not held_by_another_process(tmp_path / "runtime.lock")
    assert not (tmp_path / HEARTBEAT_FILE_NAME).exists()


def test_the_watchdog_exits_when_the_runtime_process_exits(tmp_path, runtime):
    api = _api(runtime.pid)
    link = ProcessRuntimeLink(api, runtime.pid, OWN)
    threading.Timer(0.3, lambda: api.alive.discard(runtime.pid)).start()  # the runtime exits by itself
    started = time.monotonic()
    assert watch(_config(tmp_path, runtime.pid), link) == "runtime exited"
    assert time.monotonic() - started < 10
    assert api.terminated == [] and _events(tmp_path) == []


def test_a_reused_pid_is_never_waited_on_or_terminated(tmp_path, runtime):
    api = _api(runtime.pid, created=WATCHDOG_CREATED + 1)  # created after the watchdog: not our runtime
    _stale_heartbeat(tmp_path)
    link = ProcessRuntimeLink(api, runtime.pid, OWN)
    assert "reused pid" in link.refused
    assert watch(_config(tmp_path, runtime.pid), link) == "runtime exited"
    assert "TerminateProcess" not in api.names() and "WaitForSingleObject" not in api.names()
    assert runtime.poll() is None and _events(tmp_path) == []


def test_a_runtime_already_gone_when_the_watchdog_starts_is_left_to_the_next_cli_call(tmp_path):
    api = _api(4242)
    api.alive.clear()
    link = ProcessRuntimeLink(api, 4242, OWN)
    assert link.refused and link.gone(0) and not link.request_end()
    assert watch(_config(tmp_path, 4242), link) == "runtime exited"
    assert "TerminateProcess" not in api.names()


def test_the_windows_launch_passes_no_pipe_and_detaches():
    launched: list[tuple[list[str], dict]] = []
    runtime_link.launch_watchdog(["python", "-m", "lidguard.runtime.watchdog", "--runtime-pid", "7"], windows=True,
                                 popen=lambda argv, **options: launched.append((argv, options)))
    [(argv, options)] = launched
    assert "--pipe-fd" not in argv and "pass_fds" not in options and options["close_fds"] is True
    assert options["creationflags"] == 0x00000008 | 0x00000200  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP


def test_the_posix_link_needs_its_pipe():
    with pytest.raises(ValueError):
        runtime_link.open_runtime_link(os.getpid(), None)
    result = subprocess.run([sys.executable, "-m", "lidguard.runtime.watchdog", "--data-dir", "/nonexistent",
                             "--runtime-pid", "1", "--stale-seconds", "1", "--poll-seconds", "1"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--pipe-fd" in result.stderr


def test_on_posix_a_lock_whose_record_cannot_be_read_is_never_acted_on(tmp_path):
    """Without a handle on the process the pid in the lock is the only guard against a reused pid."""
    process = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path / "runtime.lock"), "unreadable"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "locked"
        _stale_heartbeat(tmp_path)
        read_end, write_end = os.pipe()
        try:
            link = runtime_link.PipeRuntimeLink(process.pid, read_end)
            assert watch(_config(tmp_path, process.pid), link) == "runtime replaced"
        finally:
            os.close(read_end)
            os.close(write_end)
        assert process.poll() is None and _events(tmp_path) == []
    finally:
        process.kill()
        process.wait()
