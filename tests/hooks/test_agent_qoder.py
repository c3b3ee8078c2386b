"""Qoder CLI (issue 35.2; AGENT_CLIS_NEW.md section 5). No real Qoder turn can run here - it needs a Qoder login,
and even its bring-your-own-key models need an online account check - so these payloads are recorded shapes:
SessionEnd exactly as a refused 1.1.52 run sent it, the others with the keys its 1.1.52 bundle builds (Claude
Code's). The mapping is Claude's, the owner is ``node .../.bin/qodercli`` (no shell between), and the installer
writes the Claude-style table of ``~/.qoder/settings.json`` (``$QODER_CONFIG_DIR``; seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import qoder
from lidguard.agents.ancestry import matches_provider, resolve_agent_process
from lidguard.hooks.runner import run_hook
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

SESSION = "540f824c-3b1e-4c55-9a7e-1d2f3a4b5c6d"
COMMON = {"session_id": SESSION, "transcript_path": f"/home/u/.qoder/projects/-home-u-proj/{SESSION}.jsonl",
          "cwd": "/home/u/proj", "permission_mode": "default"}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, payload: dict[str, Any], **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    output = run_hook("qoder", [], json.dumps({**COMMON, **payload}).encode(), environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_the_recorded_session_end_ends_the_session(stub_environment):
    recorded = {"hook_event_name": "SessionEnd", "permission_mode": "yolo", "reason": "other"}
    [message], output = _run(stub_environment, recorded)
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("stop", "Qoder", SESSION)
    assert message["IsProviderSessionEnd"] is True and message["SessionEndReason"] == "SessionEnd:other"
    assert message["TranscriptPath"] == COMMON["transcript_path"] and output is None


def test_a_prompt_starts_the_session_and_tools_pair_by_their_id(stub_environment):
    [start], _ = _run(stub_environment, {"hook_event_name": "UserPromptSubmit", "prompt": "fix it"})
    assert start["Command"] == "start" and start["InputPromptPreview"] == "fix it"
    assert start["WorkingDirectory"] == "/home/u/proj"
    [tool], _ = _run(stub_environment, {"hook_event_name": "PreToolUse", "tool_use_id": "call_1",
                                        "tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert (tool["Command"], tool["ToolCallId"], tool["ToolCallState"]) == ("mark-session-active", "call_1", "Running")


@pytest.mark.parametrize(("payload", "work"), [
    ({"hook_event_name": "SubagentStart", "agent_id": "a1", "agent_type": "general"}, "subagent:a1"),
    ({"hook_event_name": "TaskCreated", "task_id": "7", "task_subject": "tests"}, "task:7"),
])
def test_subagents_and_tasks_are_background_work(stub_environment, payload, work):
    [message], _ = _run(stub_environment, payload)
    assert (message["ToolCallId"], message["BackgroundWork"]) == (work, True)


def test_permission_prompt_soft_locks_and_a_closed_lid_denies_a_permission_request(stub_environment):
    [soft], _ = _run(stub_environment, {"hook_event_name": "Notification", "notification_type": "permission_prompt",
                                        "message": "Tool Bash requires confirmation"})
    assert soft["Command"] == "mark-session-softlocked"
    _, output = _run(stub_environment, {"hook_event_name": "PermissionRequest", "tool_name": "Bash",
                                        "tool_input": {"command": "rm -rf build"}}, lid="Closed")
    assert output["hookSpecificOutput"]["hookEventName"] == "PermissionRequest"
    assert output["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_a_stop_ends_the_turn_and_continues_with_claudes_block_shape(stub_environment):
    """The bundle feeds a Stop's ``{"decision": "block", "reason"}`` back to the model (read, not run)."""
    messages, output = _run(stub_environment, {"hook_event_name": "Stop", "stop_hook_active": False,
                                               "last_assistant_message": "All done"}, settings=ON, reply=REPLIED)
    stop = next(message for message in messages if message["Command"] == "stop")
    assert stop["IsTurnEnd"] is True and stop["WaitForFollowUp"] is True
    assert stop["LastAssistantMessage"] == "All done"
    assert output == {"decision": "block", "reason": "now run the tests"}


def test_the_owner_is_the_node_running_qodercli_directly():
    chain = [ProcessInfo(30, 20, "python3", "/usr/bin/python3", ("python3", "/x/bin/lidguard", "qoder-hook")),
             ProcessInfo(20, 10, "node", "/usr/bin/node", ("node", "/u/.npm/node_modules/.bin/qodercli", "-p", "hi")),
             ProcessInfo(10, 5, "node", "/usr/bin/node",
                         ("node", "/u/.npm/node_modules/@qoder-ai/qodercli/bundle/qoder-npm-dispatcher.cjs")),
             ProcessInfo(5, 1, "bash", "/usr/bin/bash", ("bash",))]
    owner = resolve_agent_process(chain, "qoder")
    assert owner is not None and owner.pid == 20
    assert not matches_provider(ProcessInfo(9, 1, "node", "/usr/bin/node", ("node", "app.js", "qodercli")), "qoder")


# -- the installer ----------------------------------------------------------------------------------------
def test_install_writes_seconds_the_stop_timeout_and_honours_qoder_config_dir(isolated_home: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    for name in ("QODER_CONFIG_DIR", "QODER_CLI_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    installer = qoder.installer()
    assert installer.config_root() == isolated_home / ".qoder"
    installer.install(None, 450)
    hooks = json.loads((isolated_home / ".qoder" / "settings.json").read_text())["hooks"]
    assert list(hooks) == list(qoder.EVENTS) and "WorktreeCreate" not in hooks
    assert hooks["Stop"][0]["hooks"][0]["timeout"] == 450 and hooks["PreToolUse"][0]["matcher"] == "*"
    assert hooks["SessionEnd"][0]["hooks"][0]["command"].endswith("qoder-hook")
    lines = installer.status_lines(None, 450)
    assert lines[0] == "Status: Installed" and "Hooks enabled: True" in lines
    assert any("Qoder login" in line for line in lines)
    other = isolated_home / "elsewhere"
    monkeypatch.setenv("QODER_CONFIG_DIR", str(other))
    assert installer.config_root() == other
    installer.install(None, 450)
    assert (other / "settings.json").is_file()


def test_disable_all_hooks_is_reported(isolated_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("QODER_CONFIG_DIR", str(isolated_home / ".qoder"))
    (isolated_home / ".qoder").mkdir()
    (isolated_home / ".qoder" / "settings.json").write_text(json.dumps({"disableAllHooks": True}))
    lines = qoder.installer().status_lines(None, 450)
    assert "Hooks enabled: False" in lines and any("disableAllHooks is true" in line for line in lines)
