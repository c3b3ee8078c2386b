"""Codex CLI: ``$CODEX_HOME/hooks.json`` (default ``~/.codex``) plus the hook trust entries in the user
``config.toml`` (AGENT_CLIS.md "Hook trust"): Codex silently skips a hook whose
``[hooks.state."<hooks.json path>:<event_snake>:<group>:<handler>"] trusted_hash`` does not match.

trusted_hash = ``"sha256:" + sha256(canonical JSON of the normalized identity)``, the identity being
``{"event_name", "matcher" (matcher events only), "hooks": [{"type": "command", "command", "timeout"
(default 600, SessionEnd/Interrupt clamped to 3), "async": false, "statusMessage" (when set)}]}``.
config.toml is edited with tomlkit so the user's comments and layout stay; ``[features] hooks = false``
(or the old ``codex_hooks = false``) turns every hook off and is reported, never changed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from .common import (
    DEFAULT_HOOK_TIMEOUT_SECONDS,
    InstallError,
    InstallResult,
    env_dir,
    home,
    hook_command,
    is_managed_command,
    load_json_object,
    read_config_text,
    render_json,
    write_config,
    write_or_remove,
)
from .hooks_json import (
    HookSpec,
    event_states,
    handler_positions,
    managed_positions,
    overall,
    remove_managed,
    upsert_managed,
)

__all__ = ["EVENTS", "codex_home", "feature_problem", "install", "remove", "specs", "status_lines",
           "trust_key", "trusted_hash"]

SUB = "codex-hook"
MATCHER_EVENTS = frozenset({"permission_request", "post_compact", "post_tool_use", "pre_compact", "pre_tool_use",
                            "session_start"})
CLAMPED_EVENTS = {"session_end": 3, "interrupt": 3}
CODEX_DEFAULT_TIMEOUT = 600
# event -> (matcher, status message)
EVENTS: dict[str, tuple[str | None, str]] = {
    "UserPromptSubmit": (None, "Starting LidGuard turn protection"),
    "PreToolUse": ("*", "Recording Codex tool activity"),
    "PostToolUse": ("*", "Recording Codex tool completion activity"),
    "PermissionRequest": ("*", "Responding to closed-lid permission request"),
    "SubagentStart": (None, "Recording Codex subagent activity"),
    "SubagentStop": (None, "Recording Codex subagent completion activity"),
    "Stop": (None, "Stopping LidGuard session protection"),
    "Interrupt": (None, "Stopping LidGuard turn protection"),
    "SessionEnd": (None, "Stopping LidGuard session protection"),
}


def codex_home() -> Path:
    return env_dir("CODEX_HOME", home() / ".codex")


config_root = codex_home


def locked_files(config: Path | None) -> list[Path]:
    """hooks.json and config.toml (its trust entries): the files install/remove change."""
    hooks = (config if config is not None else codex_home() / "hooks.json").absolute()
    return [hooks, codex_home().absolute() / "config.toml"]


def snake(event: str) -> str:
    return "".join(f"_{char.lower()}" if char.isupper() and index else char.lower()
                   for index, char in enumerate(event))


def trusted_hash(event_snake: str, handler: dict[str, Any], matcher: str | None) -> str:
    timeout = handler.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        timeout = CODEX_DEFAULT_TIMEOUT
    timeout = max(1, timeout)
    if event_snake in CLAMPED_EVENTS:
        timeout = min(timeout, CLAMPED_EVENTS[event_snake])
    normalized: dict[str, Any] = {"type": "command", "command": handler.get("command", ""), "timeout": timeout,
                                  "async": False}
    if isinstance(handler.get("statusMessage"), str):
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_snake, "hooks": [normalized]}
    if event_snake in MATCHER_EVENTS and matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{snake(event)}:{group}:{handler}"


def specs(stop_timeout: int) -> list[HookSpec]:
    result = []
    for event, (matcher, message) in EVENTS.items():
        timeout = stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        if snake(event) in CLAMPED_EVENTS:
            timeout = CLAMPED_EVENTS[snake(event)]
        handler = {"type": "command", "command": hook_command(SUB), "timeout": timeout, "statusMessage": message}
        result.append(HookSpec(event, matcher, handler))
    return result


def _is_ours(event: str) -> Any:
    return lambda command: is_managed_command(command, SUB)


# -- config.toml ---------------------------------------------------------------------------------------
class _Toml:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.original = read_config_text(path, "Codex config file")
        try:
            self.doc: TOMLDocument = tomlkit.parse(self.original or "")
        except (tomlkit.exceptions.TOMLKitError, ValueError, RecursionError) as error:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InstallError(f"The Codex config file {path} is not valid TOML ({detail}); "
                               "it was left as it is.") from error
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


def _features(doc: Any) -> dict[str, Any]:
    features = doc.get("features") if isinstance(doc, dict) else None
    return features if isinstance(features, dict) else {}


def feature_key(doc: Any) -> str | None:
    """The ``[features]`` key that decides whether Codex runs hooks: ``hooks`` (canonical) when set, else the
    deprecated alias ``codex_hooks``; None when neither is (hooks are on by default)."""
    features = _features(doc)
    for name in ("hooks", "codex_hooks"):
        if isinstance(features.get(name), bool):
            return name
    return None


def feature_problem(doc: Any) -> str | None:
    name = feature_key(doc)
    if name is None or _features(doc)[name] is not False:
        return None
    return (f"[features] {name} = false in config.toml turns every Codex hook off; LidGuard's hooks "
            f"will not run until you remove that line (or set it to true).")


def feature_note(doc: Any) -> str | None:
    """A note when config.toml still spells the flag ``codex_hooks`` (deprecated; Codex prints a notice)."""
    if "codex_hooks" not in _features(doc):
        return None
    return ("[features] codex_hooks in config.toml is a deprecated alias of [features] hooks"
            + ("; hooks decides." if "hooks" in _features(doc) else "; rename it to hooks."))


# -- install / remove / status ------------------------------------------------------------------------
def _paths(config: Path | None) -> tuple[Path, Path]:
    hooks_file = (config if config is not None else codex_home() / "hooks.json").absolute()
    return hooks_file, codex_home().absolute() / "config.toml"


def _sync_trust(toml: _Toml, hooks_file: Path, before: dict[int, tuple[str, int, int, dict[str, Any]]],
                root: dict[str, Any]) -> None:
    """Moves the trust of the user's handlers that changed position, drops trust that pointed at our
    old positions, and trusts every handler of ours where it now is (entries already right stay as
    they are, so a repeated install leaves config.toml byte for byte)."""
    state = toml.state(create=True)
    after = handler_positions(root)
    stale: set[str] = set()
    wanted: dict[str, dict[str, Any]] = {}
    for identity, (event, g, h, handler) in before.items():
        old_key = trust_key(hooks_file, event, g, h)
        if is_managed_command(handler.get("command"), SUB):
            stale.add(old_key)
            continue
        now = after.get(identity)
        if now is not None and (now[1], now[2]) != (g, h) and isinstance(state.get(old_key), dict):
            stale.add(old_key)
            wanted[trust_key(hooks_file, event, now[1], now[2])] = _plain(state[old_key])
    table = root.get("hooks") if isinstance(root.get("hooks"), dict) else {}
    for event in EVENTS:
        groups = table.get(event) if isinstance(table, dict) else None
        for g, h in managed_positions(root, event, _is_ours(event)):
            group = groups[g] if isinstance(groups, list) else {}
            handler = group["hooks"][h]
            wanted[trust_key(hooks_file, event, g, h)] = {
                "trusted_hash": trusted_hash(snake(event), handler, group.get("matcher"))}
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


def _apply(config: Path | None, *, install_specs: list[HookSpec] | None) -> InstallResult:
    hooks_file, toml_file = _paths(config)
    root, original = load_json_object(hooks_file, "Codex hooks file")
    toml = _Toml(toml_file)  # parsed before anything is written: garbage refuses the whole install
    before = handler_positions(root)
    if install_specs is not None:
        changed_hooks = upsert_managed(root, install_specs, _is_ours, hooks_file)
    else:
        changed_hooks = remove_managed(root, list(EVENTS), _is_ours, hooks_file)
    _sync_trust(toml, hooks_file, before, root)
    result = InstallResult("Codex", hooks_file, False, "")
    if changed_hooks and install_specs is None:
        saved = write_or_remove(hooks_file, root, original, "Codex hooks file")
        result.backups += [saved] if saved else []
        if not hooks_file.exists():
            result.notes.append(f"Deleted {hooks_file}: nothing but lidguard's hooks was in it.")
    elif changed_hooks:
        saved = write_config(hooks_file, render_json(root, original), "Codex hooks file")
        result.backups += [saved] if saved else []
    if toml.changed():
        saved = write_config(toml_file, toml.text(), "Codex config file")
        result.backups += [saved] if saved else []
    result.changed = changed_hooks or toml.changed()
    problem = feature_problem(toml.doc)
    if install_specs is not None:
        result.message = ("Installed the LidGuard Codex hooks and their trust entries." if result.changed
                          else "The LidGuard Codex hooks are already installed and trusted.")
        if problem:
            result.notes.append(problem)
    else:
        result.message = ("Removed the LidGuard Codex hooks and their trust entries." if result.changed
                          else "No LidGuard Codex hooks were installed.")
    return result


def install(config: Path | None, stop_timeout: int) -> InstallResult:
    return _apply(config, install_specs=specs(stop_timeout))


def remove(config: Path | None) -> InstallResult:
    return _apply(config, install_specs=None)


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    hooks_file, toml_file = _paths(config)
    root, original = load_json_object(hooks_file, "Codex hooks file")
    toml = _Toml(toml_file)
    wanted = specs(stop_timeout)
    states = event_states(root, wanted, _is_ours)
    state = toml.state(create=False) or {}
    untrusted = []
    table: dict[str, Any] = root["hooks"] if isinstance(root.get("hooks"), dict) else {}
    for spec in wanted:
        for g, h in managed_positions(root, spec.event, _is_ours(spec.event)):
            group = table[spec.event][g]
            entry = state.get(trust_key(hooks_file, spec.event, g, h))
            expected = trusted_hash(snake(spec.event), group["hooks"][h], group.get("matcher"))
            if not isinstance(entry, dict) or entry.get("trusted_hash") != expected:
                untrusted.append(spec.event)
    status = overall(states)
    if untrusted and status == "Installed":
        status = "NeedsUpdate"
    problem = feature_problem(toml.doc)
    lines = [f"Status: {status}", f"Config: {hooks_file}", f"Config exists: {original is not None}",
             f"Trust config: {toml_file}", f"Trust config exists: {toml.original is not None}",
             f"Feature flag: {'off' if problem else 'on'}", f"Feature flag from: {_flag_source(toml.doc)}"]
    lines += [f"{event}: {states[event]}" for event in EVENTS]
    lines.append(f"Untrusted hooks: {', '.join(untrusted) if untrusted else 'none'}")
    if problem:
        lines.append(f"Warning: {problem}")
    note = feature_note(toml.doc)
    if note:
        lines.append(f"Note: {note}")
    return lines


def _flag_source(doc: Any) -> str:
    key = feature_key(doc)
    return f"[features] {key}" if key else "[features] hooks not set: on by default"
