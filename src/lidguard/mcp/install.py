"""mcp-install / mcp-remove / mcp-status for Claude Code, Codex and GitHub Copilot CLI (REFERENCE 5, 12).

Claude Code and Codex: through the CLI's own ``mcp add`` / ``mcp remove`` when the CLI is on PATH
(``claude mcp add --scope user lidguard -- <lidguard> mcp-server``, ``codex mcp add lidguard -- ...``),
else by editing its config file (``~/.claude.json`` ``mcpServers.lidguard``; ``$CODEX_HOME/config.toml``
``[mcp_servers.lidguard]``). Copilot CLI (REFERENCE row 113): ``copilot mcp add lidguard -- ...`` /
``copilot mcp remove lidguard`` when the installed CLI lists an ``add`` command in ``copilot mcp --help``
(1.0.x does; older builds have no ``mcp`` command), else its config file ``$COPILOT_HOME/mcp-config.json``
(default ``~/.copilot``). The output says which. Installing again refreshes the entry (remove, then add).
Status reads the config file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fileio import write_atomic
from .config_file import ConfigFileError, JsonConfig, describe_entry, server_command

__all__ = ["PROVIDERS", "SERVER_NAME", "InstallResult", "McpInstallError", "available_providers", "install",
           "remove", "status_lines"]

SERVER_NAME = "lidguard"
CLI_TIMEOUT_SECONDS = 120


class McpInstallError(Exception):
    """One readable line: the CLI failed or the config file cannot be used."""


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _codex_home() -> Path:
    return Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else _home() / ".codex"


def _copilot_home() -> Path:
    return Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") else _home() / ".copilot"


@dataclass(frozen=True)
class Provider:
    key: str
    display: str
    cli: str
    config: Callable[[], Path]
    roots: Callable[[], list[Path]]
    add: Callable[[str, list[str]], list[str]] | None  # (command, args) -> CLI arguments after the CLI
    remove: list[str] | None
    probe: bool = False  # ask the CLI first whether it has ``mcp add`` (``mcp --help``)


PROVIDERS: dict[str, Provider] = {
    "claude": Provider("claude", "Claude", "claude", lambda: _home() / ".claude.json",
                       lambda: [_home() / ".claude", _home() / ".claude.json"],
                       lambda command, args: ["mcp", "add", "--scope", "user", SERVER_NAME, "--", command, *args],
                       ["mcp", "remove", "--scope", "user", SERVER_NAME]),
    "codex": Provider("codex", "Codex", "codex", lambda: _codex_home() / "config.toml", lambda: [_codex_home()],
                      lambda command, args: ["mcp", "add", SERVER_NAME, "--", command, *args],
                      ["mcp", "remove", SERVER_NAME]),
    "copilot": Provider("copilot", "GitHubCopilot", "copilot", lambda: _copilot_home() / "mcp-config.json",
                        lambda: [_copilot_home()],
                        lambda command, args: ["mcp", "add", SERVER_NAME, "--", command, *args],
                        ["mcp", "remove", SERVER_NAME], probe=True),
}


@dataclass
class InstallResult:
    provider: str
    changed: bool
    message: str
    config: Path
    backup: Path | None = None
    details: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = [f"Provider: {PROVIDERS[self.provider].display}"]
        if self.backup is not None:
            lines.append(f"Backup: {self.backup}")
        return [*lines, f"Changed: {self.changed}", f"Message: {self.message}", f"Config: {self.config}",
                *self.details]


def available_providers() -> tuple[list[str], list[tuple[str, str]]]:
    """Providers whose CLI is on PATH or whose config root exists, and (provider, why skipped) for the rest."""
    present, skipped = [], []
    for key, provider in PROVIDERS.items():
        roots = provider.roots()
        if shutil.which(provider.cli) or any(root.exists() for root in roots):
            present.append(key)
        else:
            where = " | ".join(str(root) for root in roots)
            skipped.append((key, f"no {provider.cli} on PATH and no existing configuration root was found at: {where}"))
    return present, skipped


# -- reading the registered entry --------------------------------------------------------------------------
def _read_entry(key: str) -> tuple[dict[str, Any] | None, str]:
    """The registered ``lidguard`` entry (None = absent) and a problem line ("" when readable)."""
    path = PROVIDERS[key].config()
    if not path.is_file():
        return None, ""
    if key == "codex":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            return None, f"Cannot read {path}: {error}"
        servers = data.get("mcp_servers")
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        return (entry if isinstance(entry, dict) else None), ""
    try:
        return JsonConfig(path).entry(SERVER_NAME), ""
    except ConfigFileError as error:
        return None, str(error)


def _is_managed(entry: dict[str, Any] | None) -> bool:
    info = describe_entry(entry)
    return "mcp-server" in info["args"] and ("lidguard" in info["command"] or "lidguard" in info["args"])


def status_lines(key: str) -> list[str]:
    provider = PROVIDERS[key]
    path = provider.config()
    cli = shutil.which(provider.cli)
    entry, problem = _read_entry(key)
    info = describe_entry(entry)
    contains = "mcp-server" in info["args"]
    if problem:
        message = problem
    elif entry is None:
        message = f"Not installed. Run: lidguard mcp-install --provider {key}"
    elif not _is_managed(entry):
        message = "An entry named lidguard exists but does not run lidguard mcp-server."
    else:
        message = "Installed."
    return ["MCP installation:", f"  Provider: {provider.display}", f"  Installed: {_is_managed(entry)}",
            f"  Config: {path}", f"  Config exists: {path.is_file()}", f"  CLI available: {cli is not None}",
            f"  CLI: {cli or provider.cli}", f"  Server name: {SERVER_NAME}",
            f"  Managed server entry: {entry is not None}", f"  Transport: {info['transport']}",
            f"  Command: {info['command']}", f"  Args: {' '.join(info['args'])}",
            f"  Url: {info['url']}", f"  Contains mcp-server command: {contains}", f"  Message: {message}"]


# -- through the CLI -------------------------------------------------------------------------------------
PROBE_TIMEOUT_SECONDS = 60
_ADD_COMMAND = re.compile(r"^\s+add\b", re.MULTILINE)


def _cli_with_mcp_add(provider: Provider) -> tuple[str | None, str]:
    """The CLI to register through (None: edit the config file) and why not, when not."""
    cli = shutil.which(provider.cli)
    if cli is None or provider.add is None or provider.remove is None:
        return None, f"no {provider.cli} on PATH" if cli is None else ""
    if not provider.probe:
        return cli, ""
    try:
        result = subprocess.run([cli, "mcp", "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS,
                                stdin=subprocess.DEVNULL, cwd=_home() if _home().is_dir() else None)
    except (OSError, subprocess.TimeoutExpired, ValueError) as error:
        return None, f"{cli} mcp --help failed ({error})"
    if result.returncode != 0 or not _ADD_COMMAND.search(result.stdout):
        return None, f"{cli} has no mcp add command"
    return cli, ""


def _run_cli(cli: str, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([cli, *arguments], capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
                              stdin=subprocess.DEVNULL, cwd=_home() if _home().is_dir() else None)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise McpInstallError(f"{cli} {' '.join(arguments[:2])} failed: {error}") from error


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (result.stderr + "\n" + result.stdout).splitlines()
             if line.strip() and not line.startswith("WARNING:")]
    return lines[-1] if lines else f"exit code {result.returncode}"


# -- through the config file -----------------------------------------------------------------------------
_CODEX_TABLE = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(?:lidguard|\"lidguard\")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
_TABLE = re.compile(r"^\s*\[")


def _codex_without_entry(text: str) -> str:
    """The TOML text without the ``[mcp_servers.lidguard]`` table and its sub-tables."""
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if _TABLE.match(line):
            skipping = bool(_CODEX_TABLE.match(line))
        if not skipping:
            kept.append(line)
    return "".join(kept)


def _write_with_backup(path: Path, old: str | None, new: str) -> Path | None:
    from datetime import datetime, timezone

    backup = None
    try:
        if old is not None:
            backup = path.with_name(f"{path.name}.{datetime.now(timezone.utc).strftime('%Y%m%d%H%M%S')}.bak")
            write_atomic(backup, old)
        write_atomic(path, new)
    except OSError as error:
        raise McpInstallError(f"Cannot write {path}: {error.strerror or error}") from error
    return backup


def _file_set(key: str, command: str | None, args: list[str]) -> tuple[bool, Path | None]:
    """Writes (command given) or removes (None) the entry in the provider's config file."""
    path = PROVIDERS[key].config()
    if key == "codex":
        import json

        old = path.read_text(encoding="utf-8") if path.is_file() else None
        text = _codex_without_entry(old or "")
        if command is not None:
            text = (text.rstrip("\n") + "\n\n" if text.strip() else "") + (
                f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\n"
                f"args = [{', '.join(json.dumps(arg) for arg in args)}]\n")
        if text == (old or ""):
            return False, None
        return True, _write_with_backup(path, old, text)
    try:
        file = JsonConfig(path)
        if command is None:
            if not file.remove_entry(SERVER_NAME):
                return False, None
        else:
            entry = {"type": "local", "command": command, "args": args, "tools": ["*"]} if key == "copilot" else \
                {"type": "stdio", "command": command, "args": args, "env": {}}
            file.set_entry(SERVER_NAME, {**(file.entry(SERVER_NAME) or {}), **entry})
        return file.save()
    except ConfigFileError as error:
        raise McpInstallError(str(error)) from error


