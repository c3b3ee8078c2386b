"""Crush 0.96.1 (issue 35.2; documentation only, AGENT_CLIS_NEW.md section 4: its npm postinstall downloads the
binary from github.com, so the payloads here are the documented shapes, not recorded runs): tool events only, so
the first PreToolUse starts the session and later ones are its activity (``IfNotRunning``); nothing is ever
printed (Crush reads an ``allow`` as a pre-approval); the ancestry names; the flat entries of ``crush.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import crush
from lidguard.agents.ancestry import matches_provider, resolve_agent_process
from lidguard.hooks.runner import HookEnvironment, run_hook
from lidguard.installers.common import InstallError
from lidguard.platform.process_info import ProcessInfo
from lidguard.runtime.requests import check_wire_message, parse_request

from .conftest import ENTRY

SESSION = "313909e"
COMMON = {"session_id": SESSION, "cwd": "/home/user/project"}
BASH = {"event": "PreToolUse", "tool_name": "bash", "tool_input": {"command": "npm test"}}
COMPACT = {"event": "PreCompact", "tool_name": "compact", "tool_input": {"token_count": 103200, "max_tokens": 100000}}
CLOSED_ALLOW = {"lid": "Closed", "eligible": True, "decision": "Allow"}


def _run(stub_environment, payload: dict[str, Any] | bytes, **stub: Any) -> tuple[list[dict[str, Any]], Any]:
    """The hook's output and the requests it sent, each one the runtime's wire check accepts."""
    runtime, environment = stub_environment(**stub)
    data = payload if isinstance(payload, bytes) else json.dumps({**COMMON, **payload}).encode()
    output = run_hook("crush", [], data, environment)
    sent = [message for message, _, _ in runtime.requests]
    assert all(check_wire_message(message) is None and parse_request(message) for message in sent)
    return sent, output


def test_a_tool_call_starts_the_session_unless_it_runs(stub_environment):
    runtime, environment = stub_environment()
    output = run_hook("crush", [], json.dumps({**COMMON, **BASH}).encode(), environment)
    [(message, auto_start, _)] = runtime.requests
    assert (message["Command"], message["Provider"], message["SessionIdentifier"]) == ("start", "Crush", SESSION)
    assert message["IfNotRunning"] is True and message["SessionStateReason"] == "PreToolUse:bash"
    assert message["WatchedProcessIdentifier"] == 4242 and message["WorkingDirectory"] == COMMON["cwd"]
    assert message["InputPromptPreview"] == "" and auto_start is True and output is None
    assert parse_request(message).if_not_running is True


@pytest.mark.parametrize("event", ["pretooluse", "pre_tool_use", "PRE_TOOL_USE"])
def test_crushs_other_spellings_of_the_event_are_the_same_event(stub_environment, event):
    [message], _ = _run(stub_environment, {**BASH, "event": event})
    assert message["Command"] == "start" and message["IfNotRunning"] is True


def test_a_tool_call_without_a_tool_name_still_starts_it(stub_environment):
    [message], _ = _run(stub_environment, {"event": "PreToolUse"})
    assert message["SessionStateReason"] == "PreToolUse"


def test_a_compaction_is_activity(stub_environment):
    [message], output = _run(stub_environment, COMPACT)
    assert (message["Command"], message["SessionStateReason"]) == ("mark-session-active", "PreCompact")
    assert "ToolCallId" not in message and output is None


@pytest.mark.parametrize("payload", [COMPACT, BASH, {"event": "PreToolUse", "tool_name": "mcp_github_push"}])
@pytest.mark.parametrize("decision", ["Allow", "Deny", "Ask"])
def test_nothing_is_printed_with_the_lid_closed_whatever_the_decision_setting(stub_environment, payload, decision):
    messages, output = _run(stub_environment, payload, lid="Closed", eligible=True, decision=decision)
    assert output is None and [message["Command"] for message in messages] in (["start"], ["mark-session-active"])
    assert crush.permission_output(decision) is None


@pytest.mark.parametrize("payload", [{"event": "PostToolUse", "tool_name": "bash"}, {"event": "SessionStart"},
                                     {"event": "TurnEnd"}, {"event": "Stop"}, {"event": ""}, {"event": 7},
                                     {"hook_event_name": "nope"}, {}])
def test_other_events_are_only_logged(stub_environment, payload):
    messages, output = _run(stub_environment, payload)
    assert messages == [] and output is None


@pytest.mark.parametrize("stdin", [b"", b"[1, 2]", b'"PreToolUse"', b"7", b"null", b"{not json", b"\xff\xfe",
                                   b"{" * 5000, b'{"event": "PreToolUse", "session_id": ' + b"9" * 5000 + b"}"])
def test_bad_input_prints_nothing_and_tells_the_runtime_nothing(stub_environment, stdin):
    messages, output = _run(stub_environment, stdin, **CLOSED_ALLOW)
    assert messages == [] and output is None


@pytest.mark.parametrize("payload", [
    {**BASH, "session_id": "\ud800abc"}, {**BASH, "tool_name": "\udfff" * 3}, {**BASH, "cwd": "/w/\ud83d"},
    {**BASH, "session_id": 10 ** 400}, {**BASH, "session_id": 1e308, "tool_name": 2 ** 200},
    {**BASH, "session_id": ["x"], "cwd": 7, "tool_input": "not an object"}, {**BASH, "session_id": "s" * 5000},
    {**BASH, "tool_name": "t" * 100_000},
])
def test_odd_fields_still_give_a_valid_request_and_no_output(stub_environment, payload):
    messages, output = _run(stub_environment, payload, **CLOSED_ALLOW)
    assert output is None and len(messages) == 1 and messages[0]["SessionIdentifier"]


def test_the_crush_environment_is_never_needed(isolated_home):
    """The hook's context carries none of Crush's variables (CRUSH, CRUSH_SESSION_ID, ...): same request."""
    from lidguard.platform.paths import resolve_paths
    from lidguard.shared.raw_settings import RawSettings

    sent: list[dict[str, Any]] = []
    environment = HookEnvironment(resolve_paths(), send=lambda message, *_: sent.append(message) or {},
                                  agent_process=lambda provider, hint=0: 0, settings=lambda: RawSettings({}),
                                  environ={}, cwd="/nowhere")
    assert run_hook("crush", [], json.dumps({**COMMON, **BASH}).encode(), environment) is None
    assert [(message["Command"], message["SessionIdentifier"]) for message in sent] == [("start", SESSION)]


def test_real_hook_processes_start_once_then_renew_and_print_nothing(lidguard):
    """Two PreToolUse hooks as Crush runs them (no CRUSH_* variables needed): exit 0, no output at all, one
    session whose start stays the first call's while the second renews its activity (the runtime's IfNotRunning)."""
    env = {key: value for key, value in lidguard.env.items() if not key.startswith("CRUSH")}

    def hook(payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, *ENTRY, "crush-hook"], env=env, input=json.dumps(payload).encode(),
                              capture_output=True, timeout=60)

    def session() -> dict[str, Any] | None:
        found = [entry for entry in lidguard.json("status")["sessions"] if entry["sessionIdentifier"] == SESSION]
        return found[0] if found else None

    first = hook({**COMMON, **BASH})
    assert (first.returncode, first.stdout, first.stderr) == (0, b"", b"")
    assert lidguard.wait_until(lambda: session() is not None, timeout=60)
    before = session()
    assert before is not None and before["provider"] == "Crush"
    second = hook({**COMMON, **BASH, "tool_name": "view"})
    assert (second.returncode, second.stdout, second.stderr) == (0, b"", b"")
    after = session()
    assert after is not None and after["startedAtUtc"] == before["startedAtUtc"]
    assert after["lastActivityAtUtc"] >= before["lastActivityAtUtc"]
    assert len(lidguard.json("status")["sessions"]) == 1


# -- ancestry: the hook is a child of the Go binary `crush`; a node shim from npm may sit above it ---------------
BINARY = ProcessInfo(20, 10, "crush", "/home/u/.npm/lib/node_modules/@charmland/crush/bin/crush", ("crush",))
SHIM = ProcessInfo(10, 5, "node", "/usr/bin/node", ("node", "/home/u/.npm/bin/crush"))
HOOK = ProcessInfo(30, 20, "lidguard-hook", "/venv/lib/lidguard/_native/lidguard-hook",
                   ("/venv/lib/lidguard/_native/lidguard-hook", "/venv/bin/lidguard", "crush-hook"))


@pytest.mark.parametrize(("process", "expected"), [
    (BINARY, True), (ProcessInfo(20, 10, "crush", "/usr/local/bin/crush", ("crush", "-c", "/w")), True), (SHIM, True),
    (ProcessInfo(10, 5, "node", "/usr/bin/node", ("node", "/n/node_modules/@charmland/crush/bin/crush.js")), True),
    (ProcessInfo(10, 5, "crushtool", "/usr/bin/crushtool", ("crushtool", "-d", "map")), False),
    (ProcessInfo(10, 5, "bash", "/usr/bin/bash", ("bash", "-c", "crush")), False),
    (ProcessInfo(10, 5, "node", "/usr/bin/node", ("node", "/srv/app.js", "crush")), False),
])
def test_ancestry_owner_rules(process, expected):
    assert matches_provider(process, "crush") is expected


def test_the_watched_process_is_the_crush_binary_above_the_hook_not_its_npm_shim():
    assert resolve_agent_process([HOOK, BINARY, SHIM], "crush") == BINARY


# -- the installer: the flat entries of the global crush.json ------------------------------------------------------
@pytest.fixture
def config_file(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CRUSH_GLOBAL_CONFIG", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return isolated_home / ".config" / "crush" / "crush.json"


def test_install_writes_flat_entries_for_every_tool_and_is_idempotent_to_the_byte(config_file):
    installer = crush.installer()
    result = installer.install(None, 450)
    assert result.changed and installer.path(None) == config_file and installer.config_root() == config_file.parent
    assert any("documented, not run" in note for note in result.notes)
    root = json.loads(config_file.read_text())
    assert list(root) == ["hooks"] and list(root["hooks"]) == list(crush.EVENTS)
    for event in crush.EVENTS:
        [entry] = root["hooks"][event]
        assert entry == crush.entry(event) and entry["command"].endswith(" crush-hook")
        assert "matcher" not in entry and "hooks" not in entry and entry["timeout"] == 30
    text = config_file.read_bytes()
    again = installer.install(None, 600)  # no Stop hook: another Stop timeout changes nothing
    assert not again.changed and config_file.read_bytes() == text
    lines = installer.status_lines(None, 450)
    assert lines[:3] == ["Status: Installed", f"Config: {config_file}", "Config exists: True"]
    assert "PreToolUse: Installed" in lines and "PreCompact: Installed" in lines
    assert any(line.startswith("Note: ") and "not run here" in line for line in lines)


def test_install_and_remove_keep_the_users_keys_and_hooks(config_file):
    config_file.parent.mkdir(parents=True)
    user = {"$schema": "https://charm.land/crush.json",
            "providers": {"local": {"type": "openai", "base_url": "http://127.0.0.1:1/v1", "api_key": "$KEY"}},
            "hooks": {"PreToolUse": [{"name": "no-rm-rf", "matcher": "^bash$", "command": "./hooks/no-rm-rf.sh",
                                      "timeout": 10}]},
            "options": {"debug": False}}
    config_file.write_text(json.dumps(user, indent=4) + "\n")
    original = config_file.read_bytes()
    installer = crush.installer()
    result = installer.install(None, 450)
    assert result.backups and result.backups[0].read_bytes() == original
    root = json.loads(config_file.read_text())
    assert [key for key in root] == list(user) and root["providers"] == user["providers"]
    assert root["hooks"]["PreToolUse"][0] == user["hooks"]["PreToolUse"][0] and len(root["hooks"]["PreToolUse"]) == 2
    assert config_file.read_text().startswith('{\n    "$schema"')  # the file's own indent
    assert installer.remove(None).changed and json.loads(config_file.read_text()) == user
    assert not installer.remove(None).changed
    assert installer.status_lines(None, 450)[0] == "Status: NotInstalled"


def test_remove_deletes_a_file_that_held_only_ours(config_file):
    installer = crush.installer()
    installer.install(None, 450)
    result = installer.remove(None)
    assert result.changed and not config_file.exists()
    assert installer.status_lines(None, 450)[:3] == ["Status: NotInstalled", f"Config: {config_file}",
                                                    "Config exists: False"]


def test_an_old_entry_of_ours_is_replaced_in_place_and_duplicates_collapse(config_file):
    config_file.parent.mkdir(parents=True)
    old = {"command": "python3 -m lidguard crush-hook", "timeout": 5}
    user = {"command": "echo hi"}
    config_file.write_text(json.dumps({"hooks": {"PreToolUse": [old, user], "PreCompact": [old, user, old]}}))
    installer = crush.installer()
    assert installer.status_lines(None, 450)[0] == "Status: NeedsUpdate"
    installer.install(None, 450)
    hooks = json.loads(config_file.read_text())["hooks"]
    assert hooks["PreToolUse"] == [crush.entry("PreToolUse"), user]
    assert hooks["PreCompact"] == [user, crush.entry("PreCompact")]


def test_the_config_folder_follows_crush_global_config_then_xdg_config_home(isolated_home, monkeypatch):
    monkeypatch.delenv("CRUSH_GLOBAL_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(isolated_home / "xdg"))
    assert crush.installer().path(None) == isolated_home / "xdg" / "crush" / "crush.json"
    monkeypatch.setenv("CRUSH_GLOBAL_CONFIG", str(isolated_home / "crush-config"))
    assert crush.installer().path(None) == isolated_home / "crush-config" / "crush.json"
    monkeypatch.setenv("CRUSH_GLOBAL_CONFIG", "relative/folder")  # not an absolute folder: ignored
    assert crush.installer().path(None) == isolated_home / "xdg" / "crush" / "crush.json"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"hooks"', '{"hooks": []}', '{"hooks": "x"}',
                                  '{"hooks": {"PreToolUse": {"command": "x"}}}', '{"hooks": {"PreCompact": 7}}',
                                  '{\n  // a comment\n  "hooks": {}\n}', "\ud800".encode("utf-8", "surrogatepass")])
def test_garbage_files_are_refused_with_one_line_and_left_as_they_are(config_file, text):
    config_file.parent.mkdir(parents=True)
    if isinstance(text, bytes):
        config_file.write_bytes(text)
    else:
        config_file.write_text(text)
    before = config_file.read_bytes()
    installer = crush.installer()
    for action in (lambda: installer.install(None, 450), lambda: installer.remove(None)):
        with pytest.raises(InstallError) as refused:
            action()
        assert "\n" not in str(refused.value) and str(config_file) in str(refused.value)
    assert config_file.read_bytes() == before
    assert not Path(f"{config_file}.lidguard.bak").exists()


def test_hook_install_and_hook_status_from_the_cli(lidguard):
    folder = lidguard.home / ".config" / "crush"
    folder.mkdir(parents=True)
    env = {key: value for key, value in lidguard.env.items() if key not in ("CRUSH_GLOBAL_CONFIG", "XDG_CONFIG_HOME")}
    run = lambda *args: subprocess.run([sys.executable, "-m", "lidguard", *args], env=env, text=True,  # noqa: E731
                                       capture_output=True, timeout=60)
    installed = run("hook-install", "--provider", "crush")
    assert installed.returncode == 0, installed.stderr
    assert json.loads((folder / "crush.json").read_text())["hooks"]["PreToolUse"][0]["name"] == "lidguard"
    status = run("hook-status", "--provider", "crush")
    assert status.returncode == 0 and "Status: Installed" in status.stdout and "not run here" in status.stdout
    assert os.stat(folder / "crush.json").st_mode & 0o777 == 0o600
