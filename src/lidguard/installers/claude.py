"""Claude Code: the ``hooks`` object of ``$CLAUDE_CONFIG_DIR/settings.json`` (default ``~/.claude``),
REFERENCE 5.2: ten events, each running ``lidguard claude-hook``; Stop may block for the follow-up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import (
    DEFAULT_HOOK_TIMEOUT_SECONDS,
    InstallResult,
    default_shell,
    env_dir,
    home,
    hook_command,
    is_managed_command,
    load_json_object,
    render_json,
    write_config,
    write_or_remove,
)
from .hooks_json import HookSpec, event_states, overall, remove_managed, upsert_managed

__all__ = ["EVENTS", "claude_dir", "install", "remove", "specs", "status_lines"]

SUB = "claude-hook"
SCHEMA = "https://json.schemastore.org/claude-code-settings.json"
_SOFT_LOCK_MATCHER = "permission_prompt|elicitation_dialog|elicitation_complete|elicitation_response"
_STOPPING = "Stopping LidGuard session protection"
# event -> (matcher, status message)
EVENTS: dict[str, tuple[str | None, str]] = {
    "UserPromptSubmit": (None, "Starting LidGuard turn protection"),
    "PreToolUse": ("*", "Recording Claude tool activity"),
    "PostToolUse": ("*", "Recording Claude tool completion activity"),
    "PostToolUseFailure": ("*", "Recording Claude failed tool activity"),
    "Notification": (_SOFT_LOCK_MATCHER, "Recording Claude soft-lock telemetry"),
    "PermissionRequest": ("*", "Responding to closed-lid permission request"),
    "Elicitation": (None, "Canceling closed-lid elicitation request"),
    "Stop": (None, _STOPPING),
    "StopFailure": (None, _STOPPING),
    "SessionEnd": (None, _STOPPING),
}


def claude_dir() -> Path:
    return env_dir("CLAUDE_CONFIG_DIR", home() / ".claude")


def specs(stop_timeout: int) -> list[HookSpec]:
    shell = default_shell()
    result = []
    for event, (matcher, message) in EVENTS.items():
        handler: dict[str, Any] = {"type": "command", "command": hook_command(SUB, shell=shell)}
        if shell == "powershell":
            handler["shell"] = "powershell"
        handler["timeout"] = stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        handler["statusMessage"] = message
        result.append(HookSpec(event, matcher, handler))
    return result


def _is_ours(event: str) -> Any:
    return lambda command: is_managed_command(command, SUB)


def _path(config: Path | None) -> Path:
    return (config if config is not None else claude_dir() / "settings.json").absolute()


def install(config: Path | None, stop_timeout: int) -> InstallResult:
    path = _path(config)
    root, original = load_json_object(path, "Claude Code settings file")
    new_file = not root
    changed = upsert_managed(root, specs(stop_timeout), _is_ours, path)
    if new_file:
        root = {"$schema": SCHEMA, **root}
    result = InstallResult("Claude", path, changed, "")
    if changed:
        saved = write_config(path, render_json(root, original), "Claude Code settings file")
        result.backups += [saved] if saved else []
        result.message = "Installed the LidGuard Claude Code hooks."
    else:
        result.message = "The LidGuard Claude Code hooks are already installed."
    return result


def remove(config: Path | None) -> InstallResult:
    path = _path(config)
    root, original = load_json_object(path, "Claude Code settings file")
    changed = remove_managed(root, list(EVENTS), _is_ours, path)
    result = InstallResult("Claude", path, changed, "")
    if changed:
        saved = write_or_remove(path, root, original, "Claude Code settings file", ignorable=("$schema",))
        result.backups += [saved] if saved else []
        if not path.exists():
            result.notes.append(f"Deleted {path}: nothing but lidguard's hooks was in it.")
        result.message = "Removed the LidGuard Claude Code hooks."
    else:
        result.message = "No LidGuard Claude Code hooks were installed."
    return result


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    path = _path(config)
    root, original = load_json_object(path, "Claude Code settings file")
    states = event_states(root, specs(stop_timeout), _is_ours)
    lines = [f"Status: {overall(states)}", f"Config: {path}", f"Config exists: {original is not None}"]
    if root.get("disableAllHooks") is True:
        lines.append("Warning: disableAllHooks is true in this settings file; Claude Code runs no hooks.")
    return lines + [f"{event}: {states[event]}" for event in EVENTS]
