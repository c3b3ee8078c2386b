"""Event mapping per provider on the payloads the real CLIs sent (AGENT_CLIS.md), in-process with a stub
runtime: which request goes out, with which fields, and what the hook prints."""

from __future__ import annotations

import json

import pytest

from lidguard.hooks.eventlog import KEEP_LINES, TRIM_AT_BYTES, HookEventLog, format_line, hook_log_path
from lidguard.hooks.outputs import DENY_MESSAGE
from lidguard.hooks.runner import ASK_REASON, run_hook
from lidguard.platform.paths import resolve_paths

from .conftest import VALID_OUTPUTS

CLAUDE = {"session_id": "5a0b6c61", "transcript_path": "/h/.claude/projects/x/5a0b6c61.jsonl", "cwd": "/w/app",
          "permission_mode": "default"}
CODEX = {"session_id": "01a22a59", "transcript_path": "/h/.codex/sessions/r.jsonl", "cwd": "/w/app",
         "model": "fake-model", "turn_id": "t1"}
COPILOT = {"sessionId": "f28fedc1", "timestamp": 1796007164271, "cwd": "/w/app"}
OPENCODE = {"sessionID": "ses_dd5a", "cwd": "/w/app", "pid": 1}
# AGENT_CLIS_MORE.md 1.3 / 2.3
GEMINI = {"session_id": "df352e2f", "transcript_path": "/h/.gemini/tmp/proj/chats/session-df352e2f.jsonl",
          "cwd": "/w/app", "timestamp": "2026-11-30T13:12:00Z"}
QWEN = {"session_id": "9c1f", "transcript_path": "/h/.qwen/projects/-w-app/chats/9c1f.jsonl", "cwd": "/w/app",
        "permission_mode": "yolo", "prompt_id": "9c1f########0"}


def run(provider, payload, stub_environment, *args, settings=None, **stub):
    runtime, environment = stub_environment(settings=settings, **stub)
    output = run_hook(provider, list(args), json.dumps(payload).encode(), environment)
    return runtime, output


def only_request(runtime):
    assert len(runtime.requests) == 1, runtime.commands()
    return runtime.requests[0]


def test_claude_prompt_starts_the_session_with_prompt_settings_and_the_agent(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "UserPromptSubmit", "prompt": "run echo hello" + "x" * 5000}
    runtime, output = run("claude", payload, stub_environment, settings={"WatchParentProcess": True, "A": 1})
    message, auto_start, _ = only_request(runtime)
    assert output is None and auto_start
    assert message["Command"] == "start" and message["Provider"] == "Claude"
    assert message["SessionIdentifier"] == "5a0b6c61" and message["WorkingDirectory"] == "/w/app"
    assert message["TranscriptPath"] == CLAUDE["transcript_path"]
    assert message["WatchedProcessIdentifier"] == 4242
    assert message["HasSettings"] is True and message["Settings"] == {"WatchParentProcess": True, "A": 1}
    assert message["InputPromptPreview"].startswith("run echo hello") and len(message["InputPromptPreview"]) == 2048


def test_watch_parent_process_off_sends_no_process(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "UserPromptSubmit", "prompt": "p"}
    runtime, _ = run("claude", payload, stub_environment, settings={"WatchParentProcess": False})
    assert only_request(runtime)[0]["WatchedProcessIdentifier"] == 0


@pytest.mark.parametrize(("event", "extra", "command", "reason"), [
    ("PreToolUse", {"tool_name": "Bash"}, "mark-session-active", "PreToolUse:Bash"),
    ("PostToolUse", {"tool_name": "Bash"}, "mark-session-active", "PostToolUse:Bash"),
    ("PostToolUseFailure", {"tool_name": "Bash"}, "mark-session-active", "PostToolUseFailure:Bash"),
    ("Notification", {"notification_type": "permission_prompt"}, "mark-session-softlocked", "permission_prompt"),
    ("Notification", {"notification_type": "elicitation_dialog"}, "mark-session-softlocked", "elicitation_dialog"),
    ("Notification", {"notification_type": "elicitation_complete"}, "mark-session-active", "elicitation_complete"),
])
def test_claude_activity_and_soft_locks(stub_environment, event, extra, command, reason):
    runtime, output = run("claude", {**CLAUDE, "hook_event_name": event, **extra}, stub_environment)
    message, auto_start, timeout = only_request(runtime)
    assert (message["Command"], message["SessionStateReason"], auto_start, output) == (command, reason, False, None)
    assert timeout <= 2


