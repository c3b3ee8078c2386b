"""hook-install / hook-remove / hook-status on real files in a temp HOME: unrelated entries kept,
timestamped backups, 0600, idempotence, remove only ours, Codex trust hashes, Copilot's one managed
file, the OpenCode plugin, Stop hook timeouts from the raw settings."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from lidguard.agents import claude as claude_agent
from lidguard.agents import codex as codex_agent
from lidguard.agents import copilot as copilot_agent
from lidguard.agents import opencode as opencode_agent
from lidguard.cli.install_commands import SNIPPET_FORMATS
from lidguard.installers.common import (
    InstallError,
    hook_client,
    hook_command,
    is_managed_command,
    stop_hook_timeout_seconds,
)
from lidguard.installers.plugin_file import MARKER
from lidguard.installers.snippets import FORMATS, render
from lidguard.installers.toml_trust import snake

claude = claude_agent.installer()
codex, copilot, opencode = codex_agent.installer(), copilot_agent.installer(), opencode_agent.installer()


@pytest.fixture(autouse=True)
def agent_homes(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return isolated_home


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.*.bak"))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


USER_CLAUDE = {
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    },
    "permissions": {"allow": ["Bash(ls)"]},
}


# -- command recognition --------------------------------------------------------------------------------
@pytest.mark.parametrize(("command", "ours"), [
    ("lidguard claude-hook", True),
    ("'/opt/my tools/lidguard' claude-hook", True),
    ("/usr/bin/python3 -m lidguard claude-hook", True),
    ("& 'C:\\Program Files\\lidguard.exe' claude-hook", True),
    ("LIDGUARD claude-hook", True),
    ("mylidguard claude-hook", False),
    ("lidguard claude-hook --verbose", False),
    ("lidguard codex-hook", False),
    ("echo lidguard", False),
    ("lidguard 'unterminated", False),
])
def test_managed_command_is_lidguard_then_exactly_the_hook(command: str, ours: bool) -> None:
    assert is_managed_command(command, "claude-hook") is ours


def test_copilot_commands_match_their_event() -> None:
    assert is_managed_command("lidguard copilot-hook --event agentStop", "copilot-hook", "agentStop")
    assert is_managed_command("lidguard copilot-hook --event=agentStop", "copilot-hook", "agentStop")
    assert not is_managed_command("lidguard copilot-hook --event agentStop", "copilot-hook", "sessionEnd")
    assert is_managed_command("lidguard copilot-hook --event x", "copilot-hook", "*")


def test_command_is_the_quoted_executable_when_lidguard_is_not_on_path(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["/somewhere/pytest"])
    command = hook_command("claude-hook")
    client = hook_client()  # the native hook client leads when it runs here (issue 36)
    lead = f"{shlex.quote(client.path)} " if client.usable else ""
    assert command == f"{lead}{shlex.quote(sys.executable)} -m lidguard claude-hook"
    assert is_managed_command(command, "claude-hook")


# -- Claude --------------------------------------------------------------------------------------------
def test_claude_install_keeps_everything_else_backs_up_and_is_idempotent(agent_homes: Path) -> None:
    path = agent_homes / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USER_CLAUDE, indent=4) + "\n"
    path.write_text(original)
    path.chmod(0o644)
    result = claude.install(None, 430)
    assert result.changed and [p.read_text() for p in result.backups] == [original]
    data = json.loads(path.read_text())
    assert list(data) == ["model", "hooks", "permissions"] and data["permissions"] == USER_CLAUDE["permissions"]
    assert data["hooks"]["Stop"][0] == USER_CLAUDE["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"][0] == USER_CLAUDE["hooks"]["PreToolUse"][0]
    assert set(data["hooks"]) == set(claude.EVENTS)
    ours = data["hooks"]["Stop"][1]["hooks"][0]
    assert ours["command"] == hook_command("claude-hook") and ours["timeout"] == 430
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"] == 30
    assert path.read_text().startswith('{\n    "model"')  # the file's own indentation
    assert mode(path) == 0o644 and all(mode(p) == 0o600 for p in backups(path))  # the file's own mode kept
    text = path.read_text()
    again = claude.install(None, 430)
    assert not again.changed and path.read_text() == text and len(backups(path)) == 1
    assert claude.status_lines(None, 430)[0] == "Status: Installed"
    removed = claude.remove(None)
    assert removed.changed and json.loads(path.read_text()) == USER_CLAUDE
    assert not claude.remove(None).changed


def test_claude_new_file_gets_schema_and_claude_config_dir(agent_homes: Path, monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(agent_homes / "cc"))
    result = claude.install(None, 430)
    assert result.config == agent_homes / "cc" / "settings.json" and not result.backups
    data = json.loads(result.config.read_text())
    assert data["$schema"].startswith("https://json.schemastore.org/")


def test_stop_timeout_follows_raw_settings_and_a_change_needs_update(agent_homes: Path) -> None:
    settings = agent_homes / "data" / "LidGuard" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    assert stop_hook_timeout_seconds(settings) == 10 + 120 + 300 + 20  # seed 000's window + both margins (issue 32.6)
    settings.write_text(json.dumps({"PostStopSuspendDelaySeconds": 20, "ClosedLidStopFollowUpDelaySeconds": 60}))
    assert stop_hook_timeout_seconds(settings) == 400
    settings.write_text("{garbage")
    assert stop_hook_timeout_seconds(settings) == 450
    claude.install(None, 450)
    assert claude.status_lines(None, 400)[0] == "Status: NeedsUpdate"
    assert "Stop: NeedsUpdate" in claude.status_lines(None, 400)
    assert claude.install(None, 400).changed
    assert claude.status_lines(None, 400)[0] == "Status: Installed"


def test_managed_entry_inside_a_user_group_moves_out_and_duplicates_go(agent_homes: Path) -> None:
    path = agent_homes / ".claude" / "settings.json"
    path.parent.mkdir()
    shared = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"},
                                           {"type": "command", "command": "lidguard claude-hook"}]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [shared, {"matcher": "*", "hooks": [
        {"type": "command", "command": "lidguard claude-hook", "timeout": 1}]}]}}))
    claude.install(None, 430)
    groups = json.loads(path.read_text())["hooks"]["PreToolUse"]
    assert groups[0] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
    assert len(groups) == 2 and groups[1]["hooks"][0]["timeout"] == 30


# -- Codex ---------------------------------------------------------------------------------------------
def test_codex_trusted_hash_matches_the_documented_algorithm_and_known_goldens() -> None:
    # AGENT_CLIS.md: "sha256:" + sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")))
    handler = {"type": "command", "command": "lidguard codex-hook", "timeout": 30}
    identity = {"event_name": "stop", "hooks": [{"async": False, "command": "lidguard codex-hook", "timeout": 30,
                                                 "type": "command"}]}
    assert codex.trusted_hash("stop", handler, None) == "sha256:" + hashlib.sha256(
        json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    # Independent goldens published for Codex (unset timeout = 600; matcher only on matcher events).
    golden_cmd = "'/Applications/GWT.app/Contents/MacOS/gwtd' hook event PostToolUse"
    assert codex.trusted_hash("post_tool_use", {"command": golden_cmd}, "*") == \
        "sha256:9c3ce103f03f0b27a28bc4a30883f7e98a80b5df566b4572fcbb2955ebf5ba62"
    stop_cmd = 'gwt_bin="${GWT_BIN_PATH:-/Applications/GWT.app/Contents/MacOS/gwtd}"; "$gwt_bin" hook event Stop'
    assert codex.trusted_hash("stop", {"command": stop_cmd}, "*") == \
        "sha256:984e12cd30ef54cf4c63af8aabce1849705e5de09c70d039367ba68de9760389"
    # SessionEnd is clamped to 3 s by Codex before hashing.
    assert codex.trusted_hash("session_end", {"command": "x", "timeout": 30}, None) == \
        codex.trusted_hash("session_end", {"command": "x", "timeout": 3}, None)


CODEX_TOML = '''# my codex config
model = "gpt-5"  # the model

[projects."/src/app"]
trust_level = "trusted"
'''


def test_codex_install_writes_hooks_and_trust_keeping_toml_formatting(agent_homes: Path) -> None:
    home = agent_homes / ".codex"
    home.mkdir()
    (home / "config.toml").write_text(CODEX_TOML)
    result = codex.install(None, 430)
    assert result.changed and len(result.backups) == 1  # config.toml existed; hooks.json is new
    text = (home / "config.toml").read_text()
    assert text.startswith(CODEX_TOML)
    hooks = json.loads((home / "hooks.json").read_text())["hooks"]
    state = tomlkit.parse(text)["hooks"]["state"]
    for event, (matcher, _message) in codex_agent.EVENTS.items():
        handler = hooks[event][0]["hooks"][0]
        key = f"{home / 'hooks.json'}:{snake(event)}:0:0"
        assert state[key]["trusted_hash"] == codex.trusted_hash(snake(event), handler, matcher)
    assert hooks["Stop"][0]["hooks"][0]["timeout"] == 430 and hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    before = ((home / "hooks.json").read_bytes(), (home / "config.toml").read_bytes())
    assert not codex.install(None, 430).changed
    assert ((home / "hooks.json").read_bytes(), (home / "config.toml").read_bytes()) == before
    assert codex.status_lines(None, 430)[0] == "Status: Installed"
    assert codex.remove(None).changed
    assert (home / "config.toml").read_text() == CODEX_TOML
    assert not (home / "hooks.json").exists()  # nothing else was in it: no "{}" left behind


def test_codex_remove_moves_the_trust_of_a_user_hook_that_shifts(agent_homes: Path) -> None:
    home = agent_homes / ".codex"
    codex.install(None, 430)
    hooks_file = home / "hooks.json"
    data = json.loads(hooks_file.read_text())
    user = {"hooks": [{"type": "command", "command": "my-stop", "timeout": 5}]}
    data["hooks"]["Stop"].append(user)
    hooks_file.write_text(json.dumps(data))
    user_hash = codex.trusted_hash("stop", user["hooks"][0], None)
    with open(home / "config.toml", "a") as handle:
        handle.write(f'\n[hooks.state."{hooks_file}:stop:1:0"]\ntrusted_hash = "{user_hash}"\n')
    codex.remove(None)
    state = tomlkit.parse((home / "config.toml").read_text())["hooks"]["state"]
    assert dict(state) == {f"{hooks_file}:stop:0:0": {"trusted_hash": user_hash}}
    assert json.loads(hooks_file.read_text())["hooks"]["Stop"] == [user]


@pytest.mark.parametrize("flag", ["hooks", "codex_hooks"])
def test_codex_reports_features_that_turn_hooks_off(agent_homes: Path, flag: str) -> None:
    (agent_homes / ".codex").mkdir()
    (agent_homes / ".codex" / "config.toml").write_text(f"[features]\n{flag} = false\n")
    result = codex.install(None, 430)
    assert any(f"[features] {flag} = false" in note for note in result.notes)
    lines = codex.status_lines(None, 430)
    assert "Feature flag: off" in lines and any(line.startswith("Warning: [features]") for line in lines)
    assert f"{flag} = false" in (agent_homes / ".codex" / "config.toml").read_text()  # reported, not changed


def test_codex_home_and_config_override(agent_homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(agent_homes / "ch"))
    other = agent_homes / "project" / ".codex" / "hooks.json"
    codex.install(other, 430)
    state = tomlkit.parse((agent_homes / "ch" / "config.toml").read_text())["hooks"]["state"]
    assert all(key.startswith(f"{other}:") for key in state)  # trust lives in the user config


# -- Copilot -------------------------------------------------------------------------------------------
def test_copilot_one_managed_file_and_never_also_settings_json(agent_homes: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(agent_homes / "cp"))
    settings = agent_homes / "cp" / "settings.json"
    settings.parent.mkdir()
    user_hook = {"type": "command", "bash": "echo hi", "timeoutSec": 5}
    settings.write_text(json.dumps({"banner": "never", "hooks": {
        "agentStop": [user_hook, {"type": "command", "bash": "lidguard copilot-hook --event agentStop"}]}}))
    result = copilot.install(None, 430)
    managed = agent_homes / "cp" / "hooks" / "lidguard.json"
    assert result.config == managed and mode(managed) == 0o600
    data = json.loads(managed.read_text())
    assert data["version"] == 1 and list(data["hooks"]) == list(copilot_agent.EVENTS)
    stop = data["hooks"]["agentStop"][0]
    assert stop == {"type": "command", "bash": hook_command("copilot-hook --event agentStop"), "timeoutSec": 430}
    assert json.loads(settings.read_text()) == {"banner": "never", "hooks": {"agentStop": [user_hook]}}
    assert backups(settings)
    assert not copilot.install(None, 430).changed
    assert copilot.status_lines(None, 430)[0] == "Status: Installed"
    assert copilot.remove(None).changed and not managed.exists()
    assert json.loads(settings.read_text())["hooks"]["agentStop"] == [user_hook]


# -- OpenCode ------------------------------------------------------------------------------------------
def test_opencode_plugin_install_refuses_foreign_file_and_removes_only_ours(agent_homes: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(agent_homes / "cfg"))
    result = opencode.install(None, 430)
    plugin = agent_homes / "cfg" / "opencode" / "plugin" / "lidguard.js"
    assert result.config == plugin and MARKER in plugin.read_text()
    for event in opencode.EVENTS:
        assert f'"{event}"' in plugin.read_text()
    assert not opencode.install(None, 430).changed
    assert opencode.status_lines(None, 430)[0] == "Status: Installed"
    assert opencode.remove(None).changed and not plugin.exists()
    plugin.write_text("export const Mine = async () => ({});\n")
    with pytest.raises(InstallError, match="not written by LidGuard"):
        opencode.install(None, 430)
    with pytest.raises(InstallError):
        opencode.remove(None)
    assert plugin.read_text() == "export const Mine = async () => ({});\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_opencode_plugin_is_valid_javascript(tmp_path: Path) -> None:
    source = tmp_path / "plugin.mjs"
    source.write_text(opencode.plugin_source())
    result = subprocess.run(["node", "--check", str(source)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# -- snippets ------------------------------------------------------------------------------------------
def test_snippet_formats_match_the_cli_and_render() -> None:
    assert {key: tuple(value) for key, value in FORMATS.items()} == SNIPPET_FORMATS
    for provider, formats in FORMATS.items():
        for fmt in formats:
            text = render(provider, fmt, 430)
            parsed: Any = tomlkit.parse(text) if fmt in ("config-toml", "toml") else json.loads(text)
            assert parsed["hooks"]
