"""Gemini CLI 0.61 (AGENT_CLIS_MORE.md 1): ``lidguard gemini-hook`` from the ``hooks`` object of
``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``; installer: ``installers/gemini.py``).

BeforeAgent carries the prompt (again, with the reason, after a blocking AfterAgent), AfterAgent ends the
turn and may block, SessionEnd ends the session. No hook can approve a tool, so BeforeTool is a deny-only
permission for the tools Gemini confirms, never for a tool the command line lets run unasked. No tool
call id: tool calls pair by name. Ancestry: ``hook <- node .../.bin/gemini`` (the relaunched child)
``<- node .../.bin/gemini`` (launcher). Stdlib only.
"""

from __future__ import annotations

from ..ipc.limits import MAX_TOOL_CALL_ID_CHARS
from . import IGNORE, PERMISSION_PROMPT, Action, stop_action, stop_with_detail, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from ..hooks.payload import Payload

KEY = "gemini"
PROVIDER = "Gemini"
DISPLAY = "Gemini CLI"
ALIASES = ("gemini-cli",)
CONFIG_TEXT = "settings.json ($GEMINI_CLI_HOME/.gemini or ~/.gemini)"
HOOK_HELP = ("Gemini CLI hook (reads the event JSON on stdin).",
             "Gemini CLI command hook: BeforeAgent starts the session, BeforeTool/AfterTool are activity, "
             "a ToolPermission notification soft-locks it, AfterAgent/SessionEnd end it; with the lid "
             "closed and the decision Deny it denies BeforeTool of tools Gemini would confirm (never under "
             "--yolo, --approval-mode auto_edit for edits, or --allowed-tools; nothing can approve a tool "
             "there). Always exits 0.")
EVENT_OPTION = False
PID_HINT_KEY = ""
PROCESS_COMMANDS = frozenset({"gemini"})
PROCESS_PACKAGES = ("@google/gemini-cli",)
QUIET_TOOLS = frozenset({""})
# Tools its default policy confirms (AGENT_CLIS_MORE.md 1.5); MCP tools (``mcp_context``) too.
CONFIRMED_TOOLS = frozenset({"run_shell_command", "write_file", "replace", "web_fetch"})
LOG_DETAILS = (("tool", ("tool_name",)), ("reason", ("reason",)), ("notificationType", ("notification_type",)),
               ("transcriptPath", ("transcript_path",)))


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "beforeagent":
        return Action("start", prompt=payload.text("prompt"))
    if name == "beforetool":
        tool = payload.text("tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        if tool in CONFIRMED_TOOLS or isinstance(payload.data.get("mcp_context"), dict):
            # Gemini gives no call id: the tool name pairs BeforeTool with AfterTool (as for Copilot).
            return Action("permission", f"{event}:{tool}", deny_only=True, tool=tool,
                          tool_call_id=f"tool:{tool}"[:MAX_TOOL_CALL_ID_CHARS], tool_state="Running")
        return tool_activity(event, tool, QUIET_TOOLS, payload, (), "Running")
    if name == "aftertool":
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, (), "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        return Action("softlock", PERMISSION_PROMPT) if kind == "toolpermission" else IGNORE
    if name == "afteragent":
        return stop_action(payload, event, blocking=True, message_keys=("prompt_response",))
    if name == "sessionend":
        return stop_with_detail(payload, event, "reason")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """BeforeTool: ``{"decision": "deny", ...}`` only; no hook output approves a tool there."""
    from ..hooks.outputs import DENY_MESSAGE, decision_deny

    return decision_deny(DENY_MESSAGE) if decision == "Deny" else None


def ask_user_output() -> dict[str, Any]:
    from ..hooks.outputs import ASK_USER_DENY_REASON, decision_deny

    return decision_deny(ASK_USER_DENY_REASON)


_VALUE_OPTIONS = frozenset({"-p", "--prompt", "-i", "--prompt-interactive", "-m", "--model"})
_EDIT_TOOLS = frozenset({"write_file", "replace"})


def _unasked(arguments: tuple[str, ...]) -> tuple[str, frozenset[str]]:
    """(approval mode, tools allowed without confirmation) from a Gemini CLI command line: ``--yolo``/``-y``,
    ``--approval-mode MODE`` (the last one wins) and ``--allowed-tools NAME...``. YOLO exists only on the
    command line (the settings offer default, auto_edit and plan)."""
    mode = "default"
    allowed: set[str] = set()
    skip = collecting = False
    for index, word in enumerate(arguments):
        if skip:
            skip = False
            continue
        if collecting and not word.startswith("-"):
            allowed.update(word.split(","))
            continue
        collecting = False
        name, equals, value = word.partition("=")
        if word in _VALUE_OPTIONS:
            skip = True  # a prompt or model that happens to read "--yolo"
        elif word in ("--yolo", "-y", "--yolo=true"):
            mode = "yolo"
        elif name == "--approval-mode":
            mode = value.lower() if equals else (arguments[index + 1].lower() if index + 1 < len(arguments) else mode)
            skip = not equals
        elif name == "--allowed-tools":
            allowed.update(value.split(",") if equals else ())
            collecting = not equals
    return mode, frozenset(allowed)


def approved_without_asking(arguments: tuple[str, ...], tool: str) -> bool:
    """Whether the agent started with ``arguments`` runs ``tool`` without asking anyone: a closed-lid Deny
    would only stop work nobody had to approve (``--yolo``, ``auto_edit`` for file edits, a tool named in
    ``--allowed-tools``). A mode switched inside the TUI later is not visible here; a headless run never
    registers a tool that would ask."""
    mode, allowed = _unasked(arguments)
    return mode == "yolo" or tool in allowed or (mode == "auto_edit" and tool in _EDIT_TOOLS)


def installer() -> ModuleType:
    from ..installers import gemini

    return gemini
