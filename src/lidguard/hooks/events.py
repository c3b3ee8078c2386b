"""Which runtime action each provider hook event means (REFERENCE 5, 4.3; AGENT_CLIS.md payloads).

Stdlib only (hook hot path). ``map_event`` turns (provider, event name, payload) into an
:class:`Action`; it never raises and never talks to anything. Kinds:

* ``start``: the turn's prompt (auto-starts the runtime, carries the prompt preview and settings);
* ``activity`` / ``softlock``: ``mark-session-active`` / ``mark-session-softlocked`` with ``reason``;
* ``stop``: ``stop`` with ``IsProviderSessionEnd`` and ``SessionEndReason`` (``reason``);
* ``permission`` / ``elicitation`` / ``ask_user``: closed-lid decisions (the runner asks ``status``);
  a ``deny_only`` permission (Gemini BeforeTool: no hook can approve a tool there) is tool activity
  unless the lid is closed and the decision is Deny;
* ``ignore``: logged only.

Event names: Claude, Codex, Gemini CLI and Qwen Code send ``hook_event_name``; Copilot and OpenCode get
``--event`` (Copilot payloads mostly lack a name; ``hookName``/``hook_event_name`` are the fallback). Names
are matched case-insensitively, and Copilot also accepts the PascalCase aliases (``Stop``, ``UserPromptSubmit``).
Qwen Code is Claude-shaped (AGENT_CLIS_MORE.md 2): the Claude mapping with its own quiet tools, and a
UserPromptSubmit with an empty prompt (sent again for every tool-result turn) is activity, not a start.
"""

from __future__ import annotations

from ..ipc.limits import MAX_TOOL_CALL_ID_CHARS, MAX_TURN_ID_CHARS
from .payload import Payload

__all__ = [
    "ASK_REASON",
    "HOOK_PROVIDERS",
    "Action",
    "approved_without_asking",
    "event_name",
    "log_details",
    "map_event",
    "running_background_tasks",
]

HOOK_PROVIDERS = ("claude", "codex", "copilot", "opencode", "gemini", "qwen")
ASK_REASON = "closed_lid_permission_request_ask"
PERMISSION_PROMPT = "permission_prompt"
_SOFT_LOCK_NOTIFICATIONS = frozenset({"permission_prompt", "elicitation_dialog"})
_ACTIVITY_NOTIFICATIONS = frozenset({"elicitation_complete", "elicitation_response"})
_CLAUDE_QUIET_TOOLS = frozenset({"", "askuserquestion"})
_COPILOT_QUIET_TOOLS = frozenset({"", "ask_user"})
_CODEX_QUIET_TOOLS = frozenset({"", "request_user_input"})
_QWEN_QUIET_TOOLS = frozenset({""})
_GEMINI_QUIET_TOOLS = frozenset({""})
# Gemini CLI tools its default policy confirms (AGENT_CLIS_MORE.md 1.5); MCP tools (``mcp_context``) too.
_GEMINI_CONFIRMED_TOOLS = frozenset({"run_shell_command", "write_file", "replace", "web_fetch"})


class Action:
    """What the runner does for one hook event."""

    __slots__ = ("kind", "reason", "provider_session_end", "prompt", "stop_hook_active",
                 "last_assistant_message", "softlock_without_decision", "blocking", "deny_only", "tool",
                 "turn_id", "tool_call_id", "tool_state", "pending_work")

    def __init__(self, kind: str, reason: str = "", *, provider_session_end: bool = False, prompt: str = "",
                 stop_hook_active: bool = False, last_assistant_message: str = "",
                 softlock_without_decision: str = "", blocking: bool = False, deny_only: bool = False,
                 tool: str = "", turn_id: str = "", tool_call_id: str = "", tool_state: str = "",
                 pending_work: int = 0) -> None:
        self.kind = kind
        self.reason = reason
        self.provider_session_end = provider_session_end
        self.prompt = prompt
        self.stop_hook_active = stop_hook_active
        self.last_assistant_message = last_assistant_message
        self.softlock_without_decision = softlock_without_decision  # no decision printed: still waiting
        self.blocking = blocking  # a Stop the agent waits on: may carry an ask-before-sleep continuation
        self.deny_only = deny_only  # a permission the provider can only deny: otherwise it is activity
        self.tool = tool
        self.turn_id = turn_id  # the provider's turn id (Codex), "" when it gives none
        self.tool_call_id = tool_call_id  # the tool call a PreToolUse starts / a PostToolUse finishes
        self.tool_state = tool_state  # "Running" (started) or "Finished"
        self.pending_work = pending_work  # background tasks still running at a Stop (a deferred stop)

    def __repr__(self) -> str:
        return f"Action({self.kind!r}, {self.reason!r})"


