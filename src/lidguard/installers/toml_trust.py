"""An agent's ``<config folder>/hooks.json`` whose hooks run only while its ``config.toml`` trusts them (Codex
CLI, ``agents/codex.py``; AGENT_CLIS.md "Hook trust"): the agent silently skips a hook whose
``[hooks.state."<hooks.json path>:<event_snake>:<group>:<handler>"] trusted_hash`` does not match.

trusted_hash = ``"sha256:" + sha256(canonical JSON of the normalized identity)``, the identity being
``{"event_name", "matcher" (matcher events only), "hooks": [{"type": "command", "command", "timeout"
(the agent's default when unset, some events clamped), "async": false, "statusMessage" (when set)}]}``; the
agent module gives its matcher events, clamps and default. hooks.json is the Claude-style table
(``hooks_json.py``); config.toml is edited with tomlkit so the user's comments and layout stay. Imported only
by hook-install / hook-remove / hook-status and the snippet printer, never on a hook's path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from .common import (
    InstallError,
    InstallResult,
    is_managed_command,
    load_json_object,
    read_config_text,
    render_json,
    write_config,
    write_or_remove,
)
from .hooks_json import (
    HookSpec,
    IsOurs,
    event_states,
    handler_positions,
    managed_positions,
    overall,
    remove_managed,
    upsert_managed,
)

__all__ = ["TrustStatus", "TrustedHooksFile", "snake", "trust_key"]

Positions = dict[int, tuple[str, int, int, dict[str, Any]]]


def snake(event: str) -> str:
    """``PostToolUse`` -> ``post_tool_use``: the event's name in a trust key and a trusted hash."""
    return "".join(f"_{char.lower()}" if char.isupper() and index else char.lower()
                   for index, char in enumerate(event))


def trust_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{snake(event)}:{group}:{handler}"


@dataclass(frozen=True)
class TrustStatus:
    """What hook-status found, for the agent module to word (``TrustedHooksFile.status``)."""

    status: str  # the events' overall state; NeedsUpdate when a handler of ours is untrusted
    hooks_file: Path
    hooks_exists: bool
    config_file: Path  # config.toml
    config_exists: bool
    states: dict[str, str]  # event -> Installed / NeedsUpdate / NotInstalled
    untrusted: list[str]  # the events of our handlers without a matching trust entry
    config: Any  # the parsed config.toml (a tomlkit document), for the agent's own checks


