"""Qoder CLI 1.1.52 (AGENT_CLIS_NEW.md section 5): ``lidguard qoder-hook`` from the Claude-style ``hooks`` object of
``~/.qoder/settings.json`` (written through ``installers/settings_hooks.py``).

No real turn of Qoder CLI has run here: it needs a Qoder login (``Not logged in · Please run /login``; its
bring-your-own-key models also need an online account check), so this module follows its documentation
(docs.qoder.com/cli/hooks-reference), the one event a refused run fired (SessionEnd) and its installed code.
What was seen: the hook is a direct child of ``node .../.bin/qodercli`` (no shell); SessionEnd's payload is
Claude's shape (``session_id``, ``transcript_path`` under ``~/.qoder/projects/``, ``cwd``, ``hook_event_name``,
``permission_mode``, ``reason``), with ``QODER_HOOK_SOURCE``/``QODER_PROJECT_DIR`` in the environment.
What was read in the 1.1.52 bundle (not run): the Claude event set and payload keys (``prompt``,
``tool_use_id``, ``stop_hook_active``, ``last_assistant_message``, Notification ``permission_prompt``/
``idle_prompt``), ``timeout`` in seconds, PermissionRequest's ``hookSpecificOutput.decision`` (with
``interrupt``), and a Stop ``{"decision": "block", "reason": ...}`` fed back to the model as Claude does; the
settings folder is ``$QODER_CONFIG_DIR``, else ``.qoder`` under ``$QODER_CLI_HOME``, ``$GEMINI_CLI_HOME`` or
the home folder; ``"disableAllHooks": true`` turns every hook off. So Claude's mapping and outputs apply.
Its npm postinstall edits ``~/.bashrc``, ``~/.profile`` and ``~/.config/git/ignore`` (never run it in a
test against a real HOME). Stdlib only.
"""

from __future__ import annotations

import sys

from . import Action, claude

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.settings_hooks import SettingsInstaller

KEY = "qoder"
PROVIDER = "Qoder"
DISPLAY = "Qoder CLI"
ALIASES = ("qodercli", "qoder-cli")
CONFIG_TEXT = "settings.json ($QODER_CONFIG_DIR or ~/.qoder; from its documentation and code: no real turn ran)"
HOOK_HELP = ("Qoder CLI hook (reads the event JSON on stdin).",
             "Qoder CLI command hook (from its documentation and code; it needs a Qoder login, so no real turn "
             "ran here): UserPromptSubmit starts the session, tool use is activity, subagents and tasks are "
             "work in flight, permission/idle notifications soft-lock it, Stop/SessionEnd end it; with the lid "
             "closed it answers PermissionRequest. Always exits 0.")
PROCESS_COMMANDS = frozenset({"qodercli"})
PROCESS_PACKAGES = ("@qoder-ai/qodercli",)
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = claude.LOG_DETAILS


def map_event(event: str, payload: Payload) -> Action:
    return claude.map_event(event, payload, QUIET_TOOLS)


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: Claude's nested shape; a deny also interrupts (the bundle reads ``interrupt``)."""
    return claude.permission_output(decision)


# -- its installer: the Claude-style hooks table of its settings.json (installers/settings_hooks.py) ----------
_STOPPING = "Stopping LidGuard session protection"
# event -> matcher (``*`` matches every tool, as in its bundle's pattern matcher)
EVENTS: dict[str, str | None] = {
    "UserPromptSubmit": None,
    "PreToolUse": "*",
    "PostToolUse": "*",
    "PostToolUseFailure": "*",
    "Notification": None,  # every type (how its matcher reads "a|b" is not known): map_event picks
    "PermissionRequest": "*",
    "SubagentStart": None,
    "SubagentStop": None,
    "TaskCreated": None,
    "TaskCompleted": None,
    "Stop": None,
    "StopFailure": None,
    "SessionEnd": None,
}


def config_root() -> Path:
    from ..installers.common import env_dir, home

    base = env_dir("QODER_CLI_HOME", env_dir("GEMINI_CLI_HOME", home()))
    return env_dir("QODER_CONFIG_DIR", base / ".qoder")


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook", shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "command": command,
                                      "timeout": stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS})
            for event, matcher in EVENTS.items()]


def installer() -> SettingsInstaller:
    from ..installers.settings_hooks import SettingsInstaller

    return SettingsInstaller(sys.modules[__name__], _status)


def _status(root: dict[str, Any], head: list[str], events: list[str]) -> list[str]:
    lines = [*head, f"Hooks enabled: {root.get('disableAllHooks') is not True}", *events]
    if root.get("disableAllHooks") is True:
        lines.append("Warning: disableAllHooks is true in this settings file; Qoder CLI runs no hooks.")
    lines.append("Note: from Qoder CLI's documentation and code; no real Qoder turn is recorded (it needs a "
                 "Qoder login).")
    return lines
