"""Qwen Code 0.24 (AGENT_CLIS_MORE.md 2): Claude-shaped - ``lidguard qwen-hook`` from the Claude-style
``hooks`` object of ``~/.qwen/settings.json`` (``$QWEN_HOME`` *is* the .qwen folder; written through
``installers/settings_hooks.py``); Claude's payload mapping with its own quiet tools, and a UserPromptSubmit with an
empty prompt (sent again for every tool-result turn) is activity, not a start. Headless runs send no
SessionEnd (Stop ends the turn). Ancestry: ``hook <- node .../@qwen-code/qwen-code/cli.js`` (the relaunched
child) ``<- node cli.js <- node .bin/qwen``. Stdlib only.
"""

from __future__ import annotations

import sys

from . import Action, claude

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.settings_hooks import SettingsInstaller
    from .keep_awake import OwnKeepAwake

KEY = "qwen"
PROVIDER = "Qwen"
DISPLAY = "Qwen Code"
ALIASES = ("qwen-code",)
CONFIG_TEXT = "settings.json ($QWEN_HOME or ~/.qwen)"
HOOK_HELP = ("Qwen Code hook (reads the event JSON on stdin).",
             "Qwen Code command hook: UserPromptSubmit with a prompt starts the session, tool use is "
             "activity, a permission_prompt notification soft-locks it, Stop/SessionEnd end it; with the lid "
             "closed it answers PermissionRequest. Always exits 0.")
PROCESS_COMMANDS = frozenset({"qwen"})
PROCESS_PACKAGES = ("@qwen-code/qwen-code",)
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = claude.LOG_DETAILS


def map_event(event: str, payload: Payload) -> Action:
    if event.lower() == "userpromptsubmit" and not payload.text("prompt"):
        return Action("activity", f"{event}:tool-result")  # the tool result going back to the model
    return claude.map_event(event, payload, QUIET_TOOLS, idle=frozenset())  # its idle_prompt follows Stop


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: Claude's nested shape, a deny without ``interrupt``."""
    from ..hooks.outputs import nested_permission

    return nested_permission(decision)


# -- its installer: the Claude-style hooks table of ~/.qwen/settings.json (installers/settings_hooks.py) -------
# Observed in 0.24.4: ``timeout`` is in seconds, but a value of 1000 or more is read as milliseconds, so a
# Stop timeout that long is written in milliseconds; ``"disableAllHooks": true`` and
# ``QWEN_CODE_SAFE_MODE`` / ``QWEN_CODE_SIMPLE`` turn every hook off; folder trust is off by default and
# user hooks load in any folder.
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


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("QWEN_HOME", home() / ".qwen")


def timeout_value(seconds: int) -> int:
    """Seconds as Qwen Code reads them: below 1000 as seconds, else written in milliseconds."""
    return seconds if seconds < LEGACY_MILLISECONDS_FROM else seconds * 1000


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook", shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "command": command,
                                      "timeout": timeout_value(stop_timeout if event == "Stop"
                                                               else DEFAULT_HOOK_TIMEOUT_SECONDS)})
            for event, matcher in EVENTS.items()]


def installer() -> SettingsInstaller:
    from ..installers.settings_hooks import SettingsInstaller

    return SettingsInstaller(sys.modules[__name__], _status)


def _status(root: dict[str, Any], head: list[str], events: list[str]) -> list[str]:
    import os

    switches = [name for name in _SWITCHES_OFF if os.environ.get(name, "").strip().lower() in ("1", "true")]
    off = root.get("disableAllHooks") is True
    lines = [*head, f"Hooks enabled: {not off and not switches}", *events]
    if off:
        lines.append("Warning: disableAllHooks is true in this settings file; Qwen Code runs no hooks.")
    for name in switches:
        lines.append(f"Warning: {name} is set in this environment; Qwen Code started from it runs no hooks.")
    return lines


# -- its own keep-awake (issue 35.5; read in the pinned 0.24.4 source): ``general.preventSystemSleep``
# (default true, read once at start; off in safe mode) holds a sleep inhibitor only while a model response
# streams or a tool runs - idle and permission prompts hold none: Linux ``systemd-inhibit --what=sleep
# --who="Qwen Code" --mode=block`` (none in a headless SSH session), macOS ``caffeinate -is``, Windows a
# PowerShell power request.
_TURN_ONLY = ("Qwen Code holds it only while a response streams or a tool runs (Linux: a sleep block "
              "inhibitor, who \"Qwen Code\"): it cannot block lidguard's suspend after the session ends")


def own_keep_awake(env: Mapping[str, str]) -> OwnKeepAwake:
    from .keep_awake import OwnKeepAwake, read_switch

    setting, head, on = read_switch(env, "QWEN_HOME", ".qwen", "settings.json", "general", "preventSystemSleep",
                                    default=True, unset_note="on by default")
    if env.get("QWEN_CODE_SAFE_MODE", "").strip().lower() in ("1", "true"):
        head += "; QWEN_CODE_SAFE_MODE is set here, which turns it off for a Qwen Code started from this environment"
        return OwnKeepAwake(DISPLAY, f"{head}. {_TURN_ONLY}.", False, setting, False)
    return OwnKeepAwake(DISPLAY, f"{head}. {'' if on else 'When on, '}{_TURN_ONLY}.", False, setting, on)