@pytest.mark.parametrize("payload", [
    {"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion"},
    {"hook_event_name": "PreToolUse"},
    {"hook_event_name": "Notification", "notification_type": "auth_success"},  # idle_prompt soft-locks (35.3)
    {"hook_event_name": "SessionStart", "source": "startup"},
    {"hook_event_name": "MessageDisplay", "delta": "All done"},
    {"hook_event_name": "NoSuchEvent"},
])
def test_claude_events_that_only_log(stub_environment, payload):
    runtime, output = run("claude", {**CLAUDE, **payload}, stub_environment)
    assert runtime.requests == [] and output is None


def test_claude_stop_ends_the_provider_session_with_the_turn_fields(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "Stop", "stop_hook_active": True, "last_assistant_message": "All done"}
    runtime, output = run("claude", payload, stub_environment)
    message = only_request(runtime)[0]
    assert output is None
    assert (message["Command"], message["IsProviderSessionEnd"], message["SessionEndReason"]) == ("stop", True, "Stop")
    assert message["StopHookActive"] is True and message["LastAssistantMessage"] == "All done"


@pytest.mark.parametrize(("payload", "end", "reason"), [
    ({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, True, "SessionEnd:prompt_input_exit"),
    ({"hook_event_name": "StopFailure"}, False, "StopFailure"),
    ({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "is_interrupt": True}, False,
     "PostToolUseFailure:interrupt"),
])
def test_claude_other_stops(stub_environment, payload, end, reason):
    runtime, _ = run("claude", {**CLAUDE, **payload}, stub_environment)
    message = only_request(runtime)[0]
    assert (message["Command"], message["IsProviderSessionEnd"], message["SessionEndReason"]) == ("stop", end, reason)


@pytest.mark.parametrize(("provider", "payload", "args"), [
    ("claude", {**CLAUDE, "hook_event_name": "PermissionRequest", "tool_name": "Bash"}, ()),
    ("codex", {**CODEX, "hook_event_name": "PermissionRequest", "tool_name": "Bash"}, ()),
    ("copilot", {**COPILOT, "hookName": "permissionRequest", "toolName": "bash"}, ("--event", "permissionRequest")),
    ("opencode", {**OPENCODE, "id": "per_1", "permission": "bash"}, ("--event", "permission.asked")),
    ("qwen", {**QWEN, "hook_event_name": "PermissionRequest", "tool_name": "run_shell_command",
              "permission_mode": "default"}, ()),
])
@pytest.mark.parametrize("decision", ["Allow", "Deny", "Ask"])
def test_closed_lid_permission_decisions(stub_environment, provider, payload, args, decision):
    runtime, output = run(provider, payload, stub_environment, *args, lid="Closed", eligible=True,
                          decision=decision)
    if decision == "Ask":
        assert output is None
        assert runtime.commands() == ["status", "mark-session-softlocked"]
        assert runtime.requests[1][0]["SessionStateReason"] == ASK_REASON
        return
    assert runtime.commands() == ["status"]
    behavior = {"behavior": decision.lower(), **({"message": DENY_MESSAGE} if decision == "Deny" else {})}
    if provider == "claude" and decision == "Deny":
        behavior["interrupt"] = True
    expected = ({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behavior}}
                if provider in ("claude", "codex", "qwen") else behavior)
    assert output == expected and output in VALID_OUTPUTS[provider]


@pytest.mark.parametrize("stub", [
    {"lid": "Open", "eligible": False},
    {"lid": "Closed", "eligible": False},  # an external display still shows the session
    {"lid": "Unknown"},
    {"available": False},
    {"reply": ["not", "an", "object"]},
    {"raises": True},
])
def test_no_decision_unless_the_lid_is_closed_and_no_display_remains(stub_environment, stub):
    payload = {**CLAUDE, "hook_event_name": "PermissionRequest", "tool_name": "Bash"}
    runtime, output = run("claude", payload, stub_environment, decision="Allow", **stub)
    assert output is None and runtime.commands() == ["status"]


