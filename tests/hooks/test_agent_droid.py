"""Factory Droid 0.225.2 (issue 35.2; AGENT_CLIS_NEW.md section 1, payloads recorded from the real CLI in
``droid exec`` and its TUI): the mapping (SessionStart starts ``exec`` only, no tool call id, the
permission_prompt soft-lock, Stop's ``{"decision": "block"}`` continuation), the ancestry owner rules (the
TUI's stream-jsonrpc worker is skipped) and ``~/.factory/hooks.json`` with its events at the top level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import droid
from lidguard.agents.ancestry import matches_provider, resolve_agent_process
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import InstallError
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

SESSION = "10c36e7c-1474-4461-bd02-dcfa5e8c8675"
COMMON = {"session_id": SESSION, "cwd": "/work/project", "permission_mode": "auto-low",
          "transcript_path": f"/home/u/.factory/sessions/-work-project/{SESSION}.jsonl"}
EXECUTE = {"tool_name": "Execute", "tool_input": {"command": "echo hello", "summary": "Print hello",
                                                  "riskLevelReason": "prints a word", "riskLevel": "low"}}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}
BIN = "/home/u/.npm/node_modules/@factory/cli/bin/droid"
EXEC = ProcessInfo(20, 10, "droid", BIN, ("droid", "exec", "-m", "fake-model", "run echo hello"))
TUI = ProcessInfo(10, 5, "droid", BIN, ("droid",))
WORKER = ProcessInfo(20, 10, "droid", BIN, (BIN, "exec", "--input-format", "stream-jsonrpc", "--output-format",
                                            "stream-jsonrpc"))
HOOK, SHELL = ProcessInfo(40, 30, "python3", "/usr/bin/python3.11", ("python3", "-m", "lidguard", "droid-hook")), \
    ProcessInfo(30, 20, "sh", "/usr/bin/dash", ("sh", "-c", "lidguard droid-hook"))


def _run(stub_environment, payload: dict[str, Any], **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    output = run_hook("droid", [], json.dumps({**COMMON, **payload}).encode(), environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_a_tui_prompt_starts_the_session(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "UserPromptSubmit", "message_id": "cc10",
                                                "prompt": "run echo hello and then say hi", "has_images": False})
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "Droid", SESSION)
    assert message["WatchedProcessIdentifier"] == 4242 and message["TranscriptPath"] == COMMON["transcript_path"]
    assert message["InputPromptPreview"] == "run echo hello and then say hi" and output is None


def test_session_start_of_droid_exec_starts_the_session(stub_environment, monkeypatch):
    monkeypatch.setattr(droid, "hook_ancestry", lambda: [HOOK, SHELL, EXEC])
    [message], _ = _run(stub_environment, {"hook_event_name": "SessionStart", "permission_mode": "off",
                                           "source": "startup", "CLAUDE_ENV_FILE": "/tmp/env.sh"})
    assert message["Command"] == "start" and message["SessionIdentifier"] == SESSION


def test_session_start_without_a_readable_ancestry_starts_the_session(stub_environment, monkeypatch):
    def unreadable() -> list[ProcessInfo]:
        raise PermissionError("/proc")

    monkeypatch.setattr(droid, "hook_ancestry", unreadable)
    [message], _ = _run(stub_environment, {"hook_event_name": "SessionStart", "source": "startup"})
    assert message["Command"] == "start"


def test_session_start_of_the_tui_waits_for_the_first_prompt(stub_environment, monkeypatch):
    monkeypatch.setattr(droid, "hook_ancestry", lambda pid=None: [HOOK, SHELL, WORKER, TUI])
    messages, output = _run(stub_environment, {"hook_event_name": "SessionStart", "source": "startup"})
    assert messages == [] and output is None


def test_session_start_reads_the_hooks_ancestry_not_the_answering_processs(stub_environment, monkeypatch):
    """The runtime answering the native hook client (issue 36) runs this engine: the ancestry is the client's."""
    asked: list[int | None] = []
    monkeypatch.setattr(droid, "hook_ancestry", lambda pid=None: asked.append(pid) or [HOOK, SHELL, WORKER, TUI])
    runtime, environment = stub_environment()
    environment.ancestry_pid = 31337
    run_hook("droid", [], json.dumps({**COMMON, "hook_event_name": "SessionStart"}).encode(), environment)
    assert asked == [31337] and runtime.requests == []


