"""The real OpenHands CLI 1.16.0 (PyPI, its own Python 3.12 venv from ci/install-openhands.sh) against the fake model:
``lidguard hook-install --provider openhands`` writes a ``~/.openhands/hooks.json`` the real CLI runs (each test
one of its two shapes: events at the top level, the ``hooks`` wrapper); one headless turn with a terminal tool
call is protected - started, watched on the ``openhands`` process, tool activity, stopped - and suspends once
with the lid closed; a Stop hook printing lidguard's continuation shape (``decision: deny``) makes it send one
more model request. OpenHands' ``tmux -L openhands`` server is ended after each test (``AgentRun.close``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hook_script import CONTINUATION

from lidguard.agents import openhands

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

def _running(pid: int) -> bool:
    """Alive and not a zombie (an ended server waits for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split(None, 1)[0] != "Z"


def test_one_real_turn_is_protected_and_suspends_once_with_the_lid_closed(agent: Any) -> None:
    """The user's file has its events at the top level (snake_case, OpenHands' own ``save`` shape): hook-install
    keeps that shape (a ``hooks`` wrapper would hide the user's events) and both the user's and lidguard's run."""
    run = agent("openhands")
    config = run.home / ".openhands" / "hooks.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"pre_tool_use": [{"matcher": "terminal",
                                                    "hooks": [{"command": run.hook_command("user-pre")}]}]}))
    assert "Installed the LidGuard OpenHands hooks" in run.hook_install()
    written = json.loads(config.read_text())
    assert sorted(written) == ["post_tool_use", "pre_tool_use", "session_end", "stop", "user_prompt_submit"]
    run.prepare_machine(lid="closed")
    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0, context
    assert "All done: hello" in result.stdout, context
    assert [call["label"] for call in run.hook_calls()] == ["user-pre"], context
    assert any("hello" in request.text() for request in run.model.tool_requests()[1:]), context  # the tool ran

    start = run.started_session("OpenHands")  # watched: the openhands process (python3.12), the hooks' grandparent
    session = start["SessionIdentifier"]
    assert len(session) == 36 and start["WorkingDirectory"] == str(run.work), context
    mine = [e for e in run.session_log() if e.get("SessionIdentifier") == session]
    assert any(e["Command"] == "mark-session-active" and e["Succeeded"] for e in mine), context
    stops = [e for e in mine if e["EventName"] == "session-stopped"]
    assert len(stops) == 1 and stops[0]["IsProviderSessionEnd"] is True, context

    assert run.wait_until(lambda: run.suspend_requests()), context
    status = run.status()
    assert status["activeSessionCount"] == 0 and status.get("pendingSuspend") is None, status
    time.sleep(1.0)  # a second request would follow the first at once (the agent has already exited)
    assert len(run.suspend_requests()) == 1, f"{run.lidguard.actions()}\n{context}"
    servers = run.openhands_tmux_servers()
    assert servers, "OpenHands' terminal server outlives the CLI (AgentRun.close() ends it)"
    run.close()
    assert run.wait_until(lambda: not any(_running(pid) for pid in servers), timeout=10), servers


def test_a_stop_hook_deny_makes_the_real_openhands_continue_once(agent: Any) -> None:
    """A new file: the Claude-style ``hooks`` wrapper, with the test's Stop hook beside lidguard's."""
    run = agent("openhands")
    assert "Installed the LidGuard OpenHands hooks" in run.hook_install()
    assert openhands.continuation_output(CONTINUATION) == {"decision": "deny", "reason": CONTINUATION}
    config_file = run.home / ".openhands" / "hooks.json"
    config = json.loads(config_file.read_text())
    config["hooks"]["Stop"].append({"matcher": "*", "hooks": [
        {"type": "command", "command": run.hook_command("stop", "--deny-once"), "timeout": 30}]})
    config_file.write_text(json.dumps(config, indent=2))
    run.prepare_machine(lid="open")
    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0, context

    stops = [call for call in run.hook_calls() if call["label"] == "stop"]
    assert len(stops) == 2, f"one denied Stop and one that ended the turn: {stops}\n{context}"
    assert "stop_hook_active" not in json.loads(stops[1]["stdin"]), stops[1]  # OpenHands sends none
    requests = run.model.model_requests()
    carrying = [index for index, request in enumerate(requests) if f"[Stop hook feedback] {CONTINUATION}"
                in request.text()]
    assert len(carrying) == 1 and carrying[0] >= 2, f"one more model request carries the feedback\n{context}"

    turn_ends = [e for e in run.session_log() if e.get("Command") == "stop" and e.get("Provider") == "OpenHands"]
    assert len(turn_ends) >= 2, context  # lidguard saw both Stops (and the SessionEnd)
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0), context
    assert run.suspend_requests() == []
