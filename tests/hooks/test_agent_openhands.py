"""OpenHands CLI 1.16 (issue 35.2; AGENT_CLIS_NEW.md section 7): the payloads below are the ones the real CLI sent
here (``event_type``, ``session_id``, ``working_dir``, ``metadata``); the mapping and the outputs through
``run_hook``, the ancestry rules, and the installer of ``~/.openhands/hooks.json`` in each shape OpenHands reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import openhands
from lidguard.agents.ancestry import matches_provider
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import InstallError
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

SESSION = "65cc585e-b468-489e-9ff2-a59ffe9005ab"
COMMON = {"tool_name": None, "tool_input": None, "tool_response": None, "message": None, "session_id": SESSION,
          "working_dir": "/tmp/work", "metadata": {}}
TOOL_INPUT = {"command": "echo hello", "is_input": False, "timeout": None, "reset": False, "kind": "TerminalAction"}
TOOL_RESPONSE = {"content": [{"cache_prompt": False, "type": "text", "text": "hello"}], "is_error": False,
                 "command": "echo hello", "exit_code": 0, "kind": "TerminalObservation"}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, payload: dict[str, Any] | bytes, **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    data = payload if isinstance(payload, bytes) else json.dumps({**COMMON, **payload}).encode()
    output = run_hook("openhands", [], data, environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_a_prompt_starts_the_session_named_by_event_type(stub_environment):
    [message], output = _run(stub_environment, {"event_type": "UserPromptSubmit",
                                                "message": "run echo hello and then say hi"})
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "OpenHands", SESSION)
    assert message["InputPromptPreview"] == "run echo hello and then say hi"
    assert message["WatchedProcessIdentifier"] == 4242 and output is None


@pytest.mark.parametrize(("event", "state"), [("PreToolUse", "Running"), ("PostToolUse", "Finished")])
def test_tool_use_is_activity_paired_by_the_tool_name(stub_environment, event, state):
    payload = {"event_type": event, "tool_name": "terminal", "tool_input": TOOL_INPUT}
    if event == "PostToolUse":
        payload["tool_response"] = TOOL_RESPONSE
    [message], output = _run(stub_environment, payload)
    assert message["Command"] == "mark-session-active" and output is None
    assert (message["ToolCallId"], message["ToolCallState"]) == ("tool:terminal", state)
    assert message["SessionStateReason"] == f"{event}:terminal"


def test_stop_ends_the_turn_and_continues_with_decision_deny(stub_environment):
    [message], output = _run(stub_environment, {"event_type": "Stop", "metadata": {"reason": "agent_finished"}},
                             settings=ON, reply=REPLIED)
    assert output == {"decision": "deny", "reason": "now run the tests"}  # "block" is not an OpenHands word
    assert message["Command"] == "stop" and message["WaitForFollowUp"] is True and message["IsTurnEnd"] is True
    assert message["SessionEndReason"] == "Stop:agent_finished" and message["IsProviderSessionEnd"] is True
    assert message["StopHookActive"] is False  # no conversation events: not a continued Stop


def test_stop_without_ask_before_sleep_prints_nothing(stub_environment):
    [message], output = _run(stub_environment, {"event_type": "Stop", "metadata": {"reason": "agent_finished"}})
    assert output is None and "WaitForFollowUp" not in message and message["IsTurnEnd"] is True


def _message(source: str, text: str) -> dict[str, Any]:
    return {"kind": "MessageEvent", "source": source, "llm_message": {"role": "user" if source != "agent" else
                                                                      "assistant",
                                                                      "content": [{"type": "text", "text": text}]}}


def _events(home: Path, *events: dict[str, Any] | bytes, session: str = SESSION) -> Path:
    folder = home / ".openhands" / "conversations" / session.replace("-", "") / "events"
    folder.mkdir(parents=True)
    for index, event in enumerate(events):
        data = event if isinstance(event, bytes) else json.dumps(event).encode()
        (folder / f"event-{index:05d}-{index:08x}-0000-0000-0000-000000000000.json").write_bytes(data)
    return folder


ACTION = {"kind": "ActionEvent", "source": "agent", "tool_name": "terminal"}
FEEDBACK = _message("environment", "[Stop hook feedback] now run the tests")


@pytest.mark.parametrize(("events", "continued"), [
    ((_message("user", "run echo"), ACTION, _message("agent", "done"), FEEDBACK, ACTION, _message("agent", "ok")),
     True),
    ((_message("user", "run echo"), ACTION, _message("agent", "done")), False),
    ((FEEDBACK, _message("agent", "ok"), _message("user", "next task"), _message("agent", "done")), False),
    ((_message("environment", "something else"), _message("agent", "ok")), False),
    ((FEEDBACK, b"{not json", b"[1]", _message("agent", "ok")), True),  # garbage is skipped, never trusted
    ((), False),
])
def test_a_continued_stop_is_told_from_the_conversation_events(stub_environment, isolated_home, events, continued):
    _events(isolated_home, *events)
    [message], _ = _run(stub_environment, {"event_type": "Stop", "metadata": {"reason": "agent_finished"}})
    assert message["StopHookActive"] is continued


def test_the_event_files_are_read_bounded_and_never_through_a_fifo_or_symlink(isolated_home, monkeypatch):
    import os

    folder = _events(isolated_home, FEEDBACK)
    user = _message("user", "a newer prompt")  # read, any of these would end the search with False
    os.mkfifo(folder / "event-00001-fifo.json")
    (folder / "event-00002-big.json").write_text(json.dumps({**user, "pad": "x" * openhands.MAX_EVENT_BYTES}))
    (isolated_home / "elsewhere.json").write_text(json.dumps(user))
    (folder / "event-00003-link.json").symlink_to(isolated_home / "elsewhere.json")
    assert openhands.continued_stop(SESSION) is True  # the FIFO, the oversized file and the symlink were passed by
    monkeypatch.setenv("OPENHANDS_CONVERSATIONS_DIR", str(isolated_home / "elsewhere"))
    assert openhands.continued_stop(SESSION) is False
    for hostile in ("../../etc", "a/b", "x" * 65, ""):
        assert openhands.continued_stop(hostile) is False


def test_the_conversation_is_found_under_the_hooks_home_not_the_answering_processs(stub_environment, isolated_home,
                                                                                   tmp_path):
    """The runtime answering the native hook client (issue 36) passes the client's environment."""
    _events(tmp_path, FEEDBACK, _message("agent", "ok"))  # under another HOME than this process's
    runtime, environment = stub_environment()
    environment.environ = {"HOME": str(tmp_path)}
    payload = {**COMMON, "event_type": "Stop", "metadata": {"reason": "agent_finished"}}
    run_hook("openhands", [], json.dumps(payload).encode(), environment)
    [(message, _, _)] = runtime.requests
    assert message["StopHookActive"] is True
    assert openhands.continued_stop(SESSION) is False  # this process's HOME holds no such conversation