@pytest.mark.parametrize(("event", "state"), [("PreToolUse", "Running"), ("PostToolUse", "Finished")])
def test_tool_use_is_activity_paired_by_the_tool_name(stub_environment, event, state):
    extra = {"tool_response": "hello\n\n\n[Process exited with code 0]"} if event == "PostToolUse" else {}
    [message], output = _run(stub_environment, {"hook_event_name": event, **EXECUTE, **extra})
    assert message["Command"] == "mark-session-active" and output is None
    assert (message["ToolCallId"], message["ToolCallState"]) == ("tool:Execute", state)


def test_the_approval_dialog_soft_locks_the_session(stub_environment):
    [message], _ = _run(stub_environment, {"hook_event_name": "Notification", "notification_type": "permission_prompt",
                                           "message": "Factory CLI needs permission to execute 1 tool(s)"})
    assert message["Command"] == "mark-session-softlocked" and message["SessionStateReason"] == "permission_prompt"


def test_a_stop_ends_the_turn_and_continues_with_the_phone_reply(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "Stop", "message_id": "b834",
                                                "stop_hook_active": False, "tool_execution_count": 0,
                                                "elapsed_time": 393}, settings=ON, reply=REPLIED)
    assert output == {"decision": "block", "reason": "now run the tests"}
    assert message["Command"] == "stop" and message["WaitForFollowUp"] is True and message["IsTurnEnd"] is True
    assert message["IsProviderSessionEnd"] is True and message["StopHookActive"] is False


def test_the_stop_after_a_continuation_carries_stop_hook_active(stub_environment):
    [message], output = _run(stub_environment, {"hook_event_name": "Stop", "stop_hook_active": True})
    assert message["StopHookActive"] is True and output is None and "WaitForFollowUp" not in message


def test_both_session_ends_of_a_quitting_tui_are_plain_stops(stub_environment):
    for extra in ({}, {"message_id": "b834"}):  # the TUI's own, then its worker's
        [message], output = _run(stub_environment, {"hook_event_name": "SessionEnd", "reason": "other",
                                                    "session_duration_ms": 899.3, "message_count": 9, **extra},
                                 settings=ON, reply=REPLIED)
        assert message["Command"] == "stop" and message["SessionEndReason"] == "SessionEnd:other"
        assert output is None and "WaitForFollowUp" not in message and "IsTurnEnd" not in message


def test_a_finished_subagent_is_activity(stub_environment):
    [message], _ = _run(stub_environment, {"hook_event_name": "SubagentStop"})
    assert message["Command"] == "mark-session-active"


@pytest.mark.parametrize("payload", [{"hook_event_name": "PreCompact"}, {"hook_event_name": "Notification",
                                                                        "notification_type": "idle"},
                                     {"hook_event_name": "PermissionRequest"}, {"hook_event_name": "Nope"}])
def test_other_events_are_only_logged(stub_environment, payload):
    messages, output = _run(stub_environment, {**payload, **EXECUTE})
    assert messages == [] and output is None


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"hook_event_name": 7}', b"{" * 5000])
def test_bad_input_sends_nothing_and_prints_nothing(stub_environment, stdin):
    runtime, environment = stub_environment(settings=ON, reply=REPLIED)
    assert run_hook("droid", [], stdin, environment) is None
    assert runtime.requests == []


@pytest.mark.parametrize("payload", [{"session_id": ["x"]}, {"session_id": "s" * 5000}, {"cwd": 7},
                                     {"stop_hook_active": "yes"}, {"transcript_path": "/x" * 5000},
                                     {"reason": "\ud800" * 3}])
def test_odd_fields_still_give_a_valid_stop(stub_environment, payload):
    runtime, environment = stub_environment()
    output = run_hook("droid", [], json.dumps({**COMMON, "hook_event_name": "Stop", **payload}).encode(), environment)
    [(message, _, _)] = runtime.requests
    check_wire_message(message)
    parse_request(message)
    assert output is None and message["Command"] == "stop" and message["SessionIdentifier"]


# -- ancestry -----------------------------------------------------------------------------------------------
def test_exec_watches_droid_and_the_tui_skips_its_worker():
    shim = ProcessInfo(5, 1, "node", "/usr/bin/node", ("node", "/home/u/.npm/node_modules/.bin/droid", "exec"))
    assert resolve_agent_process([HOOK, SHELL, EXEC, shim], "droid") == EXEC
    assert resolve_agent_process([HOOK, SHELL, WORKER, TUI, shim], "droid") == TUI
    assert resolve_agent_process([HOOK, SHELL, WORKER._replace(cmdline=(BIN, "exec", "--input-format=stream-jsonrpc")),
                                  TUI], "droid") == TUI
    assert droid.started_by_worker([HOOK, SHELL, WORKER, TUI]) and not droid.started_by_worker([HOOK, SHELL, EXEC])
    assert not droid.started_by_worker([HOOK, SHELL])


