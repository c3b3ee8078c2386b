"""Qwen Code: the Claude-style ``hooks`` object of ``~/.qwen/settings.json`` (``$QWEN_HOME`` *is* the .qwen
folder), each handler running ``lidguard qwen-hook``.

Observed in 0.24.4 (AGENT_CLIS_MORE.md 2): ``timeout`` is in seconds, but a value of 1000 or more is read
as milliseconds, so a Stop timeout that long is written in milliseconds; ``"disableAllHooks": true`` and
``QWEN_CODE_SAFE_MODE`` / ``QWEN_CODE_SIMPLE`` turn every hook off; folder trust is off by default and
user hooks load in any folder. Headless runs send no SessionEnd: Stop ends the turn.
"""

from __future__ import annotations

import os
from pathlib import Path

from .common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, env_dir, home, hook_command
from .hooks_json import HookSpec
from .settings_hooks import SettingsHooks

__all__ = ["EVENTS", "install", "qwen_home", "remove", "specs", "status_lines", "timeout_value"]

SUB = "qwen-hook"
# event -> matcher
EVENTS: dict[str, str | None] = {
    "UserPromptSubmit": None,
    "PreToolUse": "*",
    "PostToolUse": "*",
    "PostToolUseFailure": "*",
    "Notification": "permission_prompt",
    "PermissionRequest": "*",
    "Stop": None,
    "StopFailure": None,
    "SessionEnd": None,
}
LEGACY_MILLISECONDS_FROM = 1000
_SWITCHES_OFF = ("QWEN_CODE_SAFE_MODE", "QWEN_CODE_SIMPLE")


def qwen_home() -> Path:
    return env_dir("QWEN_HOME", home() / ".qwen")


def timeout_value(seconds: int) -> int:
    """Seconds as Qwen Code reads them: below 1000 as seconds, else written in milliseconds."""
    return seconds if seconds < LEGACY_MILLISECONDS_FROM else seconds * 1000


def specs(stop_timeout: int) -> list[HookSpec]:
    command = hook_command(SUB, shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "command": command,
                                      "timeout": timeout_value(stop_timeout if event == "Stop"
                                                               else DEFAULT_HOOK_TIMEOUT_SECONDS)})
            for event, matcher in EVENTS.items()]


FILE = SettingsHooks("Qwen", "Qwen Code", SUB, tuple(EVENTS), lambda: qwen_home() / "settings.json", specs)
install = FILE.install
remove = FILE.remove
config_root = qwen_home


def locked_files(config: Path | None) -> list[Path]:
    """The files install/remove change (``installers.locks``)."""
    return [FILE.path(config)]


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    root, head, events = FILE.status(config, stop_timeout)
    switches = [name for name in _SWITCHES_OFF if os.environ.get(name, "").strip().lower() in ("1", "true")]
    off = root.get("disableAllHooks") is True
    lines = [*head, f"Hooks enabled: {not off and not switches}", *events]
    if off:
        lines.append("Warning: disableAllHooks is true in this settings file; Qwen Code runs no hooks.")
    for name in switches:
        lines.append(f"Warning: {name} is set in this environment; Qwen Code started from it runs no hooks.")
    return lines