@dataclass(frozen=True)
class TrustedHooksFile:
    """hook-install / hook-remove / hook-status for one agent's hooks.json and the trust entries in its
    config.toml (both in ``folder()``; ``config`` overrides the hooks.json path, the trust stays in the user's
    config.toml). Our handlers run ``<sub>``; ``specs(stop_timeout)`` are the ones to install."""

    display: str  # the result's provider line
    name: str  # the agent in messages ("The LidGuard Codex hooks ...", "Codex config file")
    folder: Callable[[], Path]
    events: Sequence[str]
    specs: Callable[[int], list[HookSpec]]
    sub: str  # the hook command word (``codex-hook``)
    matcher_events: frozenset[str]  # snake_case events whose matcher is part of the hashed identity
    clamped_timeouts: Mapping[str, int]  # snake_case event -> the longest timeout the agent runs it with
    default_timeout: int  # the agent's timeout for a handler without a valid one
    status: Callable[[TrustStatus], list[str]]  # hook-status's lines
    install_notes: Callable[[Any], list[str]] = field(default=lambda config: [])  # from the parsed config.toml

    @property
    def EVENTS(self) -> tuple[str, ...]:  # noqa: N802 - what agents/table.py reads of an installer
        return tuple(self.events)

    def config_root(self) -> Path:
        return self.folder()

    def paths(self, config: Path | None) -> tuple[Path, Path]:
        """(hooks.json, config.toml)."""
        hooks_file = (config if config is not None else self.folder() / "hooks.json").absolute()
        return hooks_file, self.folder().absolute() / "config.toml"

    def locked_files(self, config: Path | None) -> list[Path]:
        """hooks.json and config.toml (its trust entries): the files install/remove change."""
        return list(self.paths(config))

    def trusted_hash(self, event_snake: str, handler: dict[str, Any], matcher: str | None) -> str:
        timeout = handler.get("timeout")
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            timeout = self.default_timeout
        timeout = max(1, timeout)
        if event_snake in self.clamped_timeouts:
            timeout = min(timeout, self.clamped_timeouts[event_snake])
        normalized: dict[str, Any] = {"type": "command", "command": handler.get("command", ""), "timeout": timeout,
                                      "async": False}
        if isinstance(handler.get("statusMessage"), str):
            normalized["statusMessage"] = handler["statusMessage"]
        identity: dict[str, Any] = {"event_name": event_snake, "hooks": [normalized]}
        if event_snake in self.matcher_events and matcher is not None:
            identity["matcher"] = matcher
        text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        return self._apply(config, install_specs=self.specs(stop_timeout))

    def remove(self, config: Path | None) -> InstallResult:
        return self._apply(config, install_specs=None)

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        hooks_file, toml_file = self.paths(config)
        root, original = load_json_object(hooks_file, f"{self.name} hooks file")
        toml = _Toml(toml_file, f"{self.name} config file")
        wanted = self.specs(stop_timeout)
        states = event_states(root, wanted, self._is_ours)
        state = toml.state(create=False) or {}
        untrusted = []
        table: dict[str, Any] = root["hooks"] if isinstance(root.get("hooks"), dict) else {}
        for spec in wanted:
            for g, h in managed_positions(root, spec.event, self._is_ours(spec.event)):
                group = table[spec.event][g]
                entry = state.get(trust_key(hooks_file, spec.event, g, h))
                expected = self.trusted_hash(snake(spec.event), group["hooks"][h], group.get("matcher"))
                if not isinstance(entry, dict) or entry.get("trusted_hash") != expected:
                    untrusted.append(spec.event)
        status = overall(states)
        if untrusted and status == "Installed":
            status = "NeedsUpdate"
        return self.status(TrustStatus(status, hooks_file, original is not None, toml_file, toml.original is not None,
                                       states, untrusted, toml.doc))

    def _is_ours(self, event: str) -> IsOurs:
        return lambda command: is_managed_command(command, self.sub)

    def _apply(self, config: Path | None, *, install_specs: list[HookSpec] | None) -> InstallResult:
        hooks_file, toml_file = self.paths(config)
        hooks_what, toml_what = f"{self.name} hooks file", f"{self.name} config file"
        root, original = load_json_object(hooks_file, hooks_what)
        toml = _Toml(toml_file, toml_what)  # parsed before anything is written: garbage refuses the whole install
        before = handler_positions(root)
        if install_specs is not None:
            changed_hooks = upsert_managed(root, install_specs, self._is_ours, hooks_file)
        else:
            changed_hooks = remove_managed(root, list(self.events), self._is_ours, hooks_file)
        self._sync_trust(toml, hooks_file, before, root)
        result = InstallResult(self.display, hooks_file, False, "")
        if changed_hooks and install_specs is None:
            saved = write_or_remove(hooks_file, root, original, hooks_what)
            result.backups += [saved] if saved else []
            if not hooks_file.exists():
                result.notes.append(f"Deleted {hooks_file}: nothing but lidguard's hooks was in it.")
        elif changed_hooks:
            saved = write_config(hooks_file, render_json(root, original), hooks_what)
            result.backups += [saved] if saved else []
        if toml.changed():
            saved = write_config(toml_file, toml.text(), toml_what)
            result.backups += [saved] if saved else []
        result.changed = changed_hooks or toml.changed()
        if install_specs is not None:
            result.message = (f"Installed the LidGuard {self.name} hooks and their trust entries." if result.changed
                              else f"The LidGuard {self.name} hooks are already installed and trusted.")
            result.notes += self.install_notes(toml.doc)
        else:
            result.message = (f"Removed the LidGuard {self.name} hooks and their trust entries." if result.changed
                              else f"No LidGuard {self.name} hooks were installed.")
        return result

    def _sync_trust(self, toml: _Toml, hooks_file: Path, before: Positions, root: dict[str, Any]) -> None:
        """Moves the trust of the user's handlers that changed position, drops trust that pointed at our
        old positions, and trusts every handler of ours where it now is (entries already right stay as
        they are, so a repeated install leaves config.toml byte for byte)."""
        state = toml.state(create=True)
        after = handler_positions(root)
        stale: set[str] = set()
        wanted: dict[str, dict[str, Any]] = {}
        for identity, (event, g, h, handler) in before.items():
            old_key = trust_key(hooks_file, event, g, h)
            if is_managed_command(handler.get("command"), self.sub):
                stale.add(old_key)
                continue
            now = after.get(identity)
            if now is not None and (now[1], now[2]) != (g, h) and isinstance(state.get(old_key), dict):
                stale.add(old_key)
                wanted[trust_key(hooks_file, event, now[1], now[2])] = _plain(state[old_key])
        table = root.get("hooks") if isinstance(root.get("hooks"), dict) else {}
        for event in self.events:
            groups = table.get(event) if isinstance(table, dict) else None
            for g, h in managed_positions(root, event, self._is_ours(event)):
                group = groups[g] if isinstance(groups, list) else {}
                handler = group["hooks"][h]
                wanted[trust_key(hooks_file, event, g, h)] = {
                    "trusted_hash": self.trusted_hash(snake(event), handler, group.get("matcher"))}
        for key in stale - set(wanted):
            if key in state:
                del state[key]
        for key, values in wanted.items():
            current = state.get(key)
            if isinstance(current, dict) and _plain(current) == values:
                continue
            entry = tomlkit.table()
            entry.update(values)
            state[key] = entry
        toml.tidy()