def test_only_the_newest_events_are_read(isolated_home):
    _events(isolated_home, FEEDBACK, *[ACTION] * openhands.MAX_EVENT_FILES)
    assert openhands.continued_stop(SESSION) is False


def test_the_scan_stops_at_its_byte_budget(isolated_home):
    observation = json.dumps({"kind": "ObservationEvent", "source": "environment", "output": "x" * 200_000}).encode()
    count = openhands.MAX_SCAN_BYTES // len(observation) + 1
    assert count < openhands.MAX_EVENT_FILES
    _events(isolated_home, FEEDBACK, *[observation] * count)
    assert openhands.continued_stop(SESSION) is False
    _events(isolated_home, FEEDBACK, *[observation] * (count - 2), session=SESSION.replace("6", "7"))
    assert openhands.continued_stop(SESSION.replace("6", "7")) is True


def test_a_stop_without_a_reason_is_still_a_stop(stub_environment):
    [message], _ = _run(stub_environment, {"event_type": "Stop", "metadata": "garbage"})
    assert message["Command"] == "stop" and message["SessionEndReason"] == "Stop"


def test_session_end_ends_the_session_and_never_waits(stub_environment):
    [message], output = _run(stub_environment, {"event_type": "SessionEnd"}, settings=ON, reply=REPLIED)
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is True and output is None
    assert "IsTurnEnd" not in message and "WaitForFollowUp" not in message


