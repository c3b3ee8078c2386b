"""Stop continuation, the mechanism ask-before-sleep uses: next to lidguard's installed hooks, a test-only
Stop hook (Gemini CLI: AfterAgent) prints ``{"decision": "block", "reason": "continue please"}`` once, and the
real agent sends one more model request carrying that text, then ends its turn normally (the second Stop is
not blocked).

OpenCode has no Stop hook: its managed plugin re-prompts after ``session.idle``, which ``opencode run``
cuts short by exiting (AGENT_CLIS.md); only the interactive TUI could show it, so it is not covered here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_harness import AgentRun
from hook_script import CONTINUATION

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def add_blocking_stop_hook(run: AgentRun) -> list[str] | None:
    """Adds the test's Stop hook beside lidguard's; returns extra CLI arguments when needed."""
    command = run.hook_command("stop", "--block-once")
    if run.name in ("claude", "codex", "qwen", "gemini"):
        path = run.home / {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                           "qwen": ".qwen/settings.json", "gemini": ".gemini/settings.json"}[run.name]
        config = json.loads(path.read_text())
        event, timeout = ("AfterAgent", 30_000) if run.name == "gemini" else ("Stop", 30)  # Gemini: milliseconds
        config["hooks"].setdefault(event, []).append(
            {"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
        path.write_text(json.dumps(config, indent=2))
        # Codex runs only trusted hooks; lidguard's own are trusted by hook-install, the test's is not.
        return ["--dangerously-bypass-hook-trust"] if run.name == "codex" else None
    folder = run.home / ".copilot" / "hooks"
    (folder / "test-continue.json").write_text(json.dumps(
        {"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": command, "timeoutSec": 30}]}}))
    return None


@pytest.mark.parametrize("name", ["claude", "codex", "copilot", "gemini", "qwen"])
def test_a_blocking_stop_hook_makes_the_real_agent_continue_once(agent: Any, name: str) -> None:
    run = agent(name)
    run.hook_install()
    extra = add_blocking_stop_hook(run)
    run.prepare_machine(lid="open")
    command = run.headless_command()
    if extra:
        command[2:2] = extra
    result = run.run_headless(command)
    context = run.describe(result)
    assert result.returncode == 0, context

    stops = [call for call in run.hook_calls() if call["label"] == "stop"]
    assert len(stops) == 2, f"one blocked Stop and one that ended the turn: {stops}\n{context}"
    assert json.loads(stops[1]["stdin"]).get("stop_hook_active") is True, stops[1]
    requests = run.model.model_requests()
    carrying = [index for index, request in enumerate(requests) if CONTINUATION in request.text()]
    assert len(carrying) == 1, f"exactly one more model request carries the continuation text\n{context}"
    assert carrying[0] >= 2, "the continuation comes after the tool call and the first answer"

    # lidguard saw both turn ends; with the lid open nothing suspends and nothing stays active.
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0), context
    assert run.suspend_requests() == []
