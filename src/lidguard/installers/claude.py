"""Claude Code: the ``hooks`` object of ``$CLAUDE_CONFIG_DIR/settings.json`` (default ``~/.claude``),
REFERENCE 5.2: ten events, each running ``lidguard claude-hook``; Stop may block for the follow-up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, env_dir, home, hook_command
from .hooks_json import HookSpec
from .settings_hooks import SettingsHooks

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


FILE = SettingsHooks("Claude", "Claude Code", SUB, tuple(EVENTS), lambda: claude_dir() / "settings.json", specs,
                     SCHEMA)
install = FILE.install
remove = FILE.remove
config_root = claude_dir


def locked_files(config: Path | None) -> list[Path]:
    """The files install/remove change (``installers.locks``)."""
    return [FILE.path(config)]


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    root, head, events = FILE.status(config, stop_timeout)
    if root.get("disableAllHooks") is True:
        head.append("Warning: disableAllHooks is true in this settings file; Claude Code runs no hooks.")
    return head + events
