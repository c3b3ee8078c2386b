"""Copilot CLI's newer events (issue 35.3; camelCase payloads as AGENT_CLIS.md records them, the event from
``--event``): subagents keep background work in flight, ``notification`` ``agent_idle`` soft-locks and
``shell_completed`` is activity, ``errorOccurred`` ends the turn like a failed stop unless Copilot goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import copilot
from lidguard.hooks.runner import run_hook
from lidguard.runtime.requests import check_wire_message, parse_request

COMMON = {"sessionId": "f28fedc1-0000-4000-8000-000000000001", "timestamp": 1796007164271, "cwd": "/work"}


def _requests(stub_environment, event: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    runtime, environment = stub_environment()
    run_hook("copilot", ["--event", event], json.dumps({**COMMON, **payload}).encode(), environment)
    for message, _, _ in runtime.requests:
        check_wire_message(message)
        parse_request(message)
    return [message for message, _, _ in runtime.requests]


@pytest.mark.parametrize(("event", "state"), [("subagentStart", "Running"), ("subagentStop", "Finished")])
def test_subagents_are_background_work_paired_by_their_name(stub_environment, event, state):
    [message] = _requests(stub_environment, event, {"agentName": "explore", "agentDisplayName": "Explore"})
    assert message["Command"] == "mark-session-active"
    assert (message["ToolCallId"], message["ToolCallState"], message["BackgroundWork"]) == (
        "subagent:explore", state, True)


def test_agent_idle_soft_locks_and_shell_completed_is_activity(stub_environment):
    [idle] = _requests(stub_environment, "notification", {"message": "Copilot is waiting for your input",
                                                          "hook_event_name": "Notification",
                                                          "notification_type": "agent_idle"})
    assert (idle["Command"], idle["SessionStateReason"]) == ("mark-session-softlocked", "agent_idle")
    [shell] = _requests(stub_environment, "notification", {"message": "Shell 0 completed", "title": "Shell",
                                                           "hook_event_name": "Notification",
                                                           "notification_type": "shell_completed"})
    assert (shell["Command"], shell["SessionStateReason"]) == ("mark-session-active", "shell_completed")
    assert _requests(stub_environment, "notification", {"notification_type": "agent_completed"}) == []


def test_an_error_ends_the_turn_like_a_failed_stop_unless_copilot_goes_on(stub_environment):
    [failed] = _requests(stub_environment, "errorOccurred", {"error": "model call failed",
                                                             "errorContext": "model_call", "recoverable": False})
    assert failed["Command"] == "stop" and failed["IsProviderSessionEnd"] is False and failed["IsTurnEnd"] is True
    assert failed["SessionEndReason"] == "errorOccurred:model_call" and "WaitForFollowUp" not in failed
    [retried] = _requests(stub_environment, "errorOccurred", {"error": "429", "errorContext": "model_call",
                                                              "recoverable": True})
    [tool] = _requests(stub_environment, "errorOccurred", {"error": "exit 1", "errorContext": "tool_execution",
                                                           "recoverable": False})
    assert retried["Command"] == tool["Command"] == "mark-session-active"


def test_agent_stop_ends_the_turn_and_session_end_the_session(stub_environment):
    [stop] = _requests(stub_environment, "agentStop", {"stopReason": "end_turn", "stop_hook_active": False})
    [end] = _requests(stub_environment, "sessionEnd", {"reason": "complete"})
    assert stop["IsTurnEnd"] is True and "IsTurnEnd" not in end


def test_the_managed_file_installs_the_subagent_events(isolated_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    copilot.installer().install(None, 600)
    hooks = json.loads(copilot.managed_file().read_text())["hooks"]
    assert {"subagentStart", "subagentStop", "notification", "errorOccurred"} <= set(hooks)
    assert hooks["subagentStart"][0]["bash"].endswith("copilot-hook --event subagentStart")
