"""Issue 19 acceptance on the Linux backend (logind mock on a private bus): a runtime frozen with
SIGSTOP while it holds the lid-switch and sleep inhibitors is ended by its watchdog, exactly once, and
no lidguard inhibitor is left; the next hook brings a runtime back with the session."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from test_linux_runtime_end_to_end import described, linux_lidguard, wait_until_protected  # noqa: F401

pytestmark = pytest.mark.dbus


def _events(lg, name: str) -> list[dict]:
    path = lg.data_dir / "session-execution.log"
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["EventName"] == name]


def test_a_frozen_runtime_holding_inhibitors_is_ended_by_its_watchdog(linux_lidguard):  # noqa: F811
    lg = linux_lidguard
    lg.env["LIDGUARD_HEARTBEAT_SECONDS"] = "0.2"
    lg.env["LIDGUARD_WATCHDOG_STALE_SECONDS"] = "1.5"
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    wait_until_protected(lg)
    assert lg.wait_until(lambda: bool(_events(lg, "watchdog-started")), 30)
    [runtime] = lg.runtime_pids()
    os.kill(runtime, signal.SIGSTOP)
    try:
        stopped_at = time.monotonic()
        released = lg.logind.wait_for_inhibitors(lambda entries: described(entries) == [], timeout=90)
        assert described(released) == []
        assert lg.wait_until(lambda: bool(_events(lg, "watchdog-recovered")), 30)
        print(f"inhibitors released {time.monotonic() - stopped_at:.1f} s after SIGSTOP")
        assert len(_events(lg, "watchdog-runtime-stale")) == 1
        assert not (lg.data_dir / "pending-lid-action-backup.json").exists()
        assert lg.wait_until(lambda: not lg.runtime_pids(), 20)
    finally:
        try:
            os.kill(runtime, signal.SIGKILL)
        except ProcessLookupError:
            pass
    result = lg.run("claude-hook", timeout=60, input_text=json.dumps(
        {"hook_event_name": "PostToolUse", "session_id": "other", "cwd": str(lg.home),
         "tool_name": "Bash", "tool_use_id": "toolu_1"}))
    assert result.returncode == 0 and result.stdout == ""
    assert [s["sessionIdentifier"] for s in lg.json("status")["sessions"]] == ["s1"]
    wait_until_protected(lg)  # the new runtime protects the session again, with its own inhibitors
    assert len(_events(lg, "watchdog-runtime-stale")) == 1