def test_without_the_runtime_field_the_reference_display_rule_applies(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "PermissionRequest"}
    _, output = run("claude", payload, stub_environment, lid="Closed", decision="Allow")  # count 0, no field
    assert output is not None


def test_codex_and_opencode_soft_lock_an_unanswered_permission(stub_environment):
    runtime, output = run("codex", {**CODEX, "hook_event_name": "PermissionRequest"}, stub_environment)
    assert output is None and runtime.commands() == ["status", "mark-session-softlocked"]
    assert runtime.requests[1][0]["SessionStateReason"] == "permission_prompt"
    runtime, _ = run("opencode", OPENCODE, stub_environment, "--event", "permission.asked")
    assert runtime.commands() == ["status", "mark-session-softlocked"]
    runtime, _ = run("codex", {**CODEX, "hook_event_name": "PermissionRequest"}, stub_environment, available=False)
    assert runtime.commands() == ["status"]  # a runtime that is down is not asked twice


def test_claude_elicitation_is_canceled_only_with_the_lid_closed(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "Elicitation"}
    _, output = run("claude", payload, stub_environment, lid="Closed", eligible=True)
    assert output == VALID_OUTPUTS["claude"][2]
    _, output = run("claude", payload, stub_environment, lid="Open", eligible=False)
    assert output is None


def test_copilot_ask_user_is_denied_with_the_lid_closed_and_never_counts_as_activity(stub_environment):
    payload = {**COPILOT, "toolName": "ask_user", "toolArgs": {}}
    runtime, output = run("copilot", payload, stub_environment, "--event", "preToolUse", lid="Closed", eligible=True)
    assert output == {"permissionDecision": "deny",
                      "permissionDecisionReason": "LidGuard denied this ask_user request because the lid is closed."}
    assert runtime.commands() == ["status"]
    runtime, output = run("copilot", payload, stub_environment, "--event", "preToolUse", lid="Open", eligible=False)
    assert output is None and runtime.commands() == ["status"]


@pytest.mark.parametrize(("args", "payload", "command", "field", "value"), [
    (("--event", "userPromptSubmitted"), {"prompt": "hi"}, "start", "InputPromptPreview", "hi"),
    (("--event", "UserPromptSubmit"), {"prompt": "hi"}, "start", "InputPromptPreview", "hi"),
    (("--event", "preToolUse"), {"toolName": "bash"}, "mark-session-active", "SessionStateReason", "preToolUse:bash"),
    (("--event", "postToolUse"), {"toolName": "bash"}, "mark-session-active", "SessionStateReason",
     "postToolUse:bash"),
    (("--event", "notification"), {"notificationType": "permission_prompt"}, "mark-session-softlocked",
     "SessionStateReason", "permission_prompt"),
    (("--event", "agentStop"), {"stopReason": "end_turn", "stop_hook_active": False}, "stop", "SessionEndReason",
     "agentStop:end_turn"),
    (("--event=sessionEnd",), {"reason": "complete"}, "stop", "SessionEndReason", "sessionEnd:complete"),
])
def test_copilot_events(stub_environment, args, payload, command, field, value):
    runtime, _ = run("copilot", {**COPILOT, **payload}, stub_environment, *args)
    message = only_request(runtime)[0]
    assert (message["Command"], message[field], message["SessionIdentifier"]) == (command, value, "f28fedc1")
    assert message["Provider"] == "GitHubCopilot"


@pytest.mark.parametrize("event", ["sessionStart", "preCompact", ""])  # errorOccurred ends a turn (35.3)
def test_copilot_events_that_only_log(stub_environment, event):
    runtime, _ = run("copilot", {**COPILOT, "source": "new", "initialPrompt": "p"}, stub_environment,
                     *(("--event", event) if event else ()))
    assert runtime.requests == []