IGNORE = Action("ignore")


def event_name(provider: str, option: str, payload: Payload | None) -> str:
    """The event: ``--event`` for Copilot/OpenCode, else the payload's own name."""
    if option:
        return option
    if payload is None:
        return ""
    return payload.text("hook_event_name", "hookEventName", "hookName", "event")


def _tool_reason(event: str, tool: str, quiet: frozenset[str], payload: Payload | None = None,
                 call_keys: tuple[str, ...] = (), state: str = "") -> Action:
    """Tool activity; with ``call_keys``/``state``, the tool call that starts (``Running``) or
    finishes (``Finished``), by the provider's call id (or the tool name where it gives none)."""
    if tool.lower() in quiet:
        return IGNORE
    call = ""
    if payload is not None and state:
        call = payload.text(*call_keys) if call_keys else f"tool:{tool}"
    return Action("activity", f"{event}:{tool}", tool_call_id=call[:MAX_TOOL_CALL_ID_CHARS], tool_state=state,
                  turn_id=_turn(payload))


def _turn(payload: Payload | None) -> str:
    turn = payload.text("turn_id", "turnId") if payload is not None else ""
    return turn if len(turn) <= MAX_TURN_ID_CHARS else ""


_FINISHED_TASK_STATES = frozenset({"completed", "complete", "done", "failed", "killed", "stopped", "cancelled",
                                   "canceled", "error", "exited", "finished"})


def running_background_tasks(payload: Payload) -> int:
    """Claude's Stop ``background_tasks`` still running (AGENT_CLIS.md: ``status: "running"``); an
    entry without a known finished status counts as running (never sleep while work may run)."""
    tasks = payload.data.get("background_tasks")
    if not isinstance(tasks, list):
        return 0
    running = 0
    for task in tasks[:1000]:
        if not isinstance(task, dict):
            continue
        status = task.get("status")
        if not (isinstance(status, str) and status.strip().lower() in _FINISHED_TASK_STATES):
            running += 1
    return running


_LAST_MESSAGE_KEYS = ("last_assistant_message", "lastAssistantMessage")


def _stop(payload: Payload, reason: str, *, provider_session_end: bool = True, blocking: bool = False,
          message_keys: tuple[str, ...] = _LAST_MESSAGE_KEYS) -> Action:
    return Action("stop", reason, provider_session_end=provider_session_end, blocking=blocking,
                  stop_hook_active=payload.flag("stop_hook_active", "stopHookActive"),
                  last_assistant_message=payload.text(*message_keys),
                  turn_id=_turn(payload), pending_work=running_background_tasks(payload))


