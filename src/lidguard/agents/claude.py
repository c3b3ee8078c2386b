"""Claude Code (REFERENCE 5.2, AGENT_CLIS.md): ``lidguard claude-hook`` from the ``hooks`` object of
``$CLAUDE_CONFIG_DIR/settings.json`` (default ``~/.claude``; written through ``installers/settings_hooks.py``).

Payloads are snake_case and name their event in ``hook_event_name``; tool calls pair by ``tool_use_id``;
a Stop while ``run_in_background`` tasks run carries them in ``background_tasks`` (a deferred stop);
``SubagentStart``/``SubagentStop`` (``agent_id``) and ``TaskCreated``/``TaskCompleted`` (``task_id``) keep
background work in flight, so a Stop while some runs is deferred too (issue 35.3); Notification
``idle_prompt`` (the session waits for the user) soft-locks. ``WorktreeCreate`` is never installed:
registering it replaces Claude's own git worktree creation (AGENT_CLIS_NEW.md).
Ancestry: ``hook <- /bin/sh -c <cmd> <- claude`` (native, exe ``.../bin/claude.exe``). Stdlib only.
"""

from __future__ import annotations

import sys

from . import (
    ACTIVITY_NOTIFICATIONS,
    IGNORE,
    SOFT_LOCK_NOTIFICATIONS,
    Action,
    background_work,
    hook_table,
    stop_action,
    tool_activity,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.settings_hooks import SettingsInstaller
    from .keep_awake import OwnKeepAwake

KEY = "claude"
PROVIDER = "Claude"
DISPLAY = "Claude Code"
ALIASES = ("claude-code",)
CONFIG_TEXT = "settings.json ($CLAUDE_CONFIG_DIR or ~/.claude)"
HOOK_HELP = ("Claude Code hook (reads the event JSON on stdin).",
             "Claude Code command hook: UserPromptSubmit starts the session, tool use is activity, "
             "subagents and tasks are work in flight (a Stop meanwhile is deferred), permission/idle/"
             "elicitation notifications soft-lock it, Stop/SessionEnd end it; with the lid "
             "closed it answers PermissionRequest (ClosedLidPermissionRequestDecision) and cancels "
             "Elicitation. Always exits 0.")
# Ancestry: the names its native program or npm bin goes by, and its npm packages.
PROCESS_COMMANDS = frozenset({"claude"})
PROCESS_PACKAGES = ("@anthropic-ai/claude-code",)
QUIET_TOOLS = frozenset({"", "askuserquestion"})
# Claude's own soft-locks beyond the shared ones: the prompt idle, waiting for the user.
IDLE_NOTIFICATIONS = frozenset({"idle_prompt"})
# Background work: event -> (kind, id keys, state).
_WORK_EVENTS = {"subagentstart": ("subagent", ("agent_id",), "Running"),
                "subagentstop": ("subagent", ("agent_id",), "Finished"),
                "taskcreated": ("task", ("task_id",), "Running"),
                "taskcompleted": ("task", ("task_id",), "Finished")}
# REFERENCE 3.3: the detail keys of the hook log's "received" line (key, payload keys).
LOG_DETAILS = (("permissionMode", ("permission_mode",)), ("tool", ("tool_name",)), ("reason", ("reason",)),
               ("notificationType", ("notification_type",)), ("transcriptPath", ("transcript_path",)),
               ("isInterrupt", ("is_interrupt",)))


def map_event(event: str, payload: Payload, quiet: frozenset[str] = QUIET_TOOLS,
              idle: frozenset[str] = IDLE_NOTIFICATIONS) -> Action:
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"))
    if name in ("pretooluse", "posttooluse"):
        return tool_activity(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "posttoolusefailure":
        if payload.flag("is_interrupt"):
            return Action("stop", f"{event}:interrupt", provider_session_end=False, turn_end=True)
        return tool_activity(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",), "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        if kind in SOFT_LOCK_NOTIFICATIONS or kind in idle:
            return Action("softlock", kind)
        if kind in ACTIVITY_NOTIFICATIONS:
            return Action("activity", kind)
        return IGNORE
    work = _WORK_EVENTS.get(name)
    if work is not None:
        return background_work(event, payload, *work)
    if name == "elicitation":
        return Action("elicitation")
    if name == "permissionrequest":
        return Action("permission")
    if name in ("stop", "sessionend"):
        detail = payload.text("reason")
        reason = f"{event}:{detail}" if detail else event
        interrupt = payload.flag("is_interrupt")
        return stop_action(payload, reason, provider_session_end=not interrupt,
                           blocking=name == "stop" and not interrupt, turn_end=name == "stop")
    if name == "stopfailure":
        return stop_action(payload, event, provider_session_end=False, turn_end=True)
    return IGNORE


# -- hooks another agent runs (issue 35.4; AGENT_CLIS_NEW.md "Foreign-config cross-firing"): Copilot CLI and
# Devin read a repository's .claude/settings.json, Grok Build ~/.claude/settings.json, Cursor loads Claude
# Code's hooks. The caller is a registry key (an agent lidguard knows) or a Custom provider name.
CALLER_ENV = (("CURSOR_VERSION", "Cursor"), ("GROK_HOOK_EVENT", "Grok"), ("DEVIN_PROJECT_DIR", "Devin"))
# payload keys only that caller sends (Cursor: cursor_version/conversation_id; Copilot: toolArgs, ms timestamp)
CALLER_KEYS = (("cursor_version", "Cursor"), ("conversation_id", "Cursor"), ("toolArgs", "copilot"))
CALLER_PROCESSES = {"copilot": "copilot", "cursor-agent": "Cursor", "cursor": "Cursor", "grok": "Grok",
                    "devin": "Devin"}


def real_caller(env: Mapping[str, str], data: Mapping[str, Any],
                ancestry: Callable[[], Iterable[str]] | None = None) -> str:
    """Who runs this claude-hook: "" for Claude Code itself, else a registry key or a Custom name.

    The environment first, then the payload's shape, then (only for a payload without Claude Code's
    ``transcript_path``, so a plain Claude event never reads /proc) the command names of the ancestors."""
    for variable, caller in CALLER_ENV:
        value = env.get(variable)
        if isinstance(value, str) and value.strip():
            return caller
    for key, caller in CALLER_KEYS:
        if data.get(key) not in (None, ""):
            return caller
    if isinstance(data.get("transcript_path"), str) and data.get("transcript_path"):
        return ""
    if "sessionId" in data and type(data.get("timestamp")) is int:
        return "copilot"
    if ancestry is not None:
        try:
            for name in ancestry():
                found = CALLER_PROCESSES.get(str(name).lower())
                if found is not None:
                    return found
                if str(name).lower() in PROCESS_COMMANDS:
                    return ""
        except Exception:  # noqa: BLE001 - no ancestry: Claude Code, as before
            return ""
    return ""


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key).lstrip("_")


def foreign_caller(payload: Payload, env: Mapping[str, str],
                   ancestry: Callable[[], Iterable[str]] | None = None) -> tuple[str, str, bool, str] | None:
    """None for Claude Code; else (wire provider, provider name, ignore, ancestry provider) for the agent
    that runs this hook, its camelCase keys copied to the snake_case names :func:`map_event` reads.
    ``ignore``: that agent has its own lidguard hook installed, so the event would count twice."""
    caller = real_caller(env, payload.data, ancestry)
    if not caller:
        return None
    for key in [k for k in payload.data if isinstance(k, str) and k != k.lower()]:
        payload.data.setdefault(_snake(key), payload.data[key])
    import os

    if caller == "copilot":
        home = env.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")
        return "GitHubCopilot", "", os.path.isfile(os.path.join(home, "hooks", "lidguard.json")), "copilot"
    if caller == "Cursor":  # Cursor also runs its own hooks file: with lidguard's cursor-hook in it, step aside
        from . import cursor

        return "Custom", caller, cursor.runs_lidguard_hook(env.get("HOME") or os.path.expanduser("~")), "custom"
    return "Custom", caller, False, "custom"


def caller_ancestry(pid: int | None = None) -> list[str]:
    """The command names above this hook (``pid``: the native hook client's, else this process); read
    only when the payload shape leaves the caller open."""
    from .. import proctree

    return [process.name for process in proctree.read_ancestry(pid)[1:]]


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: the nested shape; a deny also interrupts the turn."""
    from ..hooks.outputs import nested_permission

    return nested_permission(decision, interrupt=True)


def elicitation_output() -> dict[str, Any]:
    from ..hooks.outputs import elicitation_output

    return elicitation_output()


# -- its installer: the Claude-style hooks table of its settings.json (installers/settings_hooks.py) ----------
SCHEMA = "https://json.schemastore.org/claude-code-settings.json"
_SOFT_LOCK_MATCHER = "permission_prompt|idle_prompt|elicitation_dialog|elicitation_complete|elicitation_response"
# event -> (matcher, status message), in the order installed; Stop may block for the follow-up (REFERENCE 5.2)
EVENTS = hook_table("Claude", "UserPromptSubmit=start PreToolUse*=tool PostToolUse*=tool-done "
                              "PostToolUseFailure*=tool-failed Notification=soft-lock PermissionRequest*=permission "
                              "Elicitation=elicitation SubagentStart=subagent SubagentStop=subagent-done "
                              "TaskCreated=task TaskCompleted=task-done Stop=stop StopFailure=stop SessionEnd=stop",
                    {"Notification": _SOFT_LOCK_MATCHER})


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("CLAUDE_CONFIG_DIR", home() / ".claude")


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    shell = default_shell()
    result = []
    for event, (matcher, message) in EVENTS.items():
        handler: dict[str, Any] = {"type": "command", "command": hook_command(f"{KEY}-hook", shell=shell)}
        if shell == "powershell":
            handler["shell"] = "powershell"
        handler["timeout"] = stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        handler["statusMessage"] = message
        result.append(HookSpec(event, matcher, handler))
    return result


def installer() -> SettingsInstaller:
    from ..installers.settings_hooks import SettingsInstaller

    return SettingsInstaller(sys.modules[__name__], _status)


def _status(root: dict[str, Any], head: list[str], events: list[str]) -> list[str]:
    if root.get("disableAllHooks") is True:
        head.append("Warning: disableAllHooks is true in this settings file; Claude Code runs no hooks.")
    return head + events


# -- its own keep-awake (issue 35.5; read in the pinned 2.1.197 binary): no setting - while a query runs it
# keeps ``caffeinate -i -t 300`` running on macOS (restarted every 240 s) and kills it 30 s after the last
# query ends; 2.1.197 holds nothing on Linux (AGENT_CLIS_NEW.md names a ``sleep:idle`` block inhibitor during
# turns in newer builds, which blocks ``systemctl suspend`` while held).
def own_keep_awake(env: Mapping[str, str]) -> OwnKeepAwake:
    from .keep_awake import OwnKeepAwake

    return OwnKeepAwake(DISPLAY, "always on during its turns (no setting): macOS caffeinate -i -t 300, kept "
                                 "for 30 s after a turn ends (newer builds: a sleep:idle block inhibitor on Linux "
                                 "while a turn runs). It can hold lidguard's suspend for up to 30 s after the "
                                 "session ends, or up to 300 s when Claude Code was killed while holding it: "
                                 "lidguard's suspend waits for it unless SuspendIgnoresOtherBlockers is on.",
                        True, "", None)