@pytest.mark.parametrize(("process", "expected"), [
    (ProcessInfo(5, 1, "node", "/usr/bin/node", ("node", "/x/node_modules/.bin/droid")), True),
    (ProcessInfo(5, 1, "node", "/usr/bin/node", ("node", "/x/node_modules/@factory/cli/bin/droid")), True),
    (ProcessInfo(5, 1, "node", "/usr/bin/node", ("node", "server.js", "droid")), False),
    (ProcessInfo(5, 1, "bash", "/usr/bin/bash", ("bash", "-c", "droid exec hi")), False),
    (EXEC._replace(cmdline=("droid", "exec", "explain --input-format stream-jsonrpc")), True),
])
def test_ancestry_owner_rules(process, expected):
    assert matches_provider(process, "droid") is expected


# -- the installer ------------------------------------------------------------------------------------------
@pytest.fixture
def hooks_file(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("FACTORY_HOME_OVERRIDE", raising=False)
    return isolated_home / ".factory" / "hooks.json"


def test_install_writes_the_events_at_the_top_level_and_is_idempotent(hooks_file):
    installer = droid.installer()
    result = installer.install(None, 450)
    assert result.changed and installer.path(None) == hooks_file
    root = json.loads(hooks_file.read_text())
    assert list(root) == list(droid.EVENTS) and "hooks" not in root
    [[stop]] = [group["hooks"] for group in root["Stop"]]
    assert stop["type"] == "command" and stop["timeout"] == 450 and stop["command"].endswith("droid-hook")
    assert root["Notification"][0]["matcher"] == "permission_prompt" and root["PreToolUse"][0]["matcher"] == "*"
    assert "matcher" not in root["SessionStart"][0] and root["SessionEnd"][0]["hooks"][0]["timeout"] == 30
    assert not installer.install(None, 450).changed
    lines = installer.status_lines(None, 450)
    assert lines[0] == "Status: Installed" and "Stop: Installed" in lines
    assert installer.status_lines(None, 600)[0] == "Status: NeedsUpdate"


def test_the_home_override_moves_the_file(hooks_file, tmp_path, monkeypatch):
    monkeypatch.setenv("FACTORY_HOME_OVERRIDE", str(tmp_path / "alt"))
    assert droid.installer().path(None) == tmp_path / "alt" / ".factory" / "hooks.json"
    monkeypatch.setenv("FACTORY_HOME_OVERRIDE", "relative")  # not a folder Droid would find: the home's
    assert droid.installer().path(None) == hooks_file


def test_install_and_remove_leave_the_users_hooks_alone(hooks_file):
    hooks_file.parent.mkdir(parents=True)
    user = {"Stop": [{"hooks": [{"type": "command", "command": "./audit.sh", "timeout": 5}]}],
            "PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
            "hooks": {"Stop": []}}
    hooks_file.write_text(json.dumps(user, indent=2))
    installer = droid.installer()
    installer.install(None, 450)
    root = json.loads(hooks_file.read_text())
    assert root["Stop"][0] == user["Stop"][0] and len(root["Stop"]) == 2 and root["hooks"] == {"Stop": []}
    assert root["PreToolUse"][0] == user["PreToolUse"][0]
    assert any("ignores it" in line for line in installer.status_lines(None, 450))
    result = installer.remove(None)
    assert result.changed and json.loads(hooks_file.read_text()) == user
    assert not installer.remove(None).changed


def test_remove_deletes_a_file_that_held_only_ours(hooks_file):
    installer = droid.installer()
    installer.install(None, 450)
    installer.remove(None)
    assert not hooks_file.exists()
    assert installer.status_lines(None, 450)[:3] == ["Status: NotInstalled", f"Config: {hooks_file}",
                                                    "Config exists: False"]


@pytest.mark.parametrize("text", ['{"Stop": {"hooks": []}}', '{"PreToolUse": "x"}', "[1, 2]", "{not json"])
def test_hostile_files_are_refused_and_left_as_they_are(hooks_file, text):
    hooks_file.parent.mkdir(parents=True)
    hooks_file.write_text(text)
    installer = droid.installer()
    with pytest.raises(InstallError):
        installer.install(None, 450)
    with pytest.raises(InstallError):
        installer.remove(None)
    assert hooks_file.read_text() == text