@pytest.mark.parametrize("payload", [
    {"event_type": "SessionStart"},  # not installed: the TUI sends it at launch
    {"event_type": "Notification"},
    {"event_type": 7},
    {"event_type": None},
    {"hook_event_name": "UserPromptSubmit", "event_type": None, "message": "hi"},  # not the field OpenHands uses
])
def test_other_or_malformed_events_are_only_logged(stub_environment, payload):
    messages, output = _run(stub_environment, payload)
    assert messages == [] and output is None


@pytest.mark.parametrize("data", [b"", b"not json", b"[1, 2]", b'{"event_type": "Stop"', b"\xff\xfe",
                                  b'{"event_type": "Stop", "session_id": "' + b"x" * (2 * 1024 * 1024) + b'"}'])
def test_bad_input_prints_nothing_and_sends_nothing(stub_environment, data):
    messages, output = _run(stub_environment, data)
    assert messages == [] and output is None


def test_a_payload_without_a_session_falls_back_to_the_folder(stub_environment):
    [message], _ = _run(stub_environment, {"event_type": "UserPromptSubmit", "session_id": None, "message": "x"})
    assert message["SessionIdentifier"].startswith("OpenHands:")


@pytest.mark.parametrize(("name", "exe", "cmdline", "expected"), [
    ("openhands", "/root/.pyenv/versions/3.12.1/bin/python3.12",
     ("/v/bin/python3", "/v/bin/openhands", "--headless", "--override-with-envs"), True),
    ("python3", "/usr/bin/python3.12", ("python3", "/home/u/.local/bin/openhands", "-t", "x"), True),
    ("python3", "/usr/bin/python3.12", ("python3", "-m", "openhands"), False),
    ("python3", "/usr/bin/python3.12", ("python3", "server.py", "openhands"), False),
    ("sh", "/usr/bin/dash", ("/bin/sh", "-c", "openhands --headless"), False),
    ("bash", "/usr/bin/bash", ("bash", "-c", "tmux -Lopenhands new-session"), False),
])
def test_ancestry_owner_rules(name, exe, cmdline, expected):
    assert matches_provider(ProcessInfo(10, 1, name, exe, cmdline), "openhands") is expected


# -- the installer ----------------------------------------------------------------------------------------
HANDLER_KEYS = {"type", "command", "timeout"}  # what OpenHands' HookDefinition reads (no statusMessage)


@pytest.fixture
def hooks_file(isolated_home: Path) -> Path:
    return isolated_home / ".openhands" / "hooks.json"


def test_install_writes_the_hooks_wrapper_with_only_accepted_keys(hooks_file):
    installer = openhands.installer()
    result = installer.install(None, 450)
    assert result.changed and installer.path(None) == hooks_file
    root = json.loads(hooks_file.read_text())
    assert list(root) == ["hooks"] and list(root["hooks"]) == list(openhands.EVENTS)
    for event, groups in root["hooks"].items():
        [group] = groups
        assert set(group) == {"matcher", "hooks"} and group["matcher"] == "*"
        [handler] = group["hooks"]
        assert set(handler) == HANDLER_KEYS and handler["command"].endswith("openhands-hook")
        assert handler["timeout"] == (450 if event == "Stop" else 30)
    assert hooks_file.stat().st_mode & 0o777 == 0o600
    assert not installer.install(None, 450).changed
    lines = installer.status_lines(None, 450)
    assert lines[0] == "Status: Installed" and "Stop: Installed" in lines
    assert installer.status_lines(None, 600)[0] == "Status: NeedsUpdate"


