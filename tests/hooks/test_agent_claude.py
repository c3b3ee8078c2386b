"""Claude Code's newer events (issue 35.3; payloads as AGENT_CLIS.md / AGENT_CLIS_NEW.md record them):
subagents and tasks keep background work in flight, a Stop ends only the turn, ``idle_prompt`` soft-locks,
and ``WorktreeCreate`` is never installed (registering it replaces Claude's git worktree creation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import claude
from lidguard.hooks.runner import run_hook
from lidguard.runtime.requests import check_wire_message, parse_request

COMMON = {"session_id": "5a0b6c61-0000-4000-8000-000000000001", "cwd": "/work",
          "transcript_path": "/home/u/.claude/projects/-work/5a0b6c61.jsonl", "permission_mode": "default"}


def _one(stub_environment, payload: dict[str, Any]) -> dict[str, Any]:
    runtime, environment = stub_environment()
    run_hook("claude", [], json.dumps({**COMMON, **payload}).encode(), environment)
    [(message, _, _)] = [request for request in runtime.requests if request[0]["Command"] != "status"]
    check_wire_message(message)
    parse_request(message)
    return message


@pytest.mark.parametrize(("payload", "work", "state"), [
    ({"hook_event_name": "SubagentStart", "agent_id": "a7f3", "agent_type": "Explore", "prompt_id": "p1"},
     "subagent:a7f3", "Running"),
    ({"hook_event_name": "SubagentStop", "agent_id": "a7f3", "agent_type": "Explore", "stop_hook_active": False,
      "agent_transcript_path": "/home/u/.claude/projects/-work/5a0b6c61/subagents/agent-a7f3.jsonl",
      "last_assistant_message": "42", "background_tasks": [], "session_crons": []}, "subagent:a7f3", "Finished"),
    ({"hook_event_name": "TaskCreated", "task_id": "3", "task_subject": "Run the tests",
      "task_description": "pytest -q", "teammate_name": "", "team_name": ""}, "task:3", "Running"),
    ({"hook_event_name": "TaskCompleted", "task_id": "3", "task_subject": "Run the tests"}, "task:3", "Finished"),
])
def test_subagents_and_tasks_are_background_work_in_flight(stub_environment, payload, work, state):
    message = _one(stub_environment, payload)
    assert message["Command"] == "mark-session-active"
    assert (message["ToolCallId"], message["ToolCallState"], message["BackgroundWork"]) == (work, state, True)


def test_a_stop_ends_only_the_turn_and_a_session_end_the_session(stub_environment):
    stop = _one(stub_environment, {"hook_event_name": "Stop", "stop_hook_active": False,
                                   "last_assistant_message": "All done: hello", "background_tasks": [],
                                   "session_crons": []})
    assert stop["Command"] == "stop" and stop["IsTurnEnd"] is True
    failure = _one(stub_environment, {"hook_event_name": "StopFailure", "error": "rate_limit"})
    assert failure["IsTurnEnd"] is True and failure["IsProviderSessionEnd"] is False
    end = _one(stub_environment, {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    assert end["Command"] == "stop" and "IsTurnEnd" not in end


def test_idle_prompt_soft_locks_the_session(stub_environment):
    message = _one(stub_environment, {"hook_event_name": "Notification", "notification_type": "idle_prompt",
                                      "message": "Claude is waiting for your input"})
    assert message["Command"] == "mark-session-softlocked"
    assert message["SessionStateReason"] == "idle_prompt"


def test_the_installed_events_include_the_work_events_and_never_worktree_create(isolated_home: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert "WorktreeCreate" not in claude.EVENTS and "WorktreeRemove" not in claude.EVENTS
    claude.installer().install(None, 600)
    hooks = json.loads((isolated_home / ".claude" / "settings.json").read_text())["hooks"]
    assert {"SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted"} <= set(hooks)
    assert not any(name.startswith("Worktree") for name in hooks)
    [notification] = hooks["Notification"]
    assert "idle_prompt" in notification["matcher"].split("|")
