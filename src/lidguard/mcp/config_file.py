"""Editing JSON MCP config files (``{"mcpServers": {...}}``): provider-mcp-install/remove/status, and the
config-file fallback of ``mcp-install`` when an agent CLI has no ``mcp add``.

Edits keep every unrelated entry, the key order, the file's indentation and its final newline
(comments are not JSON: a file with comments is refused, never rewritten). Writes are atomic and
0600 (``fileio.write_atomic``); a file that existed is first copied to ``<file>.<UTC yyyyMMddHHmmss>.bak``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..fileio import write_atomic

__all__ = [
    "DEFAULT_PROVIDER_SERVER_NAME",
    "ConfigFileError",
    "JsonConfig",
    "install_provider_server",
    "provider_status",
    "remove_provider_server",
    "server_command",
]

DEFAULT_PROVIDER_SERVER_NAME = "lidguard-provider"


class ConfigFileError(Exception):
    """The config file cannot be read or written; one readable line naming it."""


def server_command() -> tuple[str, list[str]]:
    """How an agent starts lidguard: this process's ``lidguard`` script, else ``lidguard`` on PATH, else
    this Python with ``-m lidguard`` (REFERENCE 12: the MCP executable preference)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "lidguard" and argv0.is_file():
        return str(argv0.resolve()), []
    found = shutil.which("lidguard")
    if found:
        return str(Path(found).absolute()), []
    return sys.executable, ["-m", "lidguard"]


