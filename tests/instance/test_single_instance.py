"""One runtime per user whatever the caller's environment (issue 6): real CLI and runtime processes.

Hooks run from cron, IDE terminals, ``sudo -u`` and ssh sessions without PAM, where
``XDG_RUNTIME_DIR`` is missing. The lock and the socket are derived from the data folder alone, so
such a caller meets the runtime a normal terminal started, never starts a second one and never runs
crash recovery against it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest


def _run(lidguard, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "lidguard", *args], env=env, text=True,
                            capture_output=True, timeout=30)
    if check and result.returncode != 0:
        raise AssertionError(f"lidguard {' '.join(args)} failed: {result.stderr}")
    return result


def _status(lidguard, env: dict[str, str]) -> dict[str, Any]:
    return json.loads(_run(lidguard, env, "status", "--json").stdout)


@pytest.fixture
def without_runtime_dir(lidguard) -> dict[str, str]:
    env = dict(lidguard.env)
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@pytest.mark.parametrize("first", ["with", "without"])
def test_with_and_without_xdg_runtime_dir_meet_one_runtime(lidguard, without_runtime_dir, first):
    environments = {"with": lidguard.env, "without": without_runtime_dir}
    other = "without" if first == "with" else "with"
    _run(lidguard, environments[first], "start", "--provider", "claude", "--session", "first")
    assert len(lidguard.runtime_pids()) == 1

    seen = _status(lidguard, environments[other])
    assert seen["runtimeRunning"] is True
    assert [s["sessionIdentifier"] for s in seen["sessions"]] == ["first"]

    _run(lidguard, environments[other], "start", "--provider", "codex", "--session", "second")
    assert len(lidguard.runtime_pids()) == 1, "a second runtime was started"
    for env in environments.values():
        ids = sorted(s["sessionIdentifier"] for s in _status(lidguard, env)["sessions"])
        assert ids == ["first", "second"]


def test_a_caller_without_xdg_runtime_dir_never_restores_the_live_runtimes_backup(lidguard, without_runtime_dir):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    assert backup.exists()
    before = backup.read_bytes()

    _run(lidguard, without_runtime_dir, "status")
    _run(lidguard, without_runtime_dir, "current-lid-state")

    assert backup.read_bytes() == before, "crash recovery ran against the live runtime"
    assert "lid-policy-restored" not in [action["action"] for action in lidguard.actions()]
    assert lidguard.json("status")["activeSessionCount"] == 1


def test_a_second_run_server_without_xdg_runtime_dir_exits_at_once(lidguard, without_runtime_dir):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    second = _run(lidguard, without_runtime_dir, "run-server", check=False)
    assert second.returncode == 0
    assert len(lidguard.runtime_pids()) == 1
    assert os.path.exists(lidguard.socket)
