"""What the hooks tell the runtime about work: request ids and times on every request, tool call
ids (started/finished), turn ids, and deferred stops from Claude's ``background_tasks``."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from lidguard.hooks.runner import run_hook
from lidguard.runtime.requests import check_wire_message, parse_request

CLAUDE = {"session_id": "s1", "cwd": "/work", "transcript_path": "/t.jsonl"}
CODEX = {"session_id": "c1", "cwd": "/work", "turn_id": "turn-42"}


def _requests(stub_environment, provider: str, payload: dict[str, Any], *args: str) -> list[dict[str, Any]]:
    runtime, environment = stub_environment()
    run_hook(provider, list(args), json.dumps(payload).encode(), environment)
    for message, _, _ in runtime.requests:
        check_wire_message(message)
        parse_request(message)  # every field passes the runtime's own validation
    return [message for message, _, _ in runtime.requests]


def test_every_request_carries_a_fresh_request_id_and_the_time_it_was_sent(stub_environment):
    before = time.time() * 1000
    messages = []
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop"):
        messages += _requests(stub_environment, "claude", {**CLAUDE, "hook_event_name": event, "tool_name": "Bash",
                                                            "notification_type": "permission_prompt"})
    ids = [message["RequestId"] for message in messages]
    assert len(ids) == len(set(ids)) == 5
    # a hook never reads the session list: it asks for the sessions to be counted, not listed
    assert all(message["ReplySessions"] is False for message in messages)
    assert all(len(rid) == 24 for rid in ids)
    assert all(before - 1 <= message["SentAtUnixMilliseconds"] <= time.time() * 1000 + 1 for message in messages)


def test_claude_tool_calls_are_started_and_finished_by_tool_use_id(stub_environment):
    [pre] = _requests(stub_environment, "claude", {**CLAUDE, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                                   "tool_use_id": "toolu_1"})
    [post] = _requests(stub_environment, "claude", {**CLAUDE, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                                    "tool_use_id": "toolu_1"})
    [failed] = _requests(stub_environment, "claude", {**CLAUDE, "hook_event_name": "PostToolUseFailure",
                                                      "tool_name": "Bash", "tool_use_id": "toolu_2"})
    assert (pre["ToolCallId"], pre["ToolCallState"]) == ("toolu_1", "Running")
    assert (post["ToolCallId"], post["ToolCallState"]) == ("toolu_1", "Finished")
    assert (failed["ToolCallId"], failed["ToolCallState"]) == ("toolu_2", "Finished")


def test_codex_sends_its_turn_id_and_call_ids(stub_environment):
    [start] = _requests(stub_environment, "codex", {**CODEX, "hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    [pre] = _requests(stub_environment, "codex", {**CODEX, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                                  "tool_use_id": "call_1"})
    [stop] = _requests(stub_environment, "codex", {**CODEX, "hook_event_name": "Stop"})
    assert start["TurnId"] == pre["TurnId"] == stop["TurnId"] == "turn-42"
    assert (pre["ToolCallId"], pre["ToolCallState"]) == ("call_1", "Running")
    assert "HasPendingProviderWork" not in stop  # Codex reports no background work in its payloads


def test_copilot_pairs_tools_by_name_and_opencode_by_call_id(stub_environment):
    [pre] = _requests(stub_environment, "copilot", {"sessionId": "p1", "toolName": "bash"}, "--event", "preToolUse")
    [post] = _requests(stub_environment, "copilot", {"sessionId": "p1", "toolName": "bash"}, "--event", "postToolUse")
    assert pre["ToolCallId"] == post["ToolCallId"] == "tool:bash"
    [before] = _requests(stub_environment, "opencode", {"sessionID": "o1", "tool": "bash", "callID": "call_9"},
                         "--event", "tool.execute.before")
    assert (before["ToolCallId"], before["ToolCallState"]) == ("call_9", "Running")


@pytest.mark.parametrize(("tasks", "pending"), [
    ([{"id": "b1", "type": "shell", "status": "running", "command": "sleep 15"}], True),
    ([{"id": "b1", "status": "completed"}, {"id": "b2", "status": "killed"}], False),
    ([{"id": "b1"}], True),  # no status: may still run
    ([], False),
    ("running", False),
    ([7, None, "x"], False),
])
def test_a_claude_stop_with_running_background_tasks_is_a_deferred_stop(stub_environment, tasks, pending):
    [stop] = _requests(stub_environment, "claude", {**CLAUDE, "hook_event_name": "Stop", "background_tasks": tasks,
                                                    "session_crons": []})
    assert stop["Command"] == "stop"
    assert stop.get("HasPendingProviderWork", False) is pending


def test_garbage_ids_never_reach_the_runtime_unbounded(stub_environment):
    for value in ("x" * 10_000, 12345678901234567890, None, ["a"], "\ud800"):
        messages = _requests(stub_environment, "codex", {**CODEX, "turn_id": value, "hook_event_name": "PreToolUse",
                                                         "tool_name": "Bash", "tool_use_id": value})
        for message in messages:
            assert len(message.get("TurnId", "")) <= 256 and len(message.get("ToolCallId", "")) <= 256