def install(key: str) -> InstallResult:
    provider = PROVIDERS[key]
    command, prefix = server_command()
    args = [*prefix, "mcp-server"]
    cli, why_not = _cli_with_mcp_add(provider)
    details = [f"Command: {' '.join([command, *args])}"]
    if cli and provider.add is not None and provider.remove is not None:
        entry, _ = _read_entry(key)
        if entry is not None:  # refresh: remove, then add
            _run_cli(cli, provider.remove)
        result = _run_cli(cli, provider.add(command, args))
        if result.returncode != 0:
            raise McpInstallError(f"{provider.cli} mcp add failed: {_last_line(result)}")
        if not _is_managed(_read_entry(key)[0]):
            raise McpInstallError(f"{provider.cli} mcp add did not register lidguard in {provider.config()}.")
        return InstallResult(key, True, f"Registered the lidguard MCP server through {cli} mcp add.",
                             provider.config(), details=details)
    changed, backup = _file_set(key, command, args)
    message = ("Registered the lidguard MCP server in its config file" if changed
               else "The lidguard MCP server is already registered in its config file")
    return InstallResult(key, changed, message + (f" ({why_not})." if why_not else "."), provider.config(), backup,
                         details)


def remove(key: str) -> InstallResult:
    provider = PROVIDERS[key]
    entry, problem = _read_entry(key)
    if problem:
        raise McpInstallError(problem)
    if entry is None:
        return InstallResult(key, False, "The lidguard MCP server is not registered.", provider.config())
    cli, why_not = _cli_with_mcp_add(provider)
    if cli and provider.remove is not None:
        result = _run_cli(cli, provider.remove)
        if result.returncode != 0 or _read_entry(key)[0] is not None:
            raise McpInstallError(f"{provider.cli} mcp remove failed: {_last_line(result)}")
        return InstallResult(key, True, f"Removed the lidguard MCP server through {cli} mcp remove.",
                             provider.config())
    changed, backup = _file_set(key, None, [])
    return InstallResult(key, changed, "Removed the lidguard MCP server from its config file"
                         + (f" ({why_not})." if why_not else "."), provider.config(), backup)