def _indent_of(text: str) -> int | str:
    """The indentation unit of a pretty-printed JSON text (2 when it cannot tell)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            unit = line[: len(line) - len(stripped)]
            return unit if "\t" in unit else len(unit)
    return 2


class JsonConfig:
    """One JSON object file, read once, written back only when it changed."""

    def __init__(self, path: str | os.PathLike[str], *, servers_key: str = "mcpServers") -> None:
        self.path = Path(os.path.expanduser(os.fspath(path))).absolute()
        self.exists = self.path.is_file()
        self.original = ""
        self.data: dict[str, Any] = {}
        if self.path.exists() and not self.exists:
            raise ConfigFileError(f"The MCP config path is not a file: {self.path}")
        if self.exists:
            try:
                self.original = self.path.read_bytes().decode("utf-8-sig")
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigFileError(f"Cannot read the MCP config file {self.path}: {error}") from error
            try:
                data = json.loads(self.original) if self.original.strip() else {}
            except (ValueError, RecursionError) as error:
                raise ConfigFileError(f"The MCP config file {self.path} is not valid JSON ({error}); "
                                      "it was left as it is.") from error
            if not isinstance(data, dict):
                raise ConfigFileError(f"The MCP config file {self.path} must hold a JSON object.")
            self.data = data
        # VS Code's mcp.json keeps its servers under "servers".
        if servers_key not in self.data and isinstance(self.data.get("servers"), dict):
            servers_key = "servers"
        self.servers_key = servers_key

    def servers(self) -> dict[str, Any]:
        servers = self.data.get(self.servers_key)
        return servers if isinstance(servers, dict) else {}

    def entry(self, name: str) -> dict[str, Any] | None:
        value = self.servers().get(name)
        return value if isinstance(value, dict) else None

    def set_entry(self, name: str, entry: dict[str, Any]) -> None:
        servers = self.data.get(self.servers_key)
        if not isinstance(servers, dict):
            if servers is not None:
                raise ConfigFileError(f"The {self.servers_key} value of {self.path} is not a JSON object; "
                                      "it was left as it is.")
            servers = self.data[self.servers_key] = {}
        servers[name] = entry

    def remove_entry(self, name: str) -> bool:
        servers = self.data.get(self.servers_key)
        if not isinstance(servers, dict) or name not in servers:
            return False
        del servers[name]
        return True

    def render(self) -> str:
        indent = _indent_of(self.original) if self.original else 2
        text = json.dumps(self.data, indent=indent, ensure_ascii=False)
        return text + ("\n" if not self.original or self.original.endswith("\n") else "")

    def save(self) -> tuple[bool, Path | None]:
        """(changed, backup path) - nothing is written when the content is the same."""
        if self.exists and json.loads(self.original.strip() or "{}") == self.data:
            return False, None
        backup = None
        try:
            if self.exists:
                stamp = datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S")
                backup = self.path.with_name(f"{self.path.name}.{stamp}.bak")
                counter = 1
                while backup.exists():
                    backup = self.path.with_name(f"{self.path.name}.{stamp}-{counter}.bak")
                    counter += 1
                write_atomic(backup, self.original.encode("utf-8"))
            write_atomic(self.path, self.render())
        except OSError as error:
            raise ConfigFileError(f"Cannot write the MCP config file {self.path}: {error.strerror or error}") from error
        self.exists = True
        return True, backup


def _provider_args(provider_name: str) -> list[str]:
    return ["provider-mcp-server", "--provider-name", provider_name]


def install_provider_server(config: str, provider_name: str, server_name: str | None) -> list[str]:
    name = (server_name or DEFAULT_PROVIDER_SERVER_NAME).strip() or DEFAULT_PROVIDER_SERVER_NAME
    file = JsonConfig(config)
    command, prefix = server_command()
    entry = dict(file.entry(name) or {})  # a refresh keeps the entry's other keys (env, ...)
    entry.update(type="stdio", command=command, args=[*prefix, *_provider_args(provider_name)])
    file.set_entry(name, entry)
    changed, backup = file.save()
    lines = [f"Backup: {backup}"] if backup else []
    return [*lines, f"Changed: {changed}",
            f"Installed provider MCP server '{name}' in {file.path}." if changed
            else f"Provider MCP server '{name}' is already installed in {file.path}.",
            f"Provider name: {provider_name}", f"Command: {' '.join([command, *entry['args']])}",
            "Note: the provider MCP server is best effort: sessions start, wait and end only when the model "
            "calls its tools."]


def remove_provider_server(config: str, server_name: str | None) -> list[str]:
    name = (server_name or DEFAULT_PROVIDER_SERVER_NAME).strip() or DEFAULT_PROVIDER_SERVER_NAME
    file = JsonConfig(config)
    if not file.exists or not file.remove_entry(name):
        return ["Changed: False", f"Provider MCP server '{name}' is not installed in {file.path}."]
    changed, backup = file.save()
    lines = [f"Backup: {backup}"] if backup else []
    return [*lines, f"Changed: {changed}", f"Removed provider MCP server '{name}' from {file.path}."]


def describe_entry(entry: dict[str, Any] | None) -> dict[str, Any]:
    """Command, args and the provider name of a server entry (any shape; missing parts empty)."""
    entry = entry or {}
    command = entry.get("command") if isinstance(entry.get("command"), str) else ""
    args = [str(item) for item in entry.get("args", [])] if isinstance(entry.get("args"), list) else []
    provider_name = ""
    if "--provider-name" in args and args.index("--provider-name") + 1 < len(args):
        provider_name = args[args.index("--provider-name") + 1]
    transport = str(entry.get("type") or entry.get("transport") or ("stdio" if command else ""))
    url = str(entry.get("url") or "")
    return {"command": command, "args": args, "provider_name": provider_name, "transport": transport, "url": url}


def provider_status(config: str, server_name: str | None) -> list[str]:
    name = (server_name or DEFAULT_PROVIDER_SERVER_NAME).strip() or DEFAULT_PROVIDER_SERVER_NAME
    file = JsonConfig(config)
    entry = file.entry(name)
    info = describe_entry(entry)
    managed = entry is not None and "provider-mcp-server" in info["args"]
    if entry is None:
        message = "Not installed. Run: lidguard provider-mcp-install --config <file> --provider-name <name>"
    elif not managed:
        message = "An entry with this name exists but does not run lidguard provider-mcp-server."
    else:
        message = "Installed (best effort: it depends on the model calling the provider_* tools)."
    return ["Provider MCP installation:", f"  Config: {file.path}", f"  Config exists: {file.exists}",
            f"  Server name: {name}", f"  Installed: {managed}", f"  Command: {info['command']}",
            f"  Args: {' '.join(info['args'])}", f"  Provider name: {info['provider_name']}",
            f"  Message: {message}"]
