"""Kilo Code CLI (issue 35.2; AGENT_CLIS_NEW.md section 3, payloads as the real 7.7.9 plugin sends them): the
mapping keyed by ``sessionID``, the closed-lid permission answer, ``session.idle``'s continuation, the plugin's
``pid`` hint, the ancestry names, bad input, and the shared OpenCode plugin written into Kilo's config folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import kilo, opencode
from lidguard.agents.ancestry import matches_provider
from lidguard.hooks.outputs import DENY_MESSAGE
from lidguard.hooks.runner import run_hook
from lidguard.installers.common import InstallError
from lidguard.installers.plugin_file import MARKER
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

SESSION = "ses_dc2e05ab5ffe46JI6Z7Iq1IAUy"
COMMON = {"sessionID": SESSION, "cwd": "/work/app", "pid": 21417}
ON = {"ClosedLidStopFollowUpWebhookUrl": "https://notify.example/api/webhooks/lidguard/s",
      "ClosedLidStopFollowUpDelaySeconds": 120, "PostStopSuspendDelaySeconds": 10}
REPLIED = {"Succeeded": True, "Message": "ok", "FollowUpOutcome": "Replied", "FollowUpReply": "now run the tests"}


def _run(stub_environment, event: str, payload: dict[str, Any] | bytes,
         **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    runtime, environment = stub_environment(**stub)
    data = payload if isinstance(payload, bytes) else json.dumps({**COMMON, "hook_event_name": event,
                                                                  **payload}).encode()
    output = run_hook("kilo", ["--event", event], data, environment)
    messages = [message for message, _, _ in runtime.requests]
    for message in messages:
        check_wire_message(message)
        parse_request(message)
    return messages, output


def test_chat_message_starts_the_session_keyed_by_its_session_id(stub_environment):
    [message], output = _run(stub_environment, "chat.message", {"prompt": '"run echo hello and then say hi"'})
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "KiloCode", SESSION)
    assert message["InputPromptPreview"] == '"run echo hello and then say hi"' and output is None
    assert message["WorkingDirectory"] == "/work/app"


@pytest.mark.parametrize(("event", "state"), [("tool.execute.before", "Running"), ("tool.execute.after", "Finished")])
def test_tools_are_activity_paired_by_call_id(stub_environment, event, state):
    [message], _ = _run(stub_environment, event, {"tool": "bash", "callID": "call_fake0007",
                                                  "args": {"command": "echo hello", "description": "Print hello"}})
    assert (message["Command"], message["SessionStateReason"]) == ("mark-session-active", f"{event}:bash")
    assert (message["ToolCallId"], message["ToolCallState"]) == ("call_fake0007", state)


def test_permission_replied_is_activity(stub_environment):
    [message], _ = _run(stub_environment, "permission.replied", {"permissionID": "per_1", "reply": "once"})
    assert message["Command"] == "mark-session-active"


@pytest.mark.parametrize("decision", ["Allow", "Deny"])
def test_a_permission_is_answered_with_the_lid_closed(stub_environment, decision):
    messages, output = _run(stub_environment, "permission.asked", {"id": "per_1", "permission": "bash"},
                            lid="Closed", eligible=True, decision=decision)
    assert [message["Command"] for message in messages] == ["status"]
    assert output == {"behavior": decision.lower(), **({"message": DENY_MESSAGE} if decision == "Deny" else {})}


def test_an_unanswered_permission_soft_locks_the_session(stub_environment):
    messages, output = _run(stub_environment, "permission.asked", {"id": "per_1", "permission": "bash"})
    assert output is None and [message["Command"] for message in messages] == ["status", "mark-session-softlocked"]
    assert messages[1]["SessionStateReason"] == "permission_prompt"


def test_session_idle_ends_the_turn_and_continues_with_the_reply(stub_environment):
    [message], output = _run(stub_environment, "session.idle", {"last_assistant_message": "All done: hello",
                                                                "stop_hook_active": False},
                             settings=ON, reply=REPLIED)
    assert output == {"decision": "block", "reason": "now run the tests"}
    assert (message["Command"], message["SessionEndReason"], message["WaitForFollowUp"]) == (
        "stop", "session.idle", True)
    assert message["LastAssistantMessage"] == "All done: hello" and message["StopHookActive"] is False


def test_the_stop_after_our_continuation_is_marked_and_drained_never_waits(stub_environment):
    [idle], _ = _run(stub_environment, "session.idle", {"stop_hook_active": True})
    assert idle["StopHookActive"] is True and idle["IsProviderSessionEnd"] is True
    [drained], output = _run(stub_environment, "session.drained", {"token": "6a44cf33"}, settings=ON, reply=REPLIED)
    assert (drained["Command"], drained["SessionEndReason"], output) == ("stop", "session.drained", None)
    assert "WaitForFollowUp" not in drained


@pytest.mark.parametrize("event", ["session.created", "session.status", "message.updated", "plugin.init", "x"])
def test_other_events_are_only_logged(stub_environment, event):
    messages, output = _run(stub_environment, event, {"status": {"type": "busy"}})
    assert messages == [] and output is None


def test_the_plugins_pid_is_the_hint_for_the_watched_process(stub_environment):
    hints: list[tuple[str, int]] = []
    runtime, environment = stub_environment()
    environment.agent_process = lambda provider, hint=0: hints.append((provider, hint)) or hint
    run_hook("kilo", ["--event", "chat.message"], json.dumps({**COMMON, "prompt": "p"}).encode(), environment)
    assert hints == [("kilo", 21417)] and runtime.requests[0][0]["WatchedProcessIdentifier"] == 21417


@pytest.mark.parametrize("data", [b"", b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe", b'{"sessionID": 5}',
                                  json.dumps({"sessionID": "s", "prompt": "\ud800"}).encode(),
                                  b'{"sessionID": "s", "pid": "21417", "callID": {"x": 1}, "tool": ["bash"]}'])
@pytest.mark.parametrize("event", ["chat.message", "tool.execute.before", "permission.asked", "session.idle"])
def test_bad_input_never_raises_and_prints_nothing_or_a_valid_answer(stub_environment, data, event):
    messages, output = _run(stub_environment, event, data, lid="Closed", eligible=True)
    assert output in (None, {"behavior": "deny", "message": DENY_MESSAGE})


@pytest.mark.parametrize(("name", "exe", "cmdline", "expected"), [
    ("kilo", "/n/node_modules/@kilocode/cli-linux-x64/bin/kilo", ("/n/node_modules/@kilocode/cli-linux-x64/bin/kilo",
                                                                 "run", "hi"), True),
    ("node", "/usr/bin/node", ("node", "/n/node_modules/@kilocode/cli/bin/kilo"), True),
    ("bash", "/usr/bin/bash", ("bash", "-c", "kilo run hi"), False),
    ("opencode", "/n/.bin/opencode", ("opencode",), False),
])
def test_ancestry_owner_rules(name, exe, cmdline, expected):
    assert matches_provider(ProcessInfo(10, 1, name, exe, cmdline), "kilo") is expected


# -- the installer: OpenCode's plugin, in Kilo's folder, calling kilo-hook --------------------------------
@pytest.fixture
def kilo_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("KILO_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(isolated_home / "cfg"))
    return isolated_home


def test_install_writes_the_shared_plugin_into_kilos_folder(kilo_home):
    installer = kilo.installer()
    result = installer.install(None, 430)
    plugin = kilo_home / "cfg" / "kilo" / "plugin" / "lidguard.js"
    assert result.changed and result.config == plugin and installer.config_root() == kilo_home / "cfg" / "kilo"
    text = plugin.read_text()
    assert MARKER in text and '"kilo-hook", "--event"' in text and "opencode-hook" not in text
    assert "--provider kilo" in text and result.message == "Installed the LidGuard Kilo Code plugin."
    assert text == installer.plugin_source() and text != opencode.installer().plugin_source()
    assert not installer.install(None, 430).changed
    lines = installer.status_lines(None, 430)
    assert lines[0] == "Status: Installed" and "session.idle: True" in lines
    assert installer.locked_files(None) == [plugin]
    assert installer.remove(None).changed and not plugin.exists()
    assert installer.status_lines(None, 430)[0] == "Status: NotInstalled"


def test_kilo_config_dir_wins(kilo_home, monkeypatch):
    monkeypatch.setenv("KILO_CONFIG_DIR", str(kilo_home / "kcfg"))
    assert kilo.installer().install(None, 430).config == kilo_home / "kcfg" / "plugin" / "lidguard.js"
    monkeypatch.setenv("KILO_CONFIG_DIR", "relative/dir")  # not an absolute folder: ignored
    assert kilo.installer().config_root() == kilo_home / "cfg" / "kilo"


def test_a_foreign_plugin_file_is_refused_and_left_alone(kilo_home):
    plugin = kilo_home / "cfg" / "kilo" / "plugin" / "lidguard.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({});\n")
    installer = kilo.installer()
    with pytest.raises(InstallError, match="Kilo Code plugin file"):
        installer.install(None, 430)
    with pytest.raises(InstallError):
        installer.remove(None)
    assert installer.status_lines(None, 430)[0] == "Status: Unknown"
    assert plugin.read_text() == "export const Mine = async () => ({});\n"


def test_hook_install_from_the_command_line(lidguard):
    for variable in ("XDG_CONFIG_HOME", "KILO_CONFIG_DIR"):
        lidguard.env.pop(variable, None)
    result = lidguard.run("hook-install", "--provider", "kilocode", check=True)
    plugin = lidguard.home / ".config" / "kilo" / "plugin" / "lidguard.js"
    assert "Provider: Kilo Code" in result.stdout and plugin.exists(), result.stdout
    status = lidguard.run("hook-status", "--provider", "kilo", check=True).stdout
    assert "Status: Installed" in status, status
