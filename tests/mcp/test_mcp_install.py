"""mcp-install/remove/status against the real Claude Code and Codex CLIs (pinned, from npm) and through
config files; provider-mcp-install/remove/status on any JSON MCP config file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from agent_clis import agent_cli, cli_env, unpack_copilot_once


def _lidguard(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard", *arguments], env=env, capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def _ok(env: dict[str, str], *arguments: str) -> str:
    result = _lidguard(env, *arguments)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _listed(cli: Path, env: dict[str, str], home: Path) -> str:
    result = subprocess.run([str(cli), "mcp", "list"], env=env, capture_output=True, text=True, timeout=180,
                            stdin=subprocess.DEVNULL, cwd=home)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _lidguard_lines(listing: str) -> list[str]:
    return [line for line in listing.splitlines() if line.strip().startswith("lidguard")]


@pytest.mark.parametrize("name", ["claude", "codex", "copilot"])
def test_mcp_install_through_the_real_cli(lidguard: Any, name: str) -> None:
    cli = agent_cli(name)
    env = cli_env(lidguard.env)
    home = lidguard.home
    if name == "copilot":
        unpack_copilot_once(cli, env)

    installed = _ok(env, "mcp-install", "--provider", name)
    assert "Changed: True" in installed and f"through {cli} mcp add" in installed
    lines = _lidguard_lines(_listed(cli, env, home))
    if name == "copilot":  # its list shows names only ("lidguard (local)"); get shows the command
        shown = subprocess.run([str(cli), "mcp", "get", "lidguard"], env=env, capture_output=True, text=True,
                               timeout=180, stdin=subprocess.DEVNULL, cwd=home).stdout
        lines = [line for line in lines if "(local)" in line and "mcp-server" in shown]
    else:
        lines = [line for line in lines if "mcp-server" in line]
    assert len(lines) == 1, lines  # the CLI itself lists the server
    status = _ok(env, "mcp-status", "--provider", name)
    assert "  Installed: True" in status and "  CLI available: True" in status
    assert "  Contains mcp-server command: True" in status

    refreshed = _ok(env, "mcp-install", "--provider", name)  # again: removed and added through the CLI
    assert "Changed: True" in refreshed
    assert "  Installed: True" in _ok(env, "mcp-status", "--provider", name)

    removed = _ok(env, "mcp-remove", "--provider", name)
    assert "Changed: True" in removed and f"through {cli} mcp remove" in removed
    assert _lidguard_lines(_listed(cli, env, home)) == []
    assert "  Installed: False" in _ok(env, "mcp-status", "--provider", name)
    assert "Changed: False" in _ok(env, "mcp-remove", "--provider", name)


def test_a_copilot_without_mcp_add_gets_the_config_file_and_the_output_says_so(lidguard: Any, tmp_path: Path) -> None:
    """An older Copilot CLI (no ``mcp`` command): its config file is edited, never ``copilot mcp add``."""
    folder = tmp_path / "old-copilot"
    folder.mkdir()
    calls = tmp_path / "calls.txt"
    stand_in = folder / "copilot"
    stand_in.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\necho \"error: unknown command 'mcp'\" >&2\nexit 1\n")
    stand_in.chmod(0o755)
    env = _without_agent_clis(lidguard.env)
    env["PATH"] = f"{folder}{os.pathsep}{env['PATH']}"
    installed = _ok(env, "mcp-install", "--provider", "copilot")
    assert "Changed: True" in installed and "in its config file" in installed
    assert f"{stand_in} has no mcp add command" in installed
    entry = json.loads((lidguard.home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]["lidguard"]
    assert entry["args"][-1] == "mcp-server"
    removed = _ok(env, "mcp-remove", "--provider", "copilot")
    assert "Changed: True" in removed and "from its config file" in removed
    assert calls.read_text().splitlines() == ["mcp --help", "mcp --help"]  # asked, never told to add


def _without_agent_clis(base: dict[str, str]) -> dict[str, str]:
    """PATH with only this Python's folder (lidguard's script) and the system folders: no agent CLI."""
    return {**base, "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])}


def test_mcp_install_through_config_files_keeps_everything_else(lidguard: Any) -> None:
    env = _without_agent_clis(lidguard.env)
    home = lidguard.home
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "x"}}}))
    (home / ".codex").mkdir()
    codex_config = home / ".codex" / "config.toml"
    codex_config.write_text('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "x"\n')

    for name in ("claude", "codex", "copilot"):
        assert "Changed: True" in _ok(env, "mcp-install", "--provider", name)
        _ok(env, "mcp-install", "--provider", name)  # a refresh never duplicates

    claude = json.loads((home / ".claude.json").read_text())
    assert claude["numStartups"] == 3 and claude["mcpServers"]["other"] == {"command": "x"}
    assert claude["mcpServers"]["lidguard"]["args"][-1] == "mcp-server"
    codex = tomllib.loads(codex_config.read_text())
    assert codex["model"] == "gpt-5" and codex["mcp_servers"]["other"] == {"command": "x"}
    assert codex["mcp_servers"]["lidguard"]["args"][-1] == "mcp-server"
    assert codex_config.read_text().count("[mcp_servers.lidguard]") == 1
    copilot = json.loads((home / ".copilot" / "mcp-config.json").read_text())
    assert copilot["mcpServers"]["lidguard"]["type"] == "local"
    for path in (home / ".claude.json", codex_config, home / ".copilot" / "mcp-config.json"):
        assert path.stat().st_mode & 0o777 == 0o600
    status = _ok(env, "mcp-status", "--provider", "all")
    assert status.count("  Installed: True") == 3

    removed = _ok(env, "mcp-remove", "--provider", "all")
    assert removed.count("Changed: True") == 3
    assert "lidguard" not in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert tomllib.loads(codex_config.read_text()) == {"model": "gpt-5", "mcp_servers": {"other": {"command": "x"}}}
    assert list(home.glob(".claude.json.*.bak")) and list((home / ".codex").glob("config.toml.*.bak"))


def test_mcp_install_all_without_any_provider(lidguard: Any) -> None:
    result = _lidguard(_without_agent_clis(lidguard.env), "mcp-install", "--provider", "all")
    assert result.returncode == 1
    assert "Skipping absent provider: Claude" in result.stdout
    assert result.stderr.strip() == "lidguard: No available providers were found for all-provider execution."
    result = _lidguard(lidguard.env, "mcp-install", "--provider", "vim")
    assert result.returncode == 1 and "Use claude, codex, copilot, or all." in result.stderr


def test_provider_mcp_config_file(lidguard: Any) -> None:
    env = lidguard.env
    config = lidguard.home / "agent" / "mcp.json"
    config.parent.mkdir()
    original = json.dumps({"theme": "dark", "mcpServers": {"search": {"command": "search-mcp", "args": ["--x"]}},
                           "note": "café"}, indent=4, ensure_ascii=False) + "\n"
    config.write_text(original)

    out = _ok(env, "provider-mcp-install", "--config", str(config), "--provider-name", "pi")
    assert f"Installed provider MCP server 'lidguard-provider' in {config}." in out
    assert "best effort" in out
    backups = list(config.parent.glob("mcp.json.*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == original
    text = config.read_text()
    data = json.loads(text)
    assert list(data) == ["theme", "mcpServers", "note"] and data["note"] == "café"
    assert data["mcpServers"]["search"] == {"command": "search-mcp", "args": ["--x"]}
    entry = data["mcpServers"]["lidguard-provider"]
    assert entry["type"] == "stdio" and entry["args"][-3:] == ["provider-mcp-server", "--provider-name", "pi"]
    assert text.startswith('{\n    "theme"') and text.endswith("}\n")  # indentation and final newline kept
    assert config.stat().st_mode & 0o777 == 0o600
    status = _ok(env, "provider-mcp-status", "--config", str(config))
    assert "  Installed: True" in status and "  Provider name: pi" in status

    # A refresh with another name keeps the entry's own extras (env).
    data["mcpServers"]["lidguard-provider"]["env"] = {"A": "1"}
    config.write_text(json.dumps(data, indent=4))
    _ok(env, "provider-mcp-install", "--config", str(config), "--provider-name", "pi two")
    entry = json.loads(config.read_text())["mcpServers"]["lidguard-provider"]
    assert entry["env"] == {"A": "1"} and entry["args"][-1] == "pi two"
    unchanged = _ok(env, "provider-mcp-install", "--config", str(config), "--provider-name", "pi two")
    assert "Changed: False" in unchanged

    _ok(env, "provider-mcp-install", "--config", str(config), "--provider-name", "q", "--server-name", "second")
    assert "Removed provider MCP server 'lidguard-provider'" in _ok(env, "provider-mcp-remove", "--config",
                                                                    str(config))
    servers = json.loads(config.read_text())["mcpServers"]
    assert set(servers) == {"search", "second"}
    assert "Changed: False" in _ok(env, "provider-mcp-remove", "--config", str(config))


def test_provider_mcp_config_file_errors_and_new_files(lidguard: Any) -> None:
    env = lidguard.env
    broken = lidguard.home / "broken.json"
    broken.write_text('{"mcpServers": {// a comment\n}}')
    result = _lidguard(env, "provider-mcp-install", "--config", str(broken), "--provider-name", "pi")
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "is not valid JSON" in result.stderr and "left as it is" in result.stderr
    assert broken.read_text() == '{"mcpServers": {// a comment\n}}'
    result = _lidguard(env, "provider-mcp-install", "--config", str(broken))
    assert result.returncode == 1 and "requires --provider-name" in result.stderr

    fresh = lidguard.home / "new" / "mcp.json"  # created, with its folder
    _ok(env, "provider-mcp-install", "--config", str(fresh), "--provider-name", "pi")
    assert json.loads(fresh.read_text())["mcpServers"]["lidguard-provider"]["args"][-1] == "pi"
    assert not list(fresh.parent.glob("*.bak"))

    vscode = lidguard.home / "vscode-mcp.json"  # VS Code keeps its servers under "servers"
    vscode.write_text(json.dumps({"servers": {"a": {"command": "b"}}}))
    _ok(env, "provider-mcp-install", "--config", str(vscode), "--provider-name", "pi")
    assert set(json.loads(vscode.read_text())) == {"servers"}
    assert "lidguard-provider" in json.loads(vscode.read_text())["servers"]