def test_codex_events(stub_environment):
    runtime, _ = run("codex", {**CODEX, "hook_event_name": "UserPromptSubmit", "prompt": "go"}, stub_environment)
    assert only_request(runtime)[0]["Provider"] == "Codex"
    runtime, _ = run("codex", {**CODEX, "hook_event_name": "PreToolUse", "tool_name": "Bash"}, stub_environment)
    assert only_request(runtime)[0]["SessionStateReason"] == "PreToolUse:Bash"
    payload = {**CODEX, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "All done"}
    runtime, _ = run("codex", payload, stub_environment)
    message = only_request(runtime)[0]
    assert (message["SessionEndReason"], message["IsProviderSessionEnd"], message["LastAssistantMessage"]) == (
        "Stop", True, "All done")
    runtime, _ = run("codex", {**CODEX, "hook_event_name": "SessionEnd", "reason": "other"}, stub_environment)
    assert only_request(runtime)[0]["SessionEndReason"] == "SessionEnd"


def test_opencode_events(stub_environment):
    chat = {**OPENCODE, "message": {"role": "user"}, "parts": [{"type": "text", "text": "run echo hello"}]}
    runtime, _ = run("opencode", chat, stub_environment, "--event", "chat.message")
    message = only_request(runtime)[0]
    assert (message["Command"], message["Provider"], message["InputPromptPreview"]) == ("start", "OpenCode",
                                                                                        "run echo hello")
    runtime, _ = run("opencode", {**OPENCODE, "tool": "bash"}, stub_environment, "--event", "tool.execute.before")
    assert only_request(runtime)[0]["SessionStateReason"] == "tool.execute.before:bash"
    runtime, _ = run("opencode", {**OPENCODE, "reply": "once"}, stub_environment, "--event", "permission.replied")
    assert only_request(runtime)[0]["Command"] == "mark-session-active"
    runtime, _ = run("opencode", {**OPENCODE, "stop_hook_active": True}, stub_environment, "--event", "session.idle")
    message = only_request(runtime)[0]
    assert (message["Command"], message["StopHookActive"], message["SessionEndReason"]) == ("stop", True,
                                                                                          "session.idle")


def test_no_session_id_falls_back_to_provider_and_folder(stub_environment):
    runtime, _ = run("copilot", {"cwd": "/w/app/", "prompt": "p"}, stub_environment, "--event", "userPromptSubmitted")
    assert only_request(runtime)[0]["SessionIdentifier"] == "GitHubCopilot:/w/app"


def test_long_and_odd_fields_are_bounded_and_valid_text(stub_environment):
    payload = {"session_id": "s" * 9000, "cwd": "/w/" + "d" * 9000, "hook_event_name": "Stop",
               "last_assistant_message": "\ud800" + "m" * 40000, "transcript_path": "/t" * 5000}
    runtime, _ = run("claude", payload, stub_environment)
    message = only_request(runtime)[0]
    assert len(message["SessionIdentifier"]) <= 512 and message["TranscriptPath"] == ""
    assert len(message["WorkingDirectory"]) <= 4096 and message["LastAssistantMessage"].startswith("\ufffd")
    assert len(message["LastAssistantMessage"]) == 16384


def test_hook_event_log_lines(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "UserPromptSubmit", "prompt": "line1\nline2\tend"}
    run("claude", payload, stub_environment)
    lines = hook_log_path(resolve_paths().data_dir, "claude").read_text().splitlines()
    assert len(lines) == 2
    assert " kind=received event=UserPromptSubmit session=5a0b6c61 workingDirectory=/w/app " in lines[0]
    digest = _crc("line1\nline2\tend")
    assert "tool=<empty>" in lines[0] and lines[0].endswith(f"prompt=<15 chars crc32:{digest}>")
    assert "line1" not in "".join(lines)  # no prompt text by default (issue 19 item 5)
    assert " kind=runtime-result event=UserPromptSubmit " in lines[1]
    assert "command=start transcriptPath=/h/.claude/projects/x/5a0b6c61.jsonl succeeded=true" in lines[1]
    assert "activeSessions=1 message=ok" in lines[1]


def test_garbage_stdin_is_logged_and_prints_nothing(stub_environment):
    runtime, environment = stub_environment()
    for data in (b"", b"not json", b"[1,2]", b"\xff\xfe", b"{" * 5000, b" " * (1024 * 1024 + 1)):
        assert run_hook("codex", [], data, environment) is None
    assert runtime.requests == []
    lines = hook_log_path(resolve_paths().data_dir, "codex").read_text().splitlines()
    assert len(lines) == 6 and all("kind=message" in line and "Ignored the hook input" in line for line in lines)


