"""GitHub Copilot CLI (AGENT_CLIS.md): ``lidguard copilot-hook --event <event>`` from the managed
``$COPILOT_HOME/hooks/lidguard.json`` (default ``~/.copilot``; installer: ``installers/copilot.py``).

Payloads are camelCase and mostly lack an event name (``--event`` names it; the PascalCase aliases
``Stop``/``UserPromptSubmit`` are accepted); there is no tool call id, so tool calls pair by tool name.
Issue 35.3: ``subagentStart``/``subagentStop`` keep background work in flight (by the id or name the payload
gives), ``notification`` ``agent_idle`` soft-locks and ``shell_completed`` is activity, ``errorOccurred``
ends the turn like a failed stop unless Copilot recovers (``recoverable``) or it is a tool's error.
Ancestry: ``hook <- copilot`` (native, comm ``MainThread``) ``<- node .../.bin/copilot``; also ``gh copilot``
and the ``gh-copilot`` extension. Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, SOFT_LOCK_NOTIFICATIONS, Action, background_work, stop_action, stop_with_detail, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

    from ..hooks.payload import Payload
    from ..platform.process_info import ProcessInfo
    from .keep_awake import OwnKeepAwake

KEY = "copilot"
PROVIDER = "GitHubCopilot"
DISPLAY = "GitHub Copilot CLI"
ALIASES = ("github-copilot", "githubcopilot")
CONFIG_TEXT = "hooks/lidguard.json ($COPILOT_HOME or ~/.copilot)"
HOOK_HELP = ("GitHub Copilot CLI hook (--event <name>; event JSON on stdin).",
             "Copilot CLI command hook: userPromptSubmitted starts the session, tool use is activity, "
             "subagents are work in flight, agent_idle soft-locks, agentStop/errorOccurred end the turn, "
             "sessionEnd the session; with the lid closed it answers permissionRequest and denies "
             "ask_user. Always exits 0.")
EVENT_OPTION = True  # `--event NAME`: the payload mostly lacks one
PROCESS_COMMANDS = frozenset({"copilot"})
PROCESS_PACKAGES = ("@github/copilot",)
QUIET_TOOLS = frozenset({"", "ask_user"})
LOG_DETAILS = (("tool", ("toolName", "tool_name")), ("source", ("source",)),
               ("stopReason", ("stopReason", "stop_reason")), ("sessionEndReason", ("reason",)),
               ("notificationType", ("notificationType", "notification_type")),
               ("errorContext", ("errorContext", "error_context")), ("recoverable", ("recoverable",)))
_ALIASES = {"stop": "agentstop", "userpromptsubmit": "userpromptsubmitted"}
SOFT_LOCKS = SOFT_LOCK_NOTIFICATIONS | {"agent_idle"}
ACTIVITY_NOTIFICATIONS = frozenset({"shell_completed"})  # a background shell ended: the agent is at work
# The subagent's id where the payload gives one, else its name (pairs start and stop like tool names).
_SUBAGENT_KEYS = ("agentId", "agent_id", "toolCallId", "tool_call_id", "agentName", "agent_name", "agentType",
                  "agent_type")


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    name = _ALIASES.get(name, name)
    if name == "userpromptsubmitted":
        return Action("start", prompt=payload.text("prompt"))
    if name == "pretooluse":
        tool = payload.text("toolName", "tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        # Copilot gives no tool call id (AGENT_CLIS.md): pre and post pair by the tool's name.
        return tool_activity(event, tool, QUIET_TOOLS, payload, (), "Running")
    if name == "posttooluse":
        return tool_activity(event, payload.text("toolName", "tool_name"), QUIET_TOOLS, payload, (), "Finished")
    if name == "permissionrequest":
        return Action("permission")
    if name == "notification":
        kind = payload.text("notificationType", "notification_type").lower()
        if kind in SOFT_LOCKS:
            return Action("softlock", kind)
        return Action("activity", kind) if kind in ACTIVITY_NOTIFICATIONS else IGNORE
    if name in ("subagentstart", "subagentstop"):
        return background_work(event, payload, "subagent", _SUBAGENT_KEYS,
                               "Running" if name == "subagentstart" else "Finished")
    if name == "erroroccurred":
        context = payload.text("errorContext", "error_context")
        if payload.flag("recoverable") or context == "tool_execution":  # Copilot goes on (a retry, a tool result)
            return Action("activity", f"{event}:{context or 'recoverable'}")
        return stop_action(payload, f"{event}:{context}" if context else event, provider_session_end=False,
                           turn_end=True)
    if name == "agentstop":
        return stop_with_detail(payload, event, "stopReason", "stop_reason", blocking=True, turn_end=True)
    if name == "sessionend":
        return stop_with_detail(payload, event, "reason")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """permissionRequest: the flat shape (Copilot ignores the nested one)."""
    from ..hooks.outputs import behavior

    return behavior(decision)


def ask_user_output() -> dict[str, Any]:
    """preToolUse of ``ask_user``: ``permissionDecision: deny``."""
    from ..hooks.outputs import ASK_USER_DENY_REASON, permission_decision_deny

    return permission_decision_deny(ASK_USER_DENY_REASON)


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """``gh copilot ...`` (the gh command) or the ``gh-copilot`` extension binary."""
    if "gh-copilot" in names:
        return True
    if "gh" not in names:
        return False
    operands = [argument for argument in process.cmdline[1:] if not argument.startswith("-")]
    return operands[:1] == ["copilot"]  # not `gh issue list --search copilot`


def installer() -> ModuleType:
    from ..installers import copilot

    return copilot


# -- its own keep-awake (issue 35.5; AGENT_CLIS_NEW.md, from its docs - not observed in the pinned 1.0.102):
# ``/keep-alive`` is a command typed inside a session, not a setting in a file lidguard could read.
def own_keep_awake(env: Mapping[str, str]) -> OwnKeepAwake:
    from .keep_awake import OwnKeepAwake

    return OwnKeepAwake(DISPLAY, "/keep-alive, typed in a session, keeps the machine awake (not a setting "
                                 "lidguard can read). While it stays on after that session ends it may block "
                                 "lidguard's suspend; the live list above names it when its blocker is held.",
                        True, "/keep-alive", None)