def _plain(table: Any) -> dict[str, Any]:
    unwrap = getattr(table, "unwrap", None)
    return dict(unwrap() if callable(unwrap) else table)


# -- config.toml ---------------------------------------------------------------------------------------
class _Toml:
    """config.toml parsed with tomlkit (a file that is not TOML refuses the whole change), its
    ``[hooks.state]`` table, and the text to write back."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.original = read_config_text(path, what)
        try:
            self.doc: TOMLDocument = tomlkit.parse(self.original or "")
        except (tomlkit.exceptions.TOMLKitError, ValueError, RecursionError) as error:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InstallError(f"The {what} {path} is not valid TOML ({detail}); it was left as it is.") from error
        self.start = tomlkit.dumps(self.doc)

    def state(self, *, create: bool) -> Any:
        hooks = self.doc.get("hooks")
        if hooks is None:
            if not create:
                return None
            hooks = tomlkit.table(is_super_table=True)
            self.doc["hooks"] = hooks
        if not isinstance(hooks, dict):
            raise InstallError(f"The hooks value of {self.path} is not a table; it was left as it is.")
        state = hooks.get("state")
        if state is None:
            if not create:
                return None
            state = tomlkit.table(is_super_table=True)
            hooks["state"] = state
        if not isinstance(state, dict):
            raise InstallError(f"The hooks.state value of {self.path} is not a table; it was left as it is.")
        return state

    def tidy(self) -> None:
        hooks = self.doc.get("hooks")
        if isinstance(hooks, dict) and isinstance(hooks.get("state"), dict) and not hooks["state"]:
            del hooks["state"]
        if isinstance(hooks, Table) and not hooks and hooks.is_super_table():
            del self.doc["hooks"]

    def changed(self) -> bool:
        return tomlkit.dumps(self.doc) != self.start

    def text(self) -> str:
        text = tomlkit.dumps(self.doc)
        return text.rstrip("\n") + "\n" if text.strip() else ""
