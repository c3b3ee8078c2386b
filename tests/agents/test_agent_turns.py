"""Each real agent CLI, after ``lidguard hook-install --provider X``, runs one headless turn with a shell
tool call against the fake model; lidguard must have watched the agent's own process, recorded the tool
activity, ended the session at the turn's end and - the lid being closed with no display - requested
exactly one suspend on the fake platform."""

from __future__ import annotations

import time
from typing import Any

import pytest
from agents_harness import PROVIDER, AgentRun

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

def assert_protected_turn(run: AgentRun, result: Any) -> dict[str, Any]:
    """The common end-to-end assertions; returns the session's start entry."""
    context = run.describe(result)
    assert result.returncode == 0, context
    assert "All done: hello" in result.stdout, context
    # The agent really ran the tool: the fake model got the tool's result back.
    assert any("hello" in request.text() for request in run.model.tool_requests()[1:]), context

    provider = PROVIDER[run.name]
    start = run.started_session(provider)
    session = start["SessionIdentifier"]
    assert session, context
    assert start["WorkingDirectory"] == str(run.work), context

    mine = [e for e in run.session_log() if e.get("SessionIdentifier") == session and e["Provider"] == provider]
    activity = [e for e in mine if e["Command"] == "mark-session-active" and e["Succeeded"]]
    assert activity, context
    stops = [e for e in mine if e["EventName"] == "session-stopped"]
    assert len(stops) == 1, context
    if run.name == "opencode" and stops[0]["IsProviderSessionEnd"] is not True:
        # `opencode run` exits ~30 ms after session.idle, while the plugin's session.idle hook is still
        # on its way: the watched agent's exit may end the session first. The turn's end was still sent.
        assert any(e["EventName"] == "watched-process-exited" for e in mine), context
        hook_log = (run.lidguard.data_dir / "opencode-hook-events.log").read_text().splitlines()
        assert any("event=session.idle" in line and "command=stop" in line for line in hook_log), context
    else:
        assert stops[0]["IsProviderSessionEnd"] is True, context

    # Closed lid, no display, delay 0: exactly one suspend, and nothing left running or pending.
    assert run.wait_until(lambda: run.suspend_requests()), context
    status = run.status()
    assert status["activeSessionCount"] == 0 and status["sessions"] == [], status
    assert status.get("pendingSuspend") is None, status
    time.sleep(1.0)  # a second request would follow the first at once (the agent has already exited)
    assert len(run.suspend_requests()) == 1, f"{run.lidguard.actions()}\n{context}"
    return start


@pytest.mark.parametrize("name", ["claude", "codex", "copilot", "opencode", "gemini", "qwen"])
def test_one_real_turn_is_protected_and_suspends_once_with_the_lid_closed(agent: Any, name: str) -> None:
    run = agent(name)
    installed = run.hook_install()
    assert installed.strip(), "hook-install says what it did"
    run.prepare_machine(lid="closed")
    result = run.run_headless()
    assert_protected_turn(run, result)
