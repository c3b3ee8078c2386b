"""Claude Code (REFERENCE 5.2, AGENT_CLIS.md): ``lidguard claude-hook`` from the ``hooks`` object of
``$CLAUDE_CONFIG_DIR/settings.json`` (default ``~/.claude``; installer: ``installers/claude.py``).

Payloads are snake_case and name their event in ``hook_event_name``; tool calls pair by ``tool_use_id``;
a Stop while ``run_in_background`` tasks run carries them in ``background_tasks`` (a deferred stop).
Ancestry: ``hook <- /bin/sh -c <cmd> <- claude`` (native, exe ``.../bin/claude.exe``). Stdlib only.
"""

from __future__ import annotations

from . import (
    ACTIVITY_NOTIFICATIONS,
    IGNORE,
    SOFT_LOCK_NOTIFICATIONS,
    Action,
    stop_action,
    tool_activity,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from ..hooks.payload import Payload

KEY = "claude"
PROVIDER = "Claude"
DISPLAY = "Claude Code"
ALIASES = ("claude-code",)
CONFIG_TEXT = "settings.json ($CLAUDE_CONFIG_DIR or ~/.claude)"
HOOK_HELP = ("Claude Code hook (reads the event JSON on stdin).",
             "Claude Code command hook: UserPromptSubmit starts the session, tool use is activity, "
             "permission/elicitation notifications soft-lock it, Stop/SessionEnd end it; with the lid "
             "closed it answers PermissionRequest (ClosedLidPermissionRequestDecision) and cancels "
             "Elicitation. Always exits 0.")
EVENT_OPTION = False  # the payload names its event
PID_HINT_KEY = ""
# Ancestry: the names its native program or npm bin goes by, and its npm packages.
PROCESS_COMMANDS = frozenset({"claude"})
PROCESS_PACKAGES = ("@anthropic-ai/claude-code",)
QUIET_TOOLS = frozenset({"", "askuserquestion"})
# REFERENCE 3.3: the detail keys of the hook log's "received" line (key, payload keys).
LOG_DETAILS = (("permissionMode", ("permission_mode",)), ("tool", ("tool_name",)), ("reason", ("reason",)),
               ("notificationType", ("notification_type",)), ("transcriptPath", ("transcript_path",)),
               ("isInterrupt", ("is_interrupt",)))


def map_event(event: str, payload: Payload, quiet: frozenset[str] = QUIET_TOOLS) -> Action:
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"))
    if name in ("pretooluse", "posttooluse"):
        return tool_activity(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "posttoolusefailure":
        if payload.flag("is_interrupt"):
            return Action("stop", f"{event}:interrupt", provider_session_end=False)
        return tool_activity(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",), "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        if kind in SOFT_LOCK_NOTIFICATIONS:
            return Action("softlock", kind)
        if kind in ACTIVITY_NOTIFICATIONS:
            return Action("activity", kind)
        return IGNORE
    if name == "elicitation":
        return Action("elicitation")
    if name == "permissionrequest":
        return Action("permission")
    if name in ("stop", "sessionend"):
        detail = payload.text("reason")
        reason = f"{event}:{detail}" if detail else event
        interrupt = payload.flag("is_interrupt")
        return stop_action(payload, reason, provider_session_end=not interrupt,
                           blocking=name == "stop" and not interrupt)
    if name == "stopfailure":
        return stop_action(payload, event, provider_session_end=False)
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: the nested shape; a deny also interrupts the turn."""
    from ..hooks.outputs import nested_permission

    return nested_permission(decision, interrupt=True)


def elicitation_output() -> dict[str, Any]:
    from ..hooks.outputs import elicitation_output

    return elicitation_output()


def installer() -> ModuleType:
    from ..installers import claude

    return claude
