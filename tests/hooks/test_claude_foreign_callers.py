"""`lidguard claude-hook` run by another agent that loads Claude Code's hooks (issue 35.4): Copilot CLI and
Devin (a repository's .claude/settings.json), Grok Build (~/.claude/settings.json), Cursor. The caller is
told by the environment, then the payload's shape, then the ancestry; a caller with its own lidguard hook
installed (Copilot) is ignored so nothing counts twice, any other is attributed to itself."""

from __future__ import annotations

import json

import pytest

from lidguard.agents import claude
from lidguard.hooks.payload import Payload
from lidguard.hooks.runner import run_hook

from .conftest import run_hook_process

CLAUDE = {"session_id": "s1", "cwd": "/w", "transcript_path": "/w/t.jsonl", "hook_event_name": "Stop"}
CAMEL = {"sessionId": "s1", "cwd": "/w", "hookEventName": "UserPromptSubmit", "prompt": "go"}


@pytest.mark.parametrize(("env", "data", "ancestry", "caller"), [
    ({}, CLAUDE, None, ""),
    ({}, CLAUDE, ["copilot"], ""),  # a Claude payload never reads the ancestry
    ({"CURSOR_VERSION": "1.7.2"}, CAMEL, None, "Cursor"),
    ({"GROK_HOOK_EVENT": "Stop"}, CLAUDE, None, "Grok"),  # the environment wins over the payload
    ({"DEVIN_PROJECT_DIR": "/w"}, CAMEL, None, "Devin"),
    ({"CURSOR_VERSION": "", "GROK_HOOK_EVENT": "  "}, CLAUDE, None, ""),  # empty values say nothing
    ({}, {**CAMEL, "cursor_version": "1.7"}, None, "Cursor"),
    ({}, {**CAMEL, "conversation_id": "c1"}, None, "Cursor"),
    ({}, {**CAMEL, "toolArgs": "{}"}, None, "copilot"),
    ({}, {**CAMEL, "timestamp": 1704614400000}, None, "copilot"),
    ({}, {**CAMEL, "timestamp": "1704614400000"}, None, ""),  # not Copilot's integer milliseconds
    ({}, CAMEL, ["sh", "grok"], "Grok"),
    ({}, CAMEL, ["sh", "claude", "copilot"], ""),  # the nearest agent decides
    ({}, CAMEL, ["sh", "bash"], ""),
    ({}, CAMEL, lambda: iter([None, 7, "\udcff", "Cursor-Agent"]), "Cursor"),  # hostile names
    ({}, {"transcript_path": ["x"], "cursor_version": None, "toolArgs": ""}, None, ""),
])
def test_the_real_caller_table(env, data, ancestry, caller):
    reader = ancestry if callable(ancestry) else (None if ancestry is None else (lambda: ancestry))
    assert claude.real_caller(env, data, reader) == caller


def test_a_failing_ancestry_is_claude_code():
    def broken():
        raise OSError("no /proc")

    assert claude.real_caller({}, CAMEL, broken) == ""


def test_a_foreign_payload_gets_the_snake_case_names(tmp_path):
    payload = Payload({"sessionId": "s", "toolName": "Bash", "hookEventName": "PreToolUse", "tool_name": "keep"})
    caller = claude.foreign_caller(payload, {"COPILOT_HOME": str(tmp_path), "DEVIN_PROJECT_DIR": "/w"})
    assert caller == ("Custom", "Devin", False, "custom")
    assert payload.data["session_id"] == "s" and payload.data["tool_name"] == "keep"
    assert claude.foreign_caller(Payload(dict(CLAUDE)), {}) is None


def test_copilot_with_its_own_lidguard_hook_is_ignored(tmp_path):
    env = {"COPILOT_HOME": str(tmp_path)}
    copilot = Payload({**CAMEL, "toolArgs": "{}"})
    assert claude.foreign_caller(copilot, env) == ("GitHubCopilot", "", False, "copilot")
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "lidguard.json").write_text("{}")
    assert claude.foreign_caller(copilot, env) == ("GitHubCopilot", "", True, "copilot")


