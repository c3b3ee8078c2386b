"""The permission path: a real PermissionRequest (Claude Code interactive in tmux, Codex TUI in tmux, Qwen Code
TUI in tmux) or permissionRequest (Copilot ``-p``) answered by lidguard's closed-lid decision
(``lidguard settings --closed-lid-permission-request-decision allow|deny``) with the lid closed and no
display: allow runs the command without asking anyone, deny refuses it with lidguard's message. Gemini CLI has
no hook that can approve a tool: its BeforeTool is denied (TUI, default approval mode), and a ``--yolo`` run
keeps working with the lid closed (test_agent_turns)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from agents_harness import GEMINI_MODEL, PROVIDER, AgentRun
from fake_model import Script

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

DENIED = "LidGuard denied this permission request"


def marker_script(run: AgentRun) -> Script:
    """A command that needs the user's permission and leaves a file behind when it runs."""
    return Script(command=f"touch {run.work / 'permitted.txt'}", description="LidGuard permission test",
                  final_text="All done: permission")


def decision_run(agent: Any, name: str, decision: str, *, escalate: bool = False) -> AgentRun:
    """The CLI with lidguard's hooks, the marker script, the lid closed and ``decision`` set."""
    run: AgentRun = agent(name)
    run.model.script = replace(marker_script(run), escalate=escalate)
    run.hook_install()
    run.prepare_machine(lid="closed", permission=decision)
    return run


def assert_decided(run: AgentRun, decision: str, context: str) -> None:
    run.started_session(PROVIDER[run.name])
    marker = run.work / "permitted.txt"
    later = [request.text() for request in run.model.model_requests()[1:]]
    if decision == "allow":
        assert marker.exists(), f"the allowed command did not run\n{context}"
        assert not any(DENIED in text for text in later), context
    else:
        assert not marker.exists(), f"the denied command ran\n{context}"
        if run.name == "claude":  # Claude's deny carries interrupt: the turn ends, no further model request
            assert not any("permitted.txt" in text and "tool_result" in text for text in later), context
        else:  # the model is told why and the turn goes on
            assert any(DENIED in text for text in later), f"the model never saw lidguard's denial\n{context}"


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_copilot_permission_request_gets_the_closed_lid_decision(agent: Any, decision: str) -> None:
    run = decision_run(agent, "copilot", decision)
    # No --allow-all-tools: the write asks permissionRequest, and only the hook can answer in -p mode.
    result = run.run_headless([str(run.cli), "-p", "create the marker file"])
    context = run.describe(result)
    assert result.returncode == 0, context
    assert_decided(run, decision, context)
    assert run.wait_until(lambda: run.suspend_requests()), context
    assert len(run.suspend_requests()) == 1


def finish_interactive(run: AgentRun, done_text: str, exit_keys: tuple[str, ...]) -> str:
    """Waits for the turn's end on screen, then leaves the TUI; returns the last screen."""
    finished = run.wait_screen(done_text, timeout=90)
    screen = run.screen()
    assert finished, f"the turn did not finish on screen:\n{screen}\n{run.describe()}"
    for key in exit_keys:  # one at a time: a burst of keys reads as a paste (Enter becomes a newline)
        time.sleep(0.5)
        run.send_keys(key)
    return screen


def finish_and_suspend_once(run: AgentRun, done_text: str, exit_keys: tuple[str, ...], decision: str) -> str:
    """The decision taken; leaving the TUI ends the session if the turn's stop did not; one suspend."""
    screen = finish_interactive(run, done_text, exit_keys)
    context = f"{screen}\n{run.describe()}"
    assert_decided(run, decision, context)
    assert run.wait_until(lambda: run.suspend_requests(), timeout=60), context
    assert run.wait_until(run.interactive_ended, timeout=30), (
        f"the TUI did not exit on {' '.join(exit_keys)}:\n{run.screen()}")
    assert len(run.suspend_requests()) == 1, run.lidguard.actions()
    return screen


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_claude_interactive_permission_request_gets_the_closed_lid_decision(agent: Any, decision: str) -> None:
    run = decision_run(agent, "claude", decision)
    run.start_interactive([str(run.cli), "create the marker file"])
    # A deny carries interrupt: Claude stops the turn ("Interrupted"), lidguard's transcript monitor sees it.
    done = "All done: permission" if decision == "allow" else "Interrupted"
    screen = finish_and_suspend_once(run, done, ("/exit", "Enter"), decision)
    if decision == "allow":
        assert "Allowed by PermissionRequest hook" in screen, screen


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_codex_tui_permission_request_gets_the_closed_lid_decision(agent: Any, decision: str) -> None:
    # The model asks to run the command outside the sandbox: with approval on-request that asks the user.
    run = decision_run(agent, "codex", decision, escalate=True)
    # --no-daemon: the TUI itself runs the hooks (the shared app-server daemon would outlive it).
    run.start_interactive([str(run.cli), "--no-daemon", "-a", "on-request", "-s", "workspace-write",
                           "create the marker file"])
    finish_and_suspend_once(run, "All done: permission", ("/exit", "Enter"), decision)


@pytest.mark.parametrize("decision", ["allow", "deny"])
def test_qwen_tui_permission_request_gets_the_closed_lid_decision(agent: Any, decision: str) -> None:
    run = decision_run(agent, "qwen", decision)
    # --approval-mode default: the classic dialog (the TUI's default "auto" asks a classifier model first).
    run.start_interactive([str(run.cli), "--approval-mode", "default", "-i", "create the marker file"])
    finish_and_suspend_once(run, "All done: permission", ("/quit", "Enter"), decision)


def test_gemini_tui_before_tool_is_denied_with_the_lid_closed(agent: Any) -> None:
    run = decision_run(agent, "gemini", "deny")
    run.start_interactive([str(run.cli), "-m", GEMINI_MODEL, "-i", "create the marker file"])
    # Ctrl+C twice leaves the TUI (a typed /quit opens the command completion first).
    screen = finish_and_suspend_once(run, "All done: permission", ("C-c", "C-c"), "deny")
    assert "Allow execution" not in screen, "the denied tool never reached Gemini's confirmation dialog"
