"""Pre-existing Codex tasks (seed 004, REFERENCE row 57) with the real, pinned Codex CLI: the rollout it
writes is what the runtime reads. A task that started before lidguard was running, with no hooks
installed, becomes one protected ``rollout`` session once the runtime is up, and the task's own
``task_complete`` ends it (closed lid: one suspend). With hooks installed, the hook session is the only
one (deduplicated by session id)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fake_model import Script

pytestmark = [pytest.mark.timeout(300)]


def rollout_files(run: Any) -> list[Path]:
    return sorted((run.home / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def rollout_sessions(run: Any) -> list[dict[str, Any]]:
    return [session for session in run.status()["sessions"] if session.get("source") == "rollout"]


def test_a_task_started_before_lidguard_without_hooks_is_protected_until_its_task_complete(agent: Any) -> None:
    run = agent("codex")
    release = run.home / "release"
    # The tool waits for the test; Codex waits for the tool (no early yield back to the model).
    run.model.script = Script(command=f"while [ ! -e {release} ]; do sleep 0.2; done; echo hello",
                              extra_arguments={"yield_time_ms": 300_000})
    run.lidguard.set_machine(lid="closed", displays=[])
    run.lidguard_run("settings", "--post-stop-suspend-delay-seconds", "0")
    codex = subprocess.Popen(run.headless_command(), env=run.env, cwd=run.work, text=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        # The task is running (its tool waits) before lidguard runs at all.
        assert run.wait_until(lambda: run.model.tool_requests() or any(
            b'"type":"function_call"' in path.read_bytes() for path in rollout_files(run)), timeout=90), (
            run.describe())
        assert not run.lidguard.socket.exists()
        [path] = rollout_files(run)
        assert b'"type":"task_started"' in path.read_bytes() and b'"type":"task_complete"' not in path.read_bytes()
        run.start_runtime()
        assert run.wait_until(lambda: rollout_sessions(run), timeout=60), run.describe()
        [session] = rollout_sessions(run)
        assert path.name.endswith(f"-{session['sessionIdentifier']}.jsonl")
        assert session["softLockState"] == "None"
        plain = run.lidguard_run("status").stdout
        assert f"Codex:{session['sessionIdentifier']}" in plain and " source=rollout" in plain, plain
        assert "protection-applied" in [action["action"] for action in run.lidguard.actions()]
        assert not run.suspend_requests()

        release.touch()  # the tool ends, the turn completes: Codex writes task_complete
        stdout, stderr = codex.communicate(timeout=120)
        assert codex.returncode == 0, stderr[-3000:]
        assert b'"type":"task_complete"' in path.read_bytes()
        assert run.wait_until(lambda: not run.status()["sessions"], timeout=60), run.describe()
        stopped = [entry for entry in run.events("session-stopped") if entry["Provider"] == "Codex"]
        assert [entry["Command"] for entry in stopped] == ["codex-rollout-task-complete"], run.describe()
        assert run.wait_until(lambda: run.suspend_requests(), timeout=30), run.describe()
        time.sleep(1.0)
        assert len(run.suspend_requests()) == 1
        assert len(run.events("session-started")) == 1  # the finished task never comes back
    finally:
        if codex.poll() is None:
            codex.kill()
            codex.communicate()


def test_with_hooks_installed_the_hook_session_is_the_only_one(agent: Any) -> None:
    run = agent("codex")
    release = run.home / "release"
    # The tool waits for the test; Codex waits for the tool (no early yield back to the model).
    run.model.script = Script(command=f"while [ ! -e {release} ]; do sleep 0.2; done; echo hello",
                              extra_arguments={"yield_time_ms": 300_000})
    run.hook_install()
    run.prepare_machine(lid="closed")
    codex = subprocess.Popen(run.headless_command(), env=run.env, cwd=run.work, text=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert run.wait_until(lambda: run.status()["sessions"], timeout=90), run.describe()
        time.sleep(8.0)  # past the detector's grace, with the task still running
        sessions = run.status()["sessions"]
        assert [session["source"] for session in sessions] == ["hook"], sessions
        release.touch()
        codex.communicate(timeout=120)
        assert codex.returncode == 0
        assert run.wait_until(lambda: run.suspend_requests(), timeout=60), run.describe()
        time.sleep(8.0)  # past the grace again, and a rescan of the finished rollout
        assert run.status()["sessions"] == []
        assert len(run.events("session-started")) == 1, run.describe()
        assert len(run.suspend_requests()) == 1
    finally:
        if codex.poll() is None:
            codex.kill()
            codex.communicate()
