"""What ``claude-hooks`` / ``codex-hooks`` / ``copilot-hooks`` print: the managed hooks as a snippet to
paste by hand (the same entries ``hook-install`` writes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tomlkit

from ..agents import claude, codex, copilot
from .hooks_json import HookSpec
from .toml_trust import snake, trust_key

__all__ = ["FORMATS", "render"]

FORMATS: dict[str, dict[str, str]] = {
    "claude": {"settings-json": "settings", "json": "settings", "hooks-json": "hooks"},
    "codex": {"config-toml": "toml", "toml": "toml", "hooks-json": "hooks", "json": "hooks"},
    "copilot": {"config-json": "settings", "json": "settings", "hooks-json": "hooks"},
}


def _table(specs: list[HookSpec]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for spec in specs:
        group: dict[str, Any] = {"matcher": spec.matcher} if spec.matcher is not None else {}
        group["hooks"] = [spec.handler]
        table[spec.event] = [group]
    return table


def _codex_toml(stop_timeout: int) -> str:
    """``[[hooks.<Event>]]`` tables for config.toml, with their trust entries (keyed by config.toml)."""
    config_file = codex.codex_home().absolute() / "config.toml"
    trusted = codex.installer()
    doc = tomlkit.document()
    hooks = tomlkit.table(is_super_table=True)
    state = tomlkit.table(is_super_table=True)
    for spec in codex.specs(stop_timeout):
        group = tomlkit.table()
        if spec.matcher is not None:
            group["matcher"] = spec.matcher
        handlers = tomlkit.aot()
        handler = tomlkit.table()
        handler.update(spec.handler)
        handlers.append(handler)
        group["hooks"] = handlers
        groups = tomlkit.aot()
        groups.append(group)
        hooks[spec.event] = groups
        entry = tomlkit.table()
        entry["trusted_hash"] = trusted.trusted_hash(snake(spec.event), spec.handler, spec.matcher)
        state[trust_key(Path(config_file), spec.event, 0, 0)] = entry
    hooks["state"] = state
    doc["hooks"] = hooks
    return tomlkit.dumps(doc).rstrip("\n") + "\n"


def render(provider: str, fmt: str, stop_timeout: int) -> str:
    kind = FORMATS[provider][fmt]
    if provider == "claude":
        return json.dumps({"hooks": _table(claude.specs(stop_timeout))}, indent=2) + "\n"
    if provider == "codex":
        if kind == "toml":
            return _codex_toml(stop_timeout)
        return json.dumps({"hooks": _table(codex.specs(stop_timeout))}, indent=2) + "\n"
    managed = copilot.snippet(stop_timeout)
    if kind == "settings":
        managed = {"hooks": managed["hooks"]}
    return json.dumps(managed, indent=2) + "\n"