def test_the_event_log_is_trimmed_to_its_latest_lines(tmp_path):
    log = HookEventLog(tmp_path / "claude-hook-events.log")
    log.event, log.session = "PreToolUse", "s"
    for index in range(4000):
        log.message(f"{index} " + "x" * 400)
    size = log.path.stat().st_size
    lines = log.path.read_text().splitlines()
    assert size <= TRIM_AT_BYTES and len(lines) < 4000  # about 1.9 MB were written
    assert lines[-1].split("message=")[1].startswith("3999 ") and log.failures == 0
    numbers = [int(line.split("message=")[1].split()[0]) for line in lines]
    assert numbers == list(range(numbers[0], 4000))  # the latest lines, in order, none cut
    log.path.write_bytes(b"old line\n" * (KEEP_LINES * 3) + b"x" * TRIM_AT_BYTES)
    log.message("after")
    assert len(log.path.read_text().splitlines()) <= KEEP_LINES


def test_a_log_that_cannot_be_written_never_fails_the_hook(tmp_path):
    (tmp_path / "claude-hook-events.log").mkdir()
    log = HookEventLog(tmp_path / "claude-hook-events.log")
    log.message("x")
    assert log.failures == 1
    assert format_line("received", "", "", "", [("k", "")], when="T") == (
        "T kind=received event=<empty> session=<empty> workingDirectory=<empty> k=<empty>\n")


def test_a_failing_crash_recovery_is_logged_and_the_event_still_goes_out(stub_environment):
    runtime, environment = stub_environment()

    def broken() -> None:
        raise RuntimeError("lid backup unreadable")

    environment.recover = broken
    run_hook("claude", [], json.dumps({**CLAUDE, "hook_event_name": "PreToolUse", "tool_name": "Bash"}).encode(),
             environment)
    assert runtime.commands() == ["mark-session-active"]
    assert "Crash recovery failed: RuntimeError: lid backup unreadable" in hook_log_path(
        resolve_paths().data_dir, "claude").read_text()


def test_gemini_turn_events(stub_environment):
    payload = {**GEMINI, "hook_event_name": "BeforeAgent", "prompt": "[tool] please run echo hello"}
    runtime, output = run("gemini", payload, stub_environment)
    message, auto_start, _ = only_request(runtime)
    assert (message["Command"], message["Provider"], message["InputPromptPreview"], auto_start, output) == (
        "start", "Gemini", "[tool] please run echo hello", True, None)
    assert (message["SessionIdentifier"], message["TranscriptPath"], message["WatchedProcessIdentifier"]) == (
        "df352e2f", GEMINI["transcript_path"], 4242)
    for event, tool in (("BeforeTool", "read_file"), ("AfterTool", "run_shell_command")):
        runtime, output = run("gemini", {**GEMINI, "hook_event_name": event, "tool_name": tool}, stub_environment)
        message = only_request(runtime)[0]
        assert (message["Command"], message["SessionStateReason"], output) == (
            "mark-session-active", f"{event}:{tool}", None)
    payload = {**GEMINI, "hook_event_name": "Notification", "notification_type": "ToolPermission"}
    runtime, _ = run("gemini", payload, stub_environment)
    assert only_request(runtime)[0]["SessionStateReason"] == "permission_prompt"
    payload = {**GEMINI, "hook_event_name": "AfterAgent", "prompt": "p", "prompt_response": "FINAL: done",
               "stop_hook_active": True}
    runtime, output = run("gemini", payload, stub_environment)
    message = only_request(runtime)[0]
    assert (message["Command"], message["IsProviderSessionEnd"], message["SessionEndReason"], output) == (
        "stop", True, "AfterAgent", None)
    assert message["StopHookActive"] is True and message["LastAssistantMessage"] == "FINAL: done"
    runtime, _ = run("gemini", {**GEMINI, "hook_event_name": "SessionEnd", "reason": "exit"}, stub_environment)
    assert only_request(runtime)[0]["SessionEndReason"] == "SessionEnd:exit"


@pytest.mark.parametrize("event", ["SessionStart", "BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress",
                                   "Stop", "UserPromptSubmit"])
