"""With the lid open nothing decides for the user: the real Gemini CLI and Qwen Code TUIs (default approval
mode) show their confirmation dialog, and lidguard's installed Notification hook (Gemini ``ToolPermission``,
Qwen ``permission_prompt``) soft-locks the session while it waits; approving it in the TUI runs the tool
and the turn ends normally."""

from __future__ import annotations

from typing import Any

import pytest
from agents_harness import GEMINI_MODEL, PROVIDER, AgentRun
from test_agent_permissions import finish_interactive, marker_script

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def soft_locked(run: AgentRun) -> bool:
    sessions = run.status()["sessions"]
    return bool(sessions) and sessions[0]["softLockState"] == "SoftLocked" and (
        sessions[0]["softLockReason"] == "permission_prompt")


@pytest.mark.parametrize(("name", "arguments"), [
    ("gemini", ["-m", GEMINI_MODEL, "-i", "create the marker file"]),
    ("qwen", ["--approval-mode", "default", "-i", "create the marker file"]),
])
def test_an_open_lid_confirmation_dialog_soft_locks_the_session_until_approved(
        agent: Any, name: str, arguments: list[str]) -> None:
    run: AgentRun = agent(name)
    run.model.script = marker_script(run)
    run.hook_install()
    run.prepare_machine(lid="open", permission="deny")  # a decision applies only with the lid closed
    run.start_interactive([str(run.cli), *arguments])
    assert run.wait_until(lambda: soft_locked(run), timeout=90), f"{run.screen()}\n{run.describe()}"
    assert not (run.work / "permitted.txt").exists(), "the tool ran before anyone approved it"
    run.send_keys("Enter")  # the dialog's first choice: allow once
    finish_interactive(run, "All done: permission", ("C-c", "C-c") if name == "gemini" else ("/quit", "Enter"))
    context = f"{run.screen()}\n{run.describe()}"
    assert (run.work / "permitted.txt").exists(), context
    run.started_session(PROVIDER[name])
    log = run.session_log()
    locked = max(index for index, entry in enumerate(log) if entry["Command"] == "mark-session-softlocked")
    assert any(entry["Command"] == "mark-session-active" for entry in log[locked:]), context
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0, timeout=60), context
    assert run.suspend_requests() == []