def test_install_and_remove_leave_the_users_hooks_alone(hooks_file):
    hooks_file.parent.mkdir(parents=True)
    user = {"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "./guard.sh", "timeout": 5}]}],
                      "SessionStart": [{"hooks": [{"command": "./hello.sh"}]}]}}
    hooks_file.write_text(json.dumps(user, indent=4))
    installer = openhands.installer()
    installer.install(None, 450)
    root = json.loads(hooks_file.read_text())
    assert root["hooks"]["PreToolUse"][0] == user["hooks"]["PreToolUse"][0] and len(root["hooks"]["PreToolUse"]) == 2
    assert root["hooks"]["SessionStart"] == user["hooks"]["SessionStart"]
    assert hooks_file.read_text().startswith('{\n    "hooks"')  # the file's own indent
    result = installer.remove(None)
    assert result.changed and json.loads(hooks_file.read_text()) == user
    assert not installer.remove(None).changed


@pytest.mark.parametrize(("user_key", "expected"), [("pre_tool_use", "user_prompt_submit"),
                                                    ("PreToolUse", "UserPromptSubmit")])
def test_a_file_with_its_events_at_the_top_level_keeps_that_shape_and_spelling(hooks_file, user_key, expected):
    """No "hooks" wrapper: OpenHands would then read only the wrapper and drop the user's top-level events."""
    hooks_file.parent.mkdir(parents=True)
    user = {user_key: [{"matcher": "*", "hooks": [{"command": "./audit.sh"}]}]}
    hooks_file.write_text(json.dumps(user))
    installer = openhands.installer()
    installer.install(None, 450)
    root = json.loads(hooks_file.read_text())
    assert "hooks" not in root and expected in root and len(root[user_key]) == 2
    snake = user_key == "pre_tool_use"
    assert all((key == key.lower()) is snake for key in root)  # never both spellings of one event
    assert installer.status_lines(None, 450)[0] == "Status: Installed"
    installer.remove(None)
    assert json.loads(hooks_file.read_text()) == user


def test_remove_deletes_a_file_that_held_only_ours(hooks_file):
    installer = openhands.installer()
    installer.install(None, 450)
    result = installer.remove(None)
    assert not hooks_file.exists() and any("Deleted" in note for note in result.notes)
    assert installer.status_lines(None, 450)[:3] == ["Status: NotInstalled", f"Config: {hooks_file}",
                                                    "Config exists: False"]


def test_status_warns_about_a_key_openhands_refuses(hooks_file):
    hooks_file.parent.mkdir(parents=True)
    hooks_file.write_text(json.dumps({"hooks": {"Notification": []}}))
    lines = openhands.installer().status_lines(None, 450)
    assert any(line.startswith("Warning: Notification is not an OpenHands hook event") for line in lines)


def test_a_project_file_without_ours_is_named_in_status(hooks_file, tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / ".openhands").mkdir(parents=True)
    (project / ".openhands" / "hooks.json").write_text('{"hooks": {}}')
    monkeypatch.chdir(project)
    monkeypatch.delenv("OPENHANDS_WORK_DIR", raising=False)
    installer = openhands.installer()
    result = installer.install(None, 450)
    assert any("not merged" in note for note in result.notes)
    assert any(line.startswith("Note:") and "not merged" in line for line in installer.status_lines(None, 450))


@pytest.mark.parametrize("text", ['{"hooks": []}', '{"hooks": {"Stop": {"command": "x"}}}',
                                  '{"stop": "x"}', "[1, 2]", "{not json"])
def test_hostile_files_are_refused_and_left_as_they_are(hooks_file, text):
    hooks_file.parent.mkdir(parents=True)
    hooks_file.write_text(text)
    installer = openhands.installer()
    with pytest.raises(InstallError):
        installer.install(None, 450)
    with pytest.raises(InstallError):
        installer.remove(None)
    assert hooks_file.read_text() == text