def test_gemini_events_that_only_log(stub_environment, event):
    runtime, output = run("gemini", {**GEMINI, "hook_event_name": event, "prompt": "p"}, stub_environment)
    assert runtime.requests == [] and output is None


SHELL = {**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
         "tool_input": {"command": "touch x"}}
NODE = ("/usr/bin/node", "--max-old-space-size=12052", "/n/node_modules/.bin/gemini")


@pytest.mark.parametrize(("decision", "arguments", "payload", "denied"), [
    ("Deny", NODE, SHELL, True),
    ("Deny", (), {**SHELL, "tool_name": "write_file"}, True),
    ("Deny", (), {**SHELL, "tool_name": "list_files", "mcp_context": {"server_name": "x"}}, True),
    ("Deny", (*NODE, "-p", "--yolo"), SHELL, True),  # a prompt reading --yolo is no flag
    ("Deny", (*NODE, "--approval-mode", "auto_edit"), SHELL, True),
    ("Allow", NODE, SHELL, False),  # no hook can approve a tool in Gemini: nothing printed, the tool goes on
    ("Ask", NODE, SHELL, False),
    ("Deny", (*NODE, "--yolo", "-p", "x"), SHELL, False),  # the agent runs every tool unasked
    ("Deny", (*NODE, "-y"), SHELL, False),
    ("Deny", (*NODE, "--approval-mode=yolo"), SHELL, False),
    ("Deny", (*NODE, "--approval-mode", "auto_edit"), {**SHELL, "tool_name": "replace"}, False),
    ("Deny", (*NODE, "--allowed-tools", "read_file", "run_shell_command", "-i", "x"), SHELL, False),
    ("Deny", (*NODE, "--allowed-tools=write_file,run_shell_command"), SHELL, False),
    ("Deny", (*NODE, "--allowed-tools", "run_shell_command(git)", "-i", "x"), SHELL, True),  # only some commands
    ("Deny", (*NODE, "--allowed-tools", "write_file", "run_shell_command"), {**SHELL, "tool_name": "replace"}, True),
])
def test_gemini_before_tool_is_denied_only_when_gemini_would_ask_and_the_decision_is_deny(
        stub_environment, decision, arguments, payload, denied):
    runtime, output = run("gemini", payload, stub_environment, lid="Closed", eligible=True, decision=decision,
                          agent_arguments=arguments)
    if denied:
        assert output == VALID_OUTPUTS["gemini"][0] and runtime.commands() == ["status"]
    else:
        assert output is None and runtime.commands() == ["status", "mark-session-active"]
        assert runtime.requests[1][0]["SessionStateReason"] == f"BeforeTool:{payload['tool_name']}"


def test_gemini_confirmed_tools_are_activity_with_the_lid_open_and_ask_user_is_denied_closed(stub_environment):
    runtime, output = run("gemini", SHELL, stub_environment, lid="Open", eligible=False)
    assert output is None and runtime.commands() == ["status", "mark-session-active"]
    runtime, _ = run("gemini", SHELL, stub_environment, available=False)
    assert runtime.commands() == ["status"]  # a runtime that is down is not asked twice
    ask = {**GEMINI, "hook_event_name": "BeforeTool", "tool_name": "ask_user"}
    runtime, output = run("gemini", ask, stub_environment, lid="Closed", eligible=True)
    assert output == VALID_OUTPUTS["gemini"][1] and runtime.commands() == ["status"]


