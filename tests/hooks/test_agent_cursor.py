"""Cursor (issue 35.2; documentation only, AGENT_CLIS_NEW.md section 10: its CLI is not on npm, so the payloads
here are the documented shapes, not recorded runs): the mapping keyed by ``conversation_id``, the stop's
``followup_message`` continuation, the ancestry names and the flat version 1 ``~/.cursor/hooks.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import cursor
from lidguard.agents.ancestry import matches_provider
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import InstallError
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

COMMON = {"conversation_id": "0e5c2b1a-7f3d-4c8e-9a10-cursorconv01", "generation_id": "gen-7",
          "workspace_roots": ["/work/project"], "model": "claude-4-sonnet", "cursor_version": "1.7.2",
          "user_email": "dev@example.com", "transcript_path": None}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, payload: dict[str, Any], **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    output = run_hook("cursor", [], json.dumps({**COMMON, **payload}).encode(), environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_a_prompt_starts_the_session_keyed_by_the_conversation(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "beforeSubmitPrompt", "prompt": "fix it",
                                                "attachments": []})
    assert message["Provider"] == "Cursor" and message["SessionIdentifier"] == COMMON["conversation_id"]
    assert message["Command"] == "start" and output is None


@pytest.mark.parametrize(("event", "state"), [("preToolUse", "Running"), ("postToolUse", "Finished"),
                                              ("postToolUseFailure", "Finished")])
def test_tool_use_is_activity_paired_by_its_id(stub_environment, event, state):
    [message], _ = _run(stub_environment, {"hook_event_name": event, "tool_name": "Shell",
                                           "tool_input": {"command": "ls"}, "tool_use_id": "call_1"})
    assert message["Command"] == "mark-session-active"
    assert (message["ToolCallId"], message["ToolCallState"]) == ("call_1", state)


def test_a_tool_without_an_id_pairs_by_its_name(stub_environment):
    [message], _ = _run(stub_environment, {"hook_event_name": "preToolUse", "tool_name": "Read"})
    assert message["ToolCallId"] == "tool:Read"


@pytest.mark.parametrize(("event", "state"), [("subagentStart", "Running"), ("subagentStop", "Finished")])
def test_subagents_are_background_work(stub_environment, event, state):
    [message], _ = _run(stub_environment, {"hook_event_name": event, "subagent_id": "sub-1",
                                           "subagent_type": "explore"})
    assert (message["ToolCallId"], message["ToolCallState"], message["BackgroundWork"]) == (
        "subagent:sub-1", state, True)


def test_a_completed_stop_ends_the_turn_and_continues_with_followup_message(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "stop", "status": "completed", "loop_count": 0},
                             settings=ON, reply=REPLIED)
    assert output == {"followup_message": "now run the tests"}
    assert message["Command"] == "stop" and message["WaitForFollowUp"] is True and message["IsTurnEnd"] is True
    assert message["StopHookActive"] is False


def test_the_stop_after_our_follow_up_is_marked_as_such(stub_environment):
    [message], _ = _run(stub_environment, {"hook_event_name": "stop", "status": "completed", "loop_count": 1})
    assert message["StopHookActive"] is True


@pytest.mark.parametrize("status", ["aborted", "error"])
def test_an_aborted_or_failed_stop_ends_only_the_turn_and_never_waits(stub_environment, status):
    [message], output = _run(stub_environment, {"hook_event_name": "stop", "status": status, "loop_count": 0},
                             settings=ON, reply=REPLIED)
    assert output is None and "WaitForFollowUp" not in message
    assert message["IsProviderSessionEnd"] is False and message["IsTurnEnd"] is True


def test_session_end_ends_the_session(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "sessionEnd", "reason": "user_close"},
                             settings=ON, reply=REPLIED)
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is True and output is None
    assert "IsTurnEnd" not in message


@pytest.mark.parametrize("event", ["beforeShellExecution", "afterFileEdit", "afterAgentThought", "unknown"])
def test_other_events_are_only_logged(stub_environment, event):
    messages, output = _run(stub_environment, {"hook_event_name": event, "command": "rm -rf /"})
    assert messages == [] and output is None


@pytest.mark.parametrize(("name", "exe", "cmdline", "expected"), [
    ("cursor-agent", "/home/u/.local/share/cursor-agent/versions/2025.11/cursor-agent", ("cursor-agent",), True),
    ("agent", "/home/u/.local/share/cursor-agent/versions/2025.11/cursor-agent", ("agent", "-p"), True),
    ("Cursor", "/Applications/Cursor.app/Contents/MacOS/Cursor", ("Cursor",), True),
    ("cursor", "/usr/share/cursor/cursor", ("/usr/share/cursor/cursor",), True),
    ("agent", "/usr/bin/agent", ("agent",), False),
    ("node", "/usr/bin/node", ("node", "/opt/agent.js"), False),
])
def test_ancestry_owner_rules(name, exe, cmdline, expected):
    assert matches_provider(ProcessInfo(10, 1, name, exe, cmdline), "cursor") is expected


# -- the installer ----------------------------------------------------------------------------------------
@pytest.fixture
def hooks_file(isolated_home: Path) -> Path:
    return isolated_home / ".cursor" / "hooks.json"


def test_install_writes_the_version_1_shape_and_is_idempotent(hooks_file):
    installer = cursor.installer()
    result = installer.install(None, 450)
    assert result.changed and installer.path(None) == hooks_file
    root = json.loads(hooks_file.read_text())
    assert root["version"] == 1 and list(root["hooks"]) == list(cursor.EVENTS)
    [stop] = root["hooks"]["stop"]
    assert stop["timeout"] == 450 and stop["loop_limit"] == 5 and stop["command"].endswith("cursor-hook")
    assert all(len(entries) == 1 and "matcher" not in entries[0] for entries in root["hooks"].values())
    assert not installer.install(None, 450).changed
    lines = installer.status_lines(None, 450)
    assert lines[0] == "Status: Installed" and "stop: Installed" in lines
    assert any("not on npm" in line for line in lines)
    assert installer.status_lines(None, 600)[0] == "Status: NeedsUpdate"


def test_install_and_remove_leave_the_users_hooks_alone(hooks_file):
    hooks_file.parent.mkdir(parents=True)
    user = {"version": 1, "hooks": {"stop": [{"command": "./hooks/audit.sh", "loop_limit": 2}],
                                    "beforeShellExecution": [{"command": "./hooks/guard.sh", "matcher": "rm"}]},
            "extra": {"keep": True}}
    hooks_file.write_text(json.dumps(user, indent=2))
    installer = cursor.installer()
    installer.install(None, 450)
    root = json.loads(hooks_file.read_text())
    assert root["hooks"]["stop"][0] == user["hooks"]["stop"][0] and len(root["hooks"]["stop"]) == 2
    assert root["hooks"]["beforeShellExecution"] == user["hooks"]["beforeShellExecution"] and root["extra"]
    result = installer.remove(None)
    assert result.changed and json.loads(hooks_file.read_text()) == user
    assert not installer.remove(None).changed


def test_remove_deletes_a_file_that_held_only_ours(hooks_file):
    installer = cursor.installer()
    installer.install(None, 450)
    installer.remove(None)
    assert not hooks_file.exists()
    assert installer.status_lines(None, 450)[:3] == ["Status: NotInstalled", f"Config: {hooks_file}",
                                                    "Config exists: False"]


def test_duplicates_of_ours_collapse_into_one(hooks_file):
    hooks_file.parent.mkdir(parents=True)
    ours = cursor.entry("stop", 450)
    hooks_file.write_text(json.dumps({"version": 1, "hooks": {"stop": [ours, {"command": "x"}, ours]}}))
    cursor.installer().install(None, 450)
    stops = json.loads(hooks_file.read_text())["hooks"]["stop"]
    assert stops == [{"command": "x"}, ours]


@pytest.mark.parametrize("text", ['{"version": 1, "hooks": []}', '{"version": "one", "hooks": {}}',
                                  '{"version": 1, "hooks": {"stop": {"command": "x"}}}', "[1, 2]", "{not json",
                                  '{"version": true}'])
def test_hostile_files_are_refused_and_left_as_they_are(hooks_file, text):
    hooks_file.parent.mkdir(parents=True)
    hooks_file.write_text(text)
    installer = cursor.installer()
    with pytest.raises(InstallError):
        installer.install(None, 450)
    with pytest.raises(InstallError):
        installer.remove(None)
    assert hooks_file.read_text() == text
