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


def test_a_long_data_folder_still_meets_one_runtime_through_the_short_socket_folder(lidguard, without_runtime_dir):
    long_data = str(lidguard.home / ("d" * 50) / ("e" * 50))
    with_variable = dict(lidguard.env, XDG_DATA_HOME=long_data)
    without_variable = dict(without_runtime_dir, XDG_DATA_HOME=long_data)
    probe = "from lidguard.platform.paths import resolve_paths; print(resolve_paths().socket_file)"
    socket_file = subprocess.run([sys.executable, "-c", probe], env=without_variable, capture_output=True,
                                 text=True, check=True).stdout.strip()
    assert socket_file.startswith(os.path.realpath(lidguard.home) + "/.lidguard-run/")  # never a shared /tmp name
    assert len(socket_file.encode()) <= 100
    try:
        _run(lidguard, with_variable, "start", "--provider", "claude", "--session", "long")
        assert os.path.exists(socket_file)
        assert oct(os.lstat(os.path.dirname(socket_file)).st_mode & 0o777) == "0o700"
        assert [s["sessionIdentifier"] for s in _status(lidguard, without_variable)["sessions"]] == ["long"]
        _run(lidguard, without_variable, "start", "--provider", "codex", "--session", "other")
        assert len(lidguard.runtime_pids()) == 1
    finally:
        lidguard.kill_runtimes()
        assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
        for leftover in (socket_file, os.path.dirname(socket_file)):
            try:
                os.unlink(leftover) if leftover == socket_file else os.rmdir(leftover)
            except FileNotFoundError:
                pass
