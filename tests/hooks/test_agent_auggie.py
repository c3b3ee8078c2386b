"""Augment auggie (issue 35.2; payloads as auggie 0.36.0 sent them against tests/agents/fake_augment.py,
AGENT_CLIS_NEW.md section 6): ``PromptSubmit`` starts the session keyed by ``conversation_id``, tool use pairs
by name, a Stop ends the turn and never waits for an ask-before-sleep reply (auggie discards a Stop hook's
output), SessionEnd ends the session; the ancestry owner is ``node .../.bin/auggie``; the installer writes
the Claude-style table of ``~/.augment/settings.json`` with milliseconds and ``.*`` tool matchers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import auggie
from lidguard.agents.ancestry import matches_provider, resolve_agent_process
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

CONVERSATION = "c5888959-5b7d-4d21-894c-a5784430ebba"
WORK = "/home/u/work"
COMMON = {"conversation_id": CONVERSATION, "workspace_roots": [WORK]}
TOOL = {"tool_name": "launch-process",
        "tool_input": {"command": "echo hello", "wait": True, "max_wait_seconds": 30, "cwd": "."},
        "tool_error": None, "is_mcp_tool": False}
STOP = {"hook_event_name": "Stop", "agent_stop_cause": "end_turn",
        "_exchange": {"exchange": {"request_message": "run echo hello and then say hi",
                                   "response_text": "All done: hello",
                                   "request_id": "640d26b7-e06b-4efd-b0fd-24d3d74b82b4",
                                   "request_nodes": [{"id": 1, "type": 1, "tool_result_node": {
                                       "tool_use_id": "toolu_fake_1", "content": "hello\n", "is_error": False}}],
                                   "response_nodes": [{"id": 0, "type": 0, "content": "All done: hello"}]},
                      "changedFiles": []}}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, payload: dict[str, Any], **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    output = run_hook("auggie", [], json.dumps({**COMMON, **payload}).encode(), environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_prompt_submit_starts_the_session_keyed_by_the_conversation(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "PromptSubmit",
                                                "user_prompt": "run echo hello and then say hi"})
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "Augment",
                                                                                       CONVERSATION)
    assert message["InputPromptPreview"] == "run echo hello and then say hi" and output is None


@pytest.mark.parametrize(("event", "extra", "state"), [
    ("PreToolUse", {"tool_output": "[undefined]"}, "Running"),
    ("PostToolUse", {"tool_output": "Here are the results from executing the command.\n<return-code>\n0\n"
                                    "</return-code>\n<output>\nhello\n\n</output>"}, "Finished"),
])
def test_tool_use_is_activity_paired_by_the_tools_name(stub_environment, event, extra, state):
    [message], output = _run(stub_environment, {"hook_event_name": event, **TOOL, **extra})
    assert message["Command"] == "mark-session-active" and output is None
    assert (message["ToolCallId"], message["ToolCallState"]) == ("tool:launch-process", state)
    assert message["SessionStateReason"] == f"{event}:launch-process"


def test_a_stop_ends_the_turn_with_the_reply_and_never_waits_for_a_follow_up(stub_environment):
    """Ask-before-sleep is on and a reply waits, yet the Stop neither waits nor prints: auggie would discard it."""
    [message], output = _run(stub_environment, STOP, settings=ON, reply=REPLIED, lid="Closed")
    assert output is None and "WaitForFollowUp" not in message
    assert (message["Command"], message["IsProviderSessionEnd"], message["IsTurnEnd"]) == ("stop", True, True)
    assert message["SessionEndReason"] == "Stop:end_turn"
    assert message["LastAssistantMessage"] == "All done: hello"


@pytest.mark.parametrize("cause", ["interrupted", "error"])
def test_an_interrupted_or_failed_turn_ends_only_the_turn(stub_environment, cause):
    [message], _ = _run(stub_environment, {**STOP, "agent_stop_cause": cause, "_exchange": None})
    assert message["IsProviderSessionEnd"] is False and message["IsTurnEnd"] is True
    assert message["SessionEndReason"] == f"Stop:{cause}" and message["LastAssistantMessage"] == ""


def test_session_end_ends_the_session(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "SessionEnd"}, settings=ON, reply=REPLIED)
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is True and output is None
    assert "IsTurnEnd" not in message and message["SessionIdentifier"] == CONVERSATION


@pytest.mark.parametrize("payload", [{"hook_event_name": "SessionStart"},
                                     {"hook_event_name": "Notification", "notification_type": "info",
                                      "notification_message": "x"},
                                     {"hook_event_name": "UserPromptSubmit", "prompt": "not auggie's name"}])
def test_other_events_are_only_logged(stub_environment, payload):
    messages, output = _run(stub_environment, payload)
    assert messages == [] and output is None


def test_the_owner_is_the_node_running_its_bin_with_no_shell_between():
    bin_path = "/home/u/.npm/node_modules/.bin/auggie"
    chain = [ProcessInfo(30, 20, "python3", "/usr/bin/python3.11", ("python3", "/x/bin/lidguard", "auggie-hook")),
             ProcessInfo(20, 10, "node", "/usr/bin/node", ("node", bin_path, "-p", "run echo hello")),
             ProcessInfo(10, 1, "bash", "/usr/bin/bash", ("bash",))]
    owner = resolve_agent_process(chain, "auggie")
    assert owner is not None and owner.pid == 20
    assert matches_provider(ProcessInfo(21, 1, "node", "/usr/bin/node",
                                        ("node", "/opt/lib/node_modules/@augmentcode/auggie/augment.mjs")), "auggie")
    assert not matches_provider(ProcessInfo(22, 1, "node", "/usr/bin/node", ("node", "server.js", "auggie")), "auggie")


# -- the installer ----------------------------------------------------------------------------------------
@pytest.fixture
def settings_file(isolated_home: Path) -> Path:
    return isolated_home / ".augment" / "settings.json"


def test_install_writes_milliseconds_and_matchers_auggie_accepts(settings_file):
    installer = auggie.installer()
    assert installer.install(None, 450).changed
    hooks = json.loads(settings_file.read_text())["hooks"]
    assert list(hooks) == list(auggie.EVENTS) == ["PromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    for event, groups in hooks.items():
        [group] = groups
        # "*" matches no tool in auggie, and a matcher on a lifecycle event makes it warn
        assert group.get("matcher") == (".*" if event.endswith("ToolUse") else None), (event, group)
        [handler] = group["hooks"]
        assert handler["command"].endswith("auggie-hook") and handler["type"] == "command"
        assert handler["timeout"] == 1000 * DEFAULT_HOOK_TIMEOUT_SECONDS  # milliseconds, Stop included
    assert not installer.install(None, 450).changed
    lines = installer.status_lines(None, 900)  # no Stop timeout of its own: any stop timeout reads as installed
    assert lines[0] == "Status: Installed" and "Stop: Installed" in lines
    assert any("enable_hooks" in line for line in lines)


def test_install_and_remove_leave_the_users_settings_alone(settings_file):
    settings_file.parent.mkdir(parents=True)
    user = {"model": "sonnet", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/u/audit.sh",
                                                              "timeout": 5000}]}]}}
    settings_file.write_text(json.dumps(user, indent=2))
    installer = auggie.installer()
    installer.install(None, 450)
    root = json.loads(settings_file.read_text())
    assert root["model"] == "sonnet" and root["hooks"]["Stop"][0] == user["hooks"]["Stop"][0]
    assert installer.remove(None).changed
    assert json.loads(settings_file.read_text()) == user
    assert not installer.remove(None).changed
