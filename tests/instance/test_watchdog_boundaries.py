"""The watchdog process's decisions (runtime/watchdog.py) in-process: it never signals a pid the runtime
lock does not name, never takes a folder, FIFO or symlink for a heartbeat, exits when the runtime's pipe
closes; and the test-mode switches for its periods refuse garbage."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lidguard import switches
from lidguard.runtime.watchdog import HEARTBEAT_FILE_NAME, WatchdogConfig, heartbeat_age, watch


@pytest.fixture
def sleeper():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield process
    process.kill()
    process.wait()


def _config(data_dir: Path, pid: int, pipe_fd: int) -> WatchdogConfig:
    return WatchdogConfig(data_dir=data_dir, runtime_pid=pid, pipe_fd=pipe_fd, stale_seconds=0.2, poll_seconds=0.05)


def _old_heartbeat(data_dir: Path) -> Path:
    path = data_dir / HEARTBEAT_FILE_NAME
    path.write_text("")
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def test_a_stale_heartbeat_of_a_pid_the_lock_does_not_name_is_never_signalled(tmp_path, sleeper):
    _old_heartbeat(tmp_path)
    (tmp_path / "runtime.lock").write_text(f"{sleeper.pid + 1} ready")  # another pid, and nobody holds it
    read_end, write_end = os.pipe()
    try:
        assert watch(_config(tmp_path, sleeper.pid, read_end)) == "runtime replaced"
    finally:
        os.close(read_end)
        os.close(write_end)
    assert sleeper.poll() is None, "the process the lock does not name is left alone"
    assert not (tmp_path / "session-execution.log").exists(), "nothing acted, nothing logged"


def test_the_watchdog_exits_when_the_runtime_pipe_closes(tmp_path, sleeper):
    read_end, write_end = os.pipe()
    os.close(write_end)
    started = time.monotonic()
    try:
        assert watch(_config(tmp_path, sleeper.pid, read_end)) == "runtime exited"
    finally:
        os.close(read_end)
    assert time.monotonic() - started < 5
    assert sleeper.poll() is None


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink", "missing"])
def test_only_a_regular_file_is_a_heartbeat(tmp_path, kind):
    path = tmp_path / HEARTBEAT_FILE_NAME
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        (tmp_path / "elsewhere").mkdir()
        path.symlink_to(_old_heartbeat(tmp_path / "elsewhere"))
    assert heartbeat_age(path) is None
    path_ok = tmp_path / "regular"
    path_ok.write_text("")
    reading = heartbeat_age(path_ok, now=path_ok.stat().st_mtime + 5)
    assert reading is not None and reading[1] == pytest.approx(5)


def test_the_period_switches_count_only_in_test_mode_and_refuse_garbage():
    test_mode = {"LIDGUARD_TEST_MODE": "1"}
    assert switches.heartbeat_seconds({}) == 30.0
    assert switches.watchdog_stale_seconds({}) == 120.0
    assert switches.heartbeat_seconds({"LIDGUARD_HEARTBEAT_SECONDS": "0.2"}) == 30.0, "ignored outside test mode"
    assert switches.heartbeat_seconds({**test_mode, "LIDGUARD_HEARTBEAT_SECONDS": " 0.2 "}) == 0.2
    assert switches.watchdog_stale_seconds({**test_mode, "LIDGUARD_WATCHDOG_STALE_SECONDS": "1.5"}) == 1.5
    for garbage in ("nan", "inf", "-1", "0", "1e400", "121", "abc", "\udcff"):
        with pytest.raises(switches.SwitchError):
            switches.watchdog_stale_seconds({**test_mode, "LIDGUARD_WATCHDOG_STALE_SECONDS": garbage})
    assert switches.watchdog_enabled({}) and not switches.watchdog_enabled({"LIDGUARD_WATCHDOG": "off"})
    with pytest.raises(switches.SwitchError):
        switches.watchdog_enabled({"LIDGUARD_WATCHDOG": "maybe"})


def test_a_runtime_that_owns_nothing_is_never_acted_on_however_long_it_is_silent(tmp_path, sleeper):
    """No heartbeat file (the runtime removes it once it owns no protection): the watchdog waits for the
    runtime's exit and does nothing else, well past the stale age."""
    import threading

    (tmp_path / "runtime.lock").write_text(f"{sleeper.pid} ready")
    read_end, write_end = os.pipe()
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(watch(_config(tmp_path, sleeper.pid, read_end))))
    thread.start()
    try:
        thread.join(1.5)  # more than 7 stale ages of 0.2 s
        assert thread.is_alive() and not outcome
    finally:
        os.close(write_end)
        thread.join(10)
        os.close(read_end)
    assert outcome == ["runtime exited"]
    assert sleeper.poll() is None and not (tmp_path / "session-execution.log").exists()