def test_cursor_with_lidguards_own_cursor_hook_is_ignored(tmp_path):
    """Cursor runs Claude Code's hooks and its own ~/.cursor/hooks.json: with lidguard's cursor-hook there,
    the claude-hook's event would count the same turn twice. A hooks.json of the user's only, or one that
    cannot be read, leaves the event to be counted here."""
    env = {"HOME": str(tmp_path), "CURSOR_VERSION": "1.7"}
    cursor = Payload(dict(CAMEL))
    assert claude.foreign_caller(cursor, env) == ("Custom", "Cursor", False, "custom")
    hooks = tmp_path / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text(json.dumps({"version": 1, "hooks": {"stop": [{"command": "./my-own-script.sh"}]}}))
    assert claude.foreign_caller(cursor, env) == ("Custom", "Cursor", False, "custom")
    for broken in ("{", "[]", '{"hooks": []}', '{"hooks": {"stop": "lidguard cursor-hook"}}'):
        hooks.write_text(broken)
        assert claude.foreign_caller(cursor, env) == ("Custom", "Cursor", False, "custom"), broken
    hooks.write_text(json.dumps({"version": 1, "hooks": {"stop": [
        {"command": "./my-own-script.sh"}, {"command": "/usr/bin/lidguard cursor-hook", "timeout": 450}]}}))
    assert claude.foreign_caller(cursor, env) == ("Custom", "Cursor", True, "custom")


def test_a_hook_process_run_by_cursor_with_its_own_lidguard_hook_is_ignored(lidguard):
    lidguard.run("hook-install", "--provider", "cursor", check=True)
    lidguard.env["CURSOR_VERSION"] = "1.7"
    result = run_hook_process(lidguard, "claude", json.dumps({**CAMEL, "sessionId": "cu-1"}))
    assert (result.returncode, result.stdout) == (0, b"")
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert "has its own lidguard hook installed" in log and "command=start" not in log


def test_in_process_attribution(stub_environment, monkeypatch):
    monkeypatch.setenv("GROK_HOOK_EVENT", "UserPromptSubmit")
    runtime, environment = stub_environment()
    assert run_hook("claude", [], json.dumps(CAMEL).encode(), environment) is None
    (message, _, _), = runtime.requests
    assert (message["Command"], message["Provider"], message["ProviderName"]) == ("start", "Custom", "Grok")
    assert message["SessionIdentifier"] == "s1"


def _sessions(lidguard):
    return {s["sessionIdentifier"]: s for s in lidguard.json("status")["sessions"]}


@pytest.mark.parametrize(("variable", "name"), [("CURSOR_VERSION", "Cursor"), ("GROK_HOOK_EVENT", "Grok"),
                                                 ("DEVIN_PROJECT_DIR", "Devin")])
def test_a_hook_process_run_by_another_agent_is_attributed_to_it(lidguard, variable, name):
    lidguard.env[variable] = "x"
    payload = {**CAMEL, "sessionId": f"{name}-1"}
    result = run_hook_process(lidguard, "claude", json.dumps(payload))
    assert (result.returncode, result.stdout) == (0, b"")
    assert lidguard.wait_until(lambda: f"{name}-1" in _sessions(lidguard), timeout=60)
    session = _sessions(lidguard)[f"{name}-1"]
    # The request carries ProviderName; the runtime keeps a name only for MCP sessions today (SessionKey).
    assert session["provider"] == "Custom", session
    assert f"Run by {name}, not Claude Code" in (lidguard.data_dir / "claude-hook-events.log").read_text()


def test_a_hook_process_run_by_copilot_with_its_own_hook_is_ignored(lidguard):
    copilot_home = lidguard.home / ".copilot"
    (copilot_home / "hooks").mkdir(parents=True)
    (copilot_home / "hooks" / "lidguard.json").write_text("{}")
    lidguard.env["COPILOT_HOME"] = str(copilot_home)
    payload = {**CAMEL, "sessionId": "cp-1", "timestamp": 1704614400000}
    result = run_hook_process(lidguard, "claude", json.dumps(payload))
    assert (result.returncode, result.stdout) == (0, b"")
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert "has its own lidguard hook installed" in log and "command=start" not in log


def test_a_fifo_or_a_huge_file_at_cursors_hooks_path_never_holds_the_hook(tmp_path):
    """The hook reads ~/.cursor/hooks.json on its path: a FIFO there (nobody writing) must not block it, and a
    file past the bound is not read whole - both read as "lidguard's Cursor hook is not installed"."""
    import os

    env = {"HOME": str(tmp_path), "CURSOR_VERSION": "1.7"}
    hooks = tmp_path / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    os.mkfifo(hooks)
    assert claude.foreign_caller(Payload(dict(CAMEL)), env) == ("Custom", "Cursor", False, "custom")
    hooks.unlink()
    hooks.write_text('{"hooks": {"stop": [{"command": "lidguard cursor-hook"}]}, "pad": "' + "x" * (2 << 20) + '"}')
    assert claude.foreign_caller(Payload(dict(CAMEL)), env) == ("Custom", "Cursor", False, "custom")