def _claude(event: str, payload: Payload, quiet: frozenset[str] = _CLAUDE_QUIET_TOOLS) -> Action:
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"))
    if name in ("pretooluse", "posttooluse"):
        return _tool_reason(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",),
                            "Running" if name == "pretooluse" else "Finished")
    if name == "posttoolusefailure":
        if payload.flag("is_interrupt"):
            return Action("stop", f"{event}:interrupt", provider_session_end=False)
        return _tool_reason(event, payload.text("tool_name"), quiet, payload, ("tool_use_id",),
                            "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        if kind in _SOFT_LOCK_NOTIFICATIONS:
            return Action("softlock", kind)
        if kind in _ACTIVITY_NOTIFICATIONS:
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
        return _stop(payload, reason, provider_session_end=not interrupt, blocking=name == "stop" and not interrupt)
    if name == "stopfailure":
        return _stop(payload, event, provider_session_end=False)
    return IGNORE


def _codex(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"), turn_id=_turn(payload))
    if name in ("pretooluse", "posttooluse"):
        # Not in the original tool: Codex reports tool use too, and a tool call is provider activity.
        return _tool_reason(event, payload.text("tool_name"), _CODEX_QUIET_TOOLS, payload, ("tool_use_id",),
                            "Running" if name == "pretooluse" else "Finished")
    if name == "permissionrequest":
        # Codex has no Notification event: with no decision, the approval dialog is a wait for the user.
        return Action("permission", softlock_without_decision=PERMISSION_PROMPT)
    if name in ("stop", "sessionend"):
        return _stop(payload, event or "codex-hook-stop", blocking=name == "stop")
    return IGNORE


_COPILOT_ALIASES = {
    "stop": "agentstop",
    "userpromptsubmit": "userpromptsubmitted",
}


def _copilot(event: str, payload: Payload) -> Action:
    name = event.lower()
    name = _COPILOT_ALIASES.get(name, name)
    if name == "userpromptsubmitted":
        return Action("start", prompt=payload.text("prompt"))
    if name == "pretooluse":
        tool = payload.text("toolName", "tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        # Copilot gives no tool call id (AGENT_CLIS.md): pre and post pair by the tool's name.
        return _tool_reason(event, tool, _COPILOT_QUIET_TOOLS, payload, (), "Running")
    if name == "posttooluse":
        return _tool_reason(event, payload.text("toolName", "tool_name"), _COPILOT_QUIET_TOOLS, payload, (),
                            "Finished")
    if name == "permissionrequest":
        return Action("permission")
    if name == "notification":
        kind = payload.text("notificationType", "notification_type").lower()
        return Action("softlock", kind) if kind in _SOFT_LOCK_NOTIFICATIONS else IGNORE
    if name == "agentstop":
        detail = payload.text("stopReason", "stop_reason")
        return _stop(payload, f"{event}:{detail}" if detail else event, blocking=True)
    if name == "sessionend":
        detail = payload.text("reason")
        return _stop(payload, f"{event}:{detail}" if detail else event)
    return IGNORE


def _opencode_prompt(payload: Payload) -> str:
    prompt = payload.text("prompt")
    if prompt:
        return prompt
    parts = payload.data.get("parts")
    if not isinstance(parts, list):
        parts = payload.nested("output", "parts")
    texts = [part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)] \
        if isinstance(parts, list) else []
    return Payload({"prompt": "\n".join(texts)}).text("prompt")


def _opencode(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "chat.message":
        return Action("start", prompt=_opencode_prompt(payload))
    if name in ("tool.execute.before", "tool.execute.after"):
        return _tool_reason(event, payload.text("tool", "toolName"), _COPILOT_QUIET_TOOLS, payload,
                            ("callID", "callId"), "Running" if name == "tool.execute.before" else "Finished")
    if name == "permission.asked":
        # OpenCode has no notification event: an unanswered permission is a wait for the user.
        return Action("permission", softlock_without_decision=PERMISSION_PROMPT)
    if name == "permission.replied":
        return Action("activity", event)
    if name == "session.idle":
        return _stop(payload, event, blocking=True)  # the managed plugin waits for the hook's output
    return IGNORE


def _qwen(event: str, payload: Payload) -> Action:
    if event.lower() == "userpromptsubmit" and not payload.text("prompt"):
        return Action("activity", f"{event}:tool-result")  # the tool result going back to the model
    return _claude(event, payload, _QWEN_QUIET_TOOLS)


def _gemini(event: str, payload: Payload) -> Action:
    """Gemini CLI 0.61 (AGENT_CLIS_MORE.md 1): BeforeAgent carries the prompt (again, with the reason, after
    a blocking AfterAgent), AfterAgent ends the turn and may block, SessionEnd ends the session."""
    name = event.lower()
    if name == "beforeagent":
        return Action("start", prompt=payload.text("prompt"))
    if name == "beforetool":
        tool = payload.text("tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        if tool in _GEMINI_CONFIRMED_TOOLS or isinstance(payload.data.get("mcp_context"), dict):
            # Gemini gives no call id: the tool name pairs BeforeTool with AfterTool (as for Copilot).
            return Action("permission", f"{event}:{tool}", deny_only=True, tool=tool,
                          tool_call_id=f"tool:{tool}"[:MAX_TOOL_CALL_ID_CHARS], tool_state="Running")
        return _tool_reason(event, tool, _GEMINI_QUIET_TOOLS, payload, (), "Running")
    if name == "aftertool":
        return _tool_reason(event, payload.text("tool_name"), _GEMINI_QUIET_TOOLS, payload, (), "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        return Action("softlock", PERMISSION_PROMPT) if kind == "toolpermission" else IGNORE
    if name == "afteragent":
        return _stop(payload, event, blocking=True, message_keys=("prompt_response",))
    if name == "sessionend":
        detail = payload.text("reason")
        return _stop(payload, f"{event}:{detail}" if detail else event)
    return IGNORE


_GEMINI_VALUE_OPTIONS = frozenset({"-p", "--prompt", "-i", "--prompt-interactive", "-m", "--model"})
_GEMINI_EDIT_TOOLS = frozenset({"write_file", "replace"})


def _gemini_unasked(arguments: tuple[str, ...]) -> tuple[str, frozenset[str]]:
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
        if word in _GEMINI_VALUE_OPTIONS:
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


def approved_without_asking(provider: str, arguments: tuple[str, ...], tool: str) -> bool:
    """Whether the agent started with ``arguments`` runs ``tool`` without asking anyone: a closed-lid Deny
    would only stop work nobody had to approve (Gemini CLI ``--yolo``, ``auto_edit`` for file edits, a tool
    named in ``--allowed-tools``). A mode switched inside the TUI later is not visible here; a headless run
    never registers a tool that would ask."""
    if provider != "gemini":
        return False
    mode, allowed = _gemini_unasked(arguments)
    return mode == "yolo" or tool in allowed or (mode == "auto_edit" and tool in _GEMINI_EDIT_TOOLS)


_MAPPERS = {"claude": _claude, "codex": _codex, "copilot": _copilot, "opencode": _opencode, "gemini": _gemini,
            "qwen": _qwen}


def map_event(provider: str, event: str, payload: Payload) -> Action:
    """The action for ``event``; unknown providers and events are ``ignore``."""
    mapper = _MAPPERS.get(provider)
    if mapper is None or not event:
        return IGNORE
    return mapper(event, payload)


# REFERENCE 3.3: the detail keys each provider's "received" line carries (key, payload keys).
_DETAILS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "claude": (("permissionMode", ("permission_mode",)), ("tool", ("tool_name",)), ("reason", ("reason",)),
               ("notificationType", ("notification_type",)), ("transcriptPath", ("transcript_path",)),
               ("isInterrupt", ("is_interrupt",))),
    "codex": (("source", ("source",)), ("model", ("model",)), ("tool", ("tool_name",)),
              ("transcriptPath", ("transcript_path",))),
    "copilot": (("tool", ("toolName", "tool_name")), ("source", ("source",)),
                ("stopReason", ("stopReason", "stop_reason")), ("sessionEndReason", ("reason",)),
                ("notificationType", ("notificationType", "notification_type")),
                ("errorContext", ("errorContext", "error_context")), ("recoverable", ("recoverable",))),
    "opencode": (("tool", ("tool", "toolName")), ("permission", ("permission",)), ("reply", ("reply",))),
    "gemini": (("tool", ("tool_name",)), ("reason", ("reason",)), ("notificationType", ("notification_type",)),
               ("transcriptPath", ("transcript_path",))),
}
_DETAILS["qwen"] = _DETAILS["claude"]


def text_summary(text: str) -> str:
    """What the hook event log keeps of a prompt or reply by default: its length and a short hash (CRC-32:
    enough to tell two texts apart or match one the user still has; no hashlib, whose OpenSSL load costs
    a hook milliseconds)."""
    from binascii import crc32

    return f"<{len(text)} chars crc32:{crc32(text.encode('utf-8', 'surrogatepass')):08x}>"


def log_details(provider: str, payload: Payload, action: Action,
                full_text: bool = False) -> list[tuple[str, str]]:
    details: list[tuple[str, str]] = []
    for key, names in _DETAILS.get(provider, ()):
        value = payload.data.get(names[0]) if len(names) == 1 else None
        if isinstance(value, bool):
            details.append((key, "true" if value else "false"))
        else:
            details.append((key, payload.text(*names)))
    if action.kind == "start":
        prompt = action.prompt
        details.append(("prompt", prompt if full_text or not prompt else text_summary(prompt)))
    return details
