"""Cline CLI 3.0.65 (AGENT_CLIS_NEW.md section 2; the payloads are the recorded ones): the mapping keyed by
``taskId`` from ``hookName``, no ask-before-sleep wait at TaskComplete (Cline drops its output), the ancestry
rule that skips the hub daemon, and the hook-file installer (one user-only executable file per event; the
user's own files are never touched)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import cline
from lidguard.agents.ancestry import matches_provider, resolve_agent_process
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import InstallError
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

TASK = "conv_1796321650279_1w5fsby"
COMMON = {"clineVersion": "", "timestamp": "2026-12-03T18:14:10.400Z", "taskId": TASK,
          "sessionContext": {"rootSessionId": "1796321649879_flien"}, "workspaceRoots": ["/work/project"],
          "workspaceInfo": {"rootPath": "/work/project", "hint": "project"}, "userId": "unknown",
          "agent_id": "agent_1796321650151_8gecnf", "parent_agent_id": None}
CALL = {"id": "call_fake0001", "name": "run_commands", "input": {"commands": ["echo hello"]}}
START = {"hookName": "agent_start", "taskStart": {"taskMetadata": {}}}
PRE_TOOL = {"hookName": "tool_call", "iteration": 1, "tool_call": CALL,
            "preToolUse": {"toolName": "run_commands", "parameters": {"commands": "[\"echo hello\"]"}}}
POST_TOOL = {"hookName": "tool_result", "iteration": 1,
             "tool_result": {**CALL, "output": [{"query": "echo hello", "result": "hello\n", "success": True}],
                             "durationMs": 27},
             "postToolUse": {"toolName": "run_commands", "success": True, "executionTimeMs": 27}}
COMPLETE = {"hookName": "agent_end", "iteration": 2, "turn": {"outputText": "All done: hello", "status": "completed"},
            "taskComplete": {"taskMetadata": {}}}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, payload: dict[str, Any], **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    output = run_hook("cline", [], json.dumps({**COMMON, **payload}).encode(), environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_task_start_starts_the_session_keyed_by_the_task_id(stub_environment):
    [message], output = _run(stub_environment, START)
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "Cline", TASK)
    assert message["WatchedProcessIdentifier"] == 4242 and output is None


def test_task_resume_starts_it_too(stub_environment):
    [message], _ = _run(stub_environment, {"hookName": "agent_resume", "taskResume": {"previousState": {}}})
    assert message["Command"] == "start"


@pytest.mark.parametrize(("payload", "state"), [(PRE_TOOL, "Running"), (POST_TOOL, "Finished")])
def test_tool_use_is_activity_paired_by_the_call_id(stub_environment, payload, state):
    [message], output = _run(stub_environment, payload)
    assert message["Command"] == "mark-session-active" and output is None
    assert (message["ToolCallId"], message["ToolCallState"]) == ("call_fake0001", state)
    assert message["SessionStateReason"] == f"{payload['hookName']}:run_commands"


def test_a_tool_call_without_an_id_pairs_by_its_name(stub_environment):
    [message], _ = _run(stub_environment, {"hookName": "tool_call", "tool_call": {"name": "read_files"}})
    assert message["ToolCallId"] == "tool:read_files"


def test_task_complete_ends_the_turn_and_never_waits_for_a_follow_up(stub_environment):
    """Ask-before-sleep is on and a reply is waiting, but Cline ignores TaskComplete's output: no wait,
    no output that would claim to continue the turn."""
    [message], output = _run(stub_environment, COMPLETE, settings=ON, reply=REPLIED)
    assert output is None and "WaitForFollowUp" not in message
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is True and message["IsTurnEnd"] is True
    assert message["SessionEndReason"] == "TaskComplete" and message["LastAssistantMessage"] == "All done: hello"


@pytest.mark.parametrize(("payload", "reason"), [
    ({"hookName": "agent_error", "error": {"name": "Error", "message": "rate limited"}}, "TaskError"),
    ({"hookName": "agent_abort", "reason": "user cancelled", "taskCancel": {}}, "TaskCancel"),
])
def test_an_error_or_a_cancel_ends_only_the_turn(stub_environment, payload, reason):
    [message], output = _run(stub_environment, payload, settings=ON, reply=REPLIED)
    assert output is None and "WaitForFollowUp" not in message
    assert message["SessionEndReason"] == reason
    assert message["IsProviderSessionEnd"] is False and message["IsTurnEnd"] is True


def test_session_shutdown_ends_the_session(stub_environment):
    [message], output = _run(stub_environment, {"hookName": "session_shutdown", "reason": "exit"})
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is True and output is None
    assert message["SessionEndReason"] == "SessionShutdown:exit" and "IsTurnEnd" not in message


def test_a_subagent_is_a_session_of_its_own(stub_environment):
    [message], _ = _run(stub_environment, {**START, "taskId": "conv_sub_1", "agent_id": "agent_sub",
                                           "parent_agent_id": COMMON["agent_id"]})
    assert message["SessionIdentifier"] == "conv_sub_1"


def test_without_a_task_id_the_session_is_the_folder(stub_environment):
    runtime, environment = stub_environment()
    payload = {key: value for key, value in {**COMMON, **START}.items() if key != "taskId"}
    run_hook("cline", [], json.dumps(payload).encode(), environment)
    [(message, _, _)] = runtime.requests
    assert message["SessionIdentifier"] == f"Cline:{message['WorkingDirectory']}"


@pytest.mark.parametrize("payload", [
    {"hookName": "pre_compact"}, {"hookName": "unknown"}, {"hookName": ""}, {"hookName": 7},
    {"hookName": "tool_call", "tool_call": "not an object"}, {"hookName": "tool_call", "tool_call": {"id": "x"}},
])
def test_other_or_odd_events_are_only_logged(stub_environment, payload):
    messages, output = _run(stub_environment, payload)
    assert messages == [] and output is None


@pytest.mark.parametrize("stdin", [b"", b"[1, 2]", b"{not json", b"\xff\xfe", b'"agent_start"'])
def test_bad_input_prints_nothing_and_tells_the_runtime_nothing(stub_environment, stdin):
    runtime, environment = stub_environment()
    assert run_hook("cline", [], stdin, environment) is None
    assert runtime.requests == []


def test_a_closed_lid_decision_is_never_printed(stub_environment):
    assert cline.permission_output("Deny") is None and cline.permission_output("Allow") is None
    _, output = _run(stub_environment, PRE_TOOL, lid="Closed", eligible=True)
    assert output is None


# -- ancestry: the hook file is exec'd by cline itself; the hub daemon is never the agent -----------------------
EXE = "/home/u/.npm/lib/node_modules/@cline/cli-linux-x64/bin/cline"
HUB = ProcessInfo(30, 1, "cline", EXE, (EXE, "--cline-hub-daemon", "--cwd", "/w", "--host", "127.0.0.1", "--port",
                                        "25463", "--pathname", "/hub"))


@pytest.mark.parametrize(("process", "expected"), [
    (ProcessInfo(20, 10, "cline", EXE, ("/home/u/.npm/bin/cline", "run echo hello")), True),
    (ProcessInfo(20, 10, "cline", EXE, ("cline", "-i")), True),
    (HUB, False),
    (ProcessInfo(20, 10, "node", "/usr/bin/node", ("node", "/srv/cline-dashboard.js")), False),
    (ProcessInfo(20, 10, "bash", "/usr/bin/bash", ("bash", "-c", "cline run")), False),
])
def test_ancestry_owner_rules(process, expected):
    assert matches_provider(process, "cline") is expected


def test_the_watched_process_is_the_hooks_parent_never_the_hub_daemon():
    hook = ProcessInfo(40, 20, "python3", "/usr/bin/python3.11", ("/usr/bin/python3", "/venv/bin/lidguard",
                                                                    "cline-hook"))
    agent = ProcessInfo(20, 10, "cline", EXE, ("/home/u/.npm/bin/cline", "run echo hello"))
    assert resolve_agent_process([hook, agent, ProcessInfo(10, 1, "bash", "/usr/bin/bash", ("bash",))],
                                 "cline") == agent
    assert resolve_agent_process([hook, HUB], "cline") is None


# -- the installer --------------------------------------------------------------------------------------------
@pytest.fixture
def hooks_folder(isolated_home: Path) -> Path:
    return isolated_home / ".cline" / "hooks"


def _files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(folder.iterdir())} if folder.exists() else {}


def test_install_writes_one_user_only_executable_file_per_event_and_is_idempotent(hooks_folder):
    installer = cline.installer()
    result = installer.install(None, 450)
    assert result.changed and result.config == hooks_folder and installer.config_root() == hooks_folder.parent
    assert sorted(_files(hooks_folder)) == sorted(cline.EVENTS)
    for event in cline.EVENTS:
        path = hooks_folder / event
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        shebang, marker, command = path.read_text().splitlines()
        assert shebang == "#!/bin/sh" and "lidguard" in marker
        assert command.startswith("exec ") and command.endswith(" cline-hook")
    assert not installer.install(None, 450).changed
    lines = installer.status_lines(None, 450)
    assert lines[:3] == ["Status: Installed", f"Config: {hooks_folder}", "Config exists: True"]
    assert "TaskComplete: Installed" in lines and any("cannot continue" in line for line in lines)


def test_the_hook_file_runs_lidguard_cline_hook(hooks_folder, tmp_path, monkeypatch):
    """The file ``exec``s exactly the hook command (a stand-in ``lidguard`` on PATH records its arguments)."""
    recorder = tmp_path / "bin" / "lidguard"
    recorder.parent.mkdir()
    recorder.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'argv'}\ncat > {tmp_path / 'stdin'}\n")
    recorder.chmod(0o755)
    monkeypatch.setattr("sys.argv", [str(recorder)])
    cline.installer().install(None, 450)
    import subprocess

    subprocess.run(["sh", str(hooks_folder / "TaskStart")], input=b'{"hookName":"agent_start"}', check=True,
                   timeout=30)
    assert (tmp_path / "argv").read_text() == "cline-hook\n"
    assert (tmp_path / "stdin").read_bytes() == b'{"hookName":"agent_start"}'


def test_a_changed_command_or_mode_needs_an_update_and_install_repairs_it(hooks_folder):
    installer = cline.installer()
    installer.install(None, 450)
    (hooks_folder / "TaskStart").chmod(0o755)
    (hooks_folder / "PreToolUse").write_text(f"#!/bin/sh\n{cline.MARKER}\nexec /old/venv/bin/lidguard cline-hook\n")
    lines = installer.status_lines(None, 450)
    assert lines[0] == "Status: NeedsUpdate"
    assert "TaskStart: NeedsUpdate" in lines and "PreToolUse: NeedsUpdate" in lines
    assert installer.install(None, 450).changed
    assert installer.status_lines(None, 450)[0] == "Status: Installed"
    assert stat.S_IMODE((hooks_folder / "TaskStart").stat().st_mode) == 0o700


def test_the_users_own_hook_files_are_left_alone(hooks_folder):
    hooks_folder.mkdir(parents=True)
    own = {"TaskStart": "#!/bin/sh\necho started >> ~/cline.log\n",
           "TaskComplete.py": "import sys\nprint('{}')\n",
           "PreToolUse": f"#!/bin/sh\n{cline.MARKER}\nexec lidguard cline-hook\necho and more\n",  # edited: theirs
           "TaskCancel": "#!/bin/sh\n# my own, without lidguard's marker\nexec lidguard cline-hook\n",
           "notes.txt": "mine"}
    for name, text in own.items():
        (hooks_folder / name).write_text(text)
        (hooks_folder / name).chmod(0o755)
    installer = cline.installer()
    installer.install(None, 450)
    files = _files(hooks_folder)
    assert {name: files[name] for name in own} == own
    assert {"TaskStart.sh", "PreToolUse.sh", "TaskCancel.sh", "TaskComplete"} <= set(files)  # ours beside theirs
    assert installer.status_lines(None, 450)[0] == "Status: Installed"
    result = installer.remove(None)
    assert result.changed and _files(hooks_folder) == own
    assert all(stat.S_IMODE((hooks_folder / name).stat().st_mode) == 0o755 for name in own)
    assert not installer.remove(None).changed
    assert installer.status_lines(None, 450)[0] == "Status: NotInstalled"


def test_a_symlink_named_like_a_hook_is_never_ours(hooks_folder, tmp_path):
    hooks_folder.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text(cline.hook_text())
    (hooks_folder / "TaskStart").symlink_to(target)
    installer = cline.installer()
    installer.install(None, 450)
    assert (hooks_folder / "TaskStart").is_symlink() and (hooks_folder / "TaskStart.sh").is_file()
    installer.remove(None)
    assert (hooks_folder / "TaskStart").is_symlink() and target.read_text() == cline.hook_text()
    assert not (hooks_folder / "TaskStart.sh").exists()


def test_both_names_taken_by_the_user_is_refused(hooks_folder):
    hooks_folder.mkdir(parents=True)
    (hooks_folder / "TaskStart").write_text("mine")
    (hooks_folder / "TaskStart.sh").write_text("mine too")
    with pytest.raises(InstallError, match="TaskStart"):
        cline.installer().install(None, 450)
    assert (hooks_folder / "TaskStart").read_text() == "mine"


def test_a_duplicate_of_ours_is_collapsed_into_one(hooks_folder):
    installer = cline.installer()
    installer.install(None, 450)
    (hooks_folder / "TaskStart.sh").write_text(cline.hook_text())
    assert installer.status_lines(None, 450)[0] == "Status: NeedsUpdate"
    installer.install(None, 450)
    assert not (hooks_folder / "TaskStart.sh").exists() and (hooks_folder / "TaskStart").exists()


def test_config_names_another_folder_such_as_a_workspaces_clinerules_hooks(isolated_home, tmp_path):
    folder = tmp_path / "project" / ".clinerules" / "hooks"
    installer = cline.installer()
    result = installer.install(folder, 450)
    assert result.config == folder and sorted(_files(folder)) == sorted(cline.EVENTS)
    assert not (isolated_home / ".cline" / "hooks").exists()
    assert installer.locked_files(folder) == [folder]
    installer.remove(folder)
    assert _files(folder) == {}


def test_cline_dir_moves_the_folder(isolated_home, monkeypatch, tmp_path):
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "cline-home"))
    installer = cline.installer()
    assert installer.install(None, 450).config == tmp_path / "cline-home" / "hooks"


def test_a_file_where_the_folder_should_be_is_refused(hooks_folder):
    hooks_folder.parent.mkdir(parents=True)
    hooks_folder.write_text("not a folder")
    for action in (lambda: cline.installer().install(None, 450), lambda: cline.installer().remove(None)):
        with pytest.raises(InstallError, match="not a folder"):
            action()
    assert hooks_folder.read_text() == "not a folder"


def test_status_warns_about_our_files_in_the_documents_folder_cline_also_reads(isolated_home):
    other = isolated_home / "Documents" / "Cline" / "Hooks"
    installer = cline.installer()
    installer.install(None, 450)
    installer.install(other, 450)
    lines = installer.status_lines(None, 450)
    assert any(line.startswith("Warning:") and str(other) in line and "twice" in line for line in lines), lines


def test_windows_is_refused_with_one_line(hooks_folder, monkeypatch):
    monkeypatch.setattr("lidguard.platform.host.host_os_name", lambda: "windows")
    with pytest.raises(InstallError, match="Windows"):
        cline.installer().install(None, 450)
    assert not hooks_folder.exists()


def test_the_registry_names_it_everywhere():
    from lidguard import installers, providers

    assert providers.parse_provider("cline-cli").value == "Cline"
    assert installers.parse_provider_word("cline") == "cline"
    assert installers.PROVIDERS["cline"].stop_timeout is False
    assert os.path.basename(installers.PROVIDERS["cline"].sub) == "cline-hook"
