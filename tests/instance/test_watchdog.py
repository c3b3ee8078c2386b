"""Issue 19 item 2: a runtime frozen (SIGSTOP) while it owns the lid policy is ended and the lid policy
restored by its watchdog, exactly once; the next hook brings a runtime back with the sessions. Real
processes on the fake platform; the heartbeat (30 s) and the stale age (120 s) are shortened through the
test-mode switches so this runs in seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from lidguard.runtime.watchdog import HEARTBEAT_FILE_NAME

HEARTBEAT = "0.2"
STALE = 1.5


@pytest.fixture
def watched(lidguard: Any) -> Any:
    lidguard.env["LIDGUARD_HEARTBEAT_SECONDS"] = HEARTBEAT
    lidguard.env["LIDGUARD_WATCHDOG_STALE_SECONDS"] = str(STALE)
    return lidguard


def _log(lidguard: Any) -> list[dict[str, Any]]:
    path = lidguard.data_dir / "session-execution.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _events(lidguard: Any, name: str) -> list[dict[str, Any]]:
    return [entry for entry in _log(lidguard) if entry["EventName"] == name]




WATCHDOG = "lidguard.runtime.watchdog"  # pgrep -f pattern of the watchdog process


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


def test_a_frozen_runtime_is_ended_and_the_lid_policy_restored_exactly_once(watched: Any) -> None:
    lidguard = watched
    agent = _sleeper()
    frozen: list[int] = []
    try:
        lidguard.run("start", "--provider", "claude", "--session", "s1", "--parent-pid", str(agent.pid), check=True)
        backup = lidguard.data_dir / "pending-lid-action-backup.json"
        heartbeat = lidguard.data_dir / HEARTBEAT_FILE_NAME
        assert backup.exists()
        assert lidguard.wait_until(lambda: bool(_events(lidguard, "watchdog-started")) and heartbeat.exists(), 30)
        [runtime] = lidguard.runtime_pids()
        [watchdog] = lidguard.pids_of_this_home(WATCHDOG)
        first = heartbeat.stat().st_mtime
        assert lidguard.wait_until(lambda: heartbeat.stat().st_mtime != first, 10), "the heartbeat moves"

        os.kill(runtime, signal.SIGSTOP)
        frozen.append(runtime)
        stopped_at = time.monotonic()
        assert lidguard.wait_until(lambda: bool(_events(lidguard, "watchdog-recovered")), 90)
        took = time.monotonic() - stopped_at
        print(f"frozen runtime ended and lid policy restored {took:.1f} s after SIGSTOP (stale age {STALE} s)")
        assert took < 180
        assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), 20)
        assert lidguard.wait_until(lambda: watchdog not in lidguard.pids_of_this_home(WATCHDOG), 20)
        assert not backup.exists() and not heartbeat.exists()
        restored = [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
        assert [a["pid"] for a in restored] == [watchdog], "restored once, by the watchdog"
        assert len(_events(lidguard, "watchdog-runtime-stale")) == 1
        [ended] = _events(lidguard, "watchdog-runtime-ended")
        assert "SIGKILL" in ended["Message"]  # a stopped process never runs its SIGTERM handler
        journal = lidguard.data_dir / "session-journal.jsonl"
        assert journal.exists() and '"s1"' in journal.read_text(), "the journal still holds the session"

        # The next hook event brings a runtime back with the session; that runtime has its own watchdog.
        result = lidguard.run("claude-hook", timeout=60, input_text=json.dumps(
            {"hook_event_name": "PostToolUse", "session_id": "other", "cwd": str(lidguard.home),
             "tool_name": "Bash", "tool_use_id": "toolu_1"}))
        assert result.returncode == 0 and result.stdout == ""
        status = lidguard.json("status")
        assert [s["sessionIdentifier"] for s in status["sessions"]] == ["s1"]
        assert lidguard.wait_until(lambda: len(_events(lidguard, "watchdog-started")) == 2, 30)
        assert len(_events(lidguard, "watchdog-runtime-stale")) == 1, "exactly once"
    finally:
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        agent.kill()
        agent.wait()


def test_a_clean_exit_takes_the_watchdog_and_the_heartbeat_with_it(watched: Any) -> None:
    lidguard = watched
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    heartbeat = lidguard.data_dir / HEARTBEAT_FILE_NAME
    assert lidguard.wait_until(lambda: bool(lidguard.pids_of_this_home(WATCHDOG)) and heartbeat.exists(), 30)
    [watchdog] = lidguard.pids_of_this_home(WATCHDOG)
    lidguard.run("stop-runtime", "--force", check=True)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), 30)
    assert lidguard.wait_until(lambda: watchdog not in lidguard.pids_of_this_home(WATCHDOG), 20)
    assert not heartbeat.exists()
    assert not _events(lidguard, "watchdog-runtime-stale")
    assert [a["action"] for a in lidguard.actions()].count("lid-policy-restored") == 1  # by the runtime itself


def test_an_idle_runtime_launches_no_watchdog_and_a_switch_turns_it_off(watched: Any) -> None:
    lidguard = watched
    lidguard.env["LIDGUARD_WATCHDOG"] = "off"
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    heartbeat = lidguard.data_dir / HEARTBEAT_FILE_NAME
    assert lidguard.wait_until(heartbeat.exists, 30), "the heartbeat beats without a watchdog too"
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)
    assert lidguard.wait_until(lambda: not heartbeat.exists(), 30), "owning nothing: no heartbeat"
    assert not lidguard.pids_of_this_home(WATCHDOG)
    assert not _events(lidguard, "watchdog-started")


def test_a_killed_runtime_has_its_lid_policy_restored_by_the_watchdog_with_no_other_command(watched: Any) -> None:
    """Issue 32 item 4: kill -9 (or OOM) and nothing calls lidguard again: the watchdog restores at once."""
    lidguard = watched
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    assert backup.exists()
    assert lidguard.wait_until(lambda: bool(lidguard.pids_of_this_home(WATCHDOG)), 30)
    [runtime] = lidguard.runtime_pids()
    [watchdog] = lidguard.pids_of_this_home(WATCHDOG)
    os.kill(runtime, signal.SIGKILL)
    assert lidguard.wait_until(lambda: bool(_events(lidguard, "watchdog-recovered")), 60)
    assert lidguard.wait_until(lambda: watchdog not in lidguard.pids_of_this_home(WATCHDOG), 20)
    restored = [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
    assert [a["pid"] for a in restored] == [watchdog], "restored once, by the watchdog"
    assert not backup.exists() and len(_events(lidguard, "watchdog-runtime-vanished")) == 1
    lidguard.run("status", check=True)  # a later command finds nothing more to restore
    assert [a["action"] for a in lidguard.actions()].count("lid-policy-restored") == 1