def test_qwen_events(stub_environment):
    payload = {**QWEN, "hook_event_name": "UserPromptSubmit", "prompt": "[tool] run", "submitted_prompt": "[tool] run"}
    runtime, _ = run("qwen", payload, stub_environment)
    message, auto_start, _ = only_request(runtime)
    assert (message["Command"], message["Provider"], message["InputPromptPreview"], auto_start) == (
        "start", "Qwen", "[tool] run", True)
    # Sent again with an empty prompt for every tool-result turn: activity, never a new start.
    runtime, _ = run("qwen", {**QWEN, "hook_event_name": "UserPromptSubmit", "prompt": ""}, stub_environment)
    message, auto_start, _ = only_request(runtime)
    assert (message["Command"], message["SessionStateReason"], auto_start) == (
        "mark-session-active", "UserPromptSubmit:tool-result", False)
    runtime, _ = run("qwen", {**QWEN, "hook_event_name": "PreToolUse", "tool_name": "run_shell_command"},
                     stub_environment)
    assert only_request(runtime)[0]["SessionStateReason"] == "PreToolUse:run_shell_command"
    payload = {**QWEN, "hook_event_name": "Notification", "notification_type": "permission_prompt"}
    runtime, _ = run("qwen", payload, stub_environment)
    assert only_request(runtime)[0]["Command"] == "mark-session-softlocked"
    payload = {**QWEN, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "FINAL: ok",
               "background_tasks": [], "context_usage": 5e-05}
    runtime, output = run("qwen", payload, stub_environment)
    message = only_request(runtime)[0]
    assert (message["Command"], message["IsProviderSessionEnd"], message["LastAssistantMessage"], output) == (
        "stop", True, "FINAL: ok", None)
    for payload in ({"hook_event_name": "Notification", "notification_type": "idle_prompt"},
                    {"hook_event_name": "PostToolBatch", "tool_calls": []},
                    {"hook_event_name": "MessageDisplay", "is_final": True},
                    {"hook_event_name": "InstructionsLoaded"}):
        runtime, output = run("qwen", {**QWEN, **payload}, stub_environment)
        assert runtime.requests == [] and output is None


def _crc(text: str) -> str:
    import zlib

    return f"{zlib.crc32(text.encode()):08x}"


def test_log_full_text_writes_the_prompt_for_debugging(stub_environment):
    payload = {**CLAUDE, "hook_event_name": "UserPromptSubmit", "prompt": "secret plan"}
    run("claude", payload, stub_environment, settings={"LogFullText": True})
    [received] = [line for line in hook_log_path(resolve_paths().data_dir, "claude").read_text().splitlines()
                  if " kind=received " in line]
    assert received.endswith("prompt=secret plan")


@pytest.mark.parametrize("value", [None, "true", 1, [True], {"x": 1}])
def test_only_a_true_log_full_text_writes_text(stub_environment, value):
    payload = {**CLAUDE, "hook_event_name": "UserPromptSubmit", "prompt": "secret \ud800 plan"}
    run("claude", payload, stub_environment, settings={"LogFullText": value})
    text = hook_log_path(resolve_paths().data_dir, "claude").read_text()
    assert "secret" not in text and "prompt=<" in text


def test_a_continuation_reply_is_logged_as_length_and_hash(stub_environment, monkeypatch):
    from lidguard.hooks import runner

    log = hook_log_path(resolve_paths().data_dir, "claude")
    output = {"decision": "block", "reason": "deploy the private build now"}
    original = runner._Run.run

    def replying(self, action):  # what a blocking Stop does when the user replied (the engine is a generator)
        yield from original(self, action)
        self.output = output

    monkeypatch.setattr(runner._Run, "run", replying)
    run("claude", {**CLAUDE, "hook_event_name": "Stop"}, stub_environment)
    assert "private build" not in log.read_text() and "output=<" in log.read_text()
    run("claude", {**CLAUDE, "hook_event_name": "Stop"}, stub_environment, settings={"LogFullText": True})
    assert "deploy the private build now" in log.read_text()


def test_stdin_held_open_after_a_whole_object_is_read_without_waiting_for_the_idle_bound():
    # Issue 39 item 4, in-process: a complete JSON object with nothing more waiting ends the read at once
    # (the idle and total bounds here are far beyond what the read may take).
    import os
    import time

    from lidguard.hooks.payload import read_stdin

    reader, writer = os.pipe()
    try:
        os.write(writer, b'{"session_id": "s", "nested": {"a": "}"}}')
        with open(reader, "rb", buffering=0, closefd=False) as stream:
            began = time.monotonic()
            data = read_stdin(stream, idle_seconds=60, total_seconds=120)
            assert time.monotonic() - began < 30
        assert data == b'{"session_id": "s", "nested": {"a": "}"}}'
        os.write(writer, b'{"partial": ')  # not whole: read until end of file
        os.close(writer)
        writer = -1
        with open(reader, "rb", buffering=0, closefd=False) as stream:
            assert read_stdin(stream, idle_seconds=60, total_seconds=120) == b'{"partial": '
    finally:
        os.close(reader)
        if writer >= 0:
            os.close(writer)
