"""The agents lidguard hooks into: one module per agent, this registry, and the actions they map to.

Stdlib only (hook hot path). Each agent module (``claude``, ``codex``, ...) holds everything about that
agent - its names and aliases, its hook command, its payload mapping (``map_event``), its output contract
(``permission_output``, ``ask_user_output``), its ancestry owner rules, its hook log details and where its
installer lives. ``hooks/`` is the provider-free engine that asks the agent module; the CLI, the
installers and every list a user reads take the agents from :data:`AGENTS`.

The registry is lazy: :func:`agent` imports one agent's module, so a hook of one agent loads only that
agent's module (``tests/hooks/test_hook_imports.py``). A new agent is one line in :data:`AGENTS` and
its module (AGENTS.md "A new agent"). Optional attributes, with their defaults: ``EVENT_OPTION = False``
(True: the event comes as ``--event NAME``), ``EVENT_KEYS`` (the payload keys naming the event; default
``hook_event_name`` and its spellings), ``SESSION_KEYS`` (the session id's keys), ``continuation_output(reply)``
(a Stop's ask-before-sleep continuation in the agent's own shape), ``PID_HINT_KEY = ""`` (a payload key
naming the agent's own pid), ``matches_process``, ``ask_user_output``, ``elicitation_output``,
``approved_without_asking``, ``STOP_TIMEOUT = True`` (False: its hooks carry no Stop timeout),
``MAP_EVENT_CONTEXT = False`` (True: ``map_event(event, payload, context)`` also gets the hook's context -
its ``environ``, ``cwd`` and ``ancestry_pid`` -, which is not this process's when the runtime answers the
native hook client: an agent module never reads ``os.environ``, the cwd or its own ancestry for the hook's).

Kinds of :class:`Action` (what the engine does for one hook event):

* ``start``: the turn's prompt (auto-starts the runtime, carries the prompt preview and settings); with
  ``if_not_running`` (an agent with tool events only: Crush) it starts only a session that is not running and
  is that session's activity (``reason``) otherwise, so its first tool call starts the turn and the next ones
  renew it;
* ``activity`` / ``softlock``: ``mark-session-active`` / ``mark-session-softlocked`` with ``reason``;
* ``stop``: ``stop`` with ``IsProviderSessionEnd`` and ``SessionEndReason`` (``reason``); ``turn_end``: it ends
  only the turn (``IsTurnEnd``: deferred while background work runs);
* ``activity`` with ``background``: a subagent or task that started (``Running``) or ended (``Finished``),
  by ``tool_call_id`` (``BackgroundWork``: work that may outlive the turn, issue 35.3);
* ``permission`` / ``elicitation`` / ``ask_user``: closed-lid decisions (the engine asks ``status``);
  a ``deny_only`` permission (Gemini BeforeTool: no hook can approve a tool there) is tool activity
  unless the lid is closed and the decision is Deny;
* ``ignore``: logged only.
"""

from __future__ import annotations

import sys

from ..ipc.limits import MAX_TOOL_CALL_ID_CHARS, MAX_TURN_ID_CHARS

TYPE_CHECKING = False  # typing costs the hook path ~2 ms
if TYPE_CHECKING:
    from types import ModuleType

    from ..hooks.payload import Payload

__all__ = [
    "AGENTS",
    "IGNORE",
    "PERMISSION_PROMPT",
    "background_work",
    "Action",
    "agent",
    "agent_for_hook_command",
    "all_agents",
    "hook_commands",
    "running_background_tasks",
    "stop_action",
    "tool_activity",
    "turn_of",
]

# The registry: agent key (its module, its `<key>-hook` command, its CLI word) -> its wire `Provider`
# (a value of providers.AgentProvider). One line per agent, in the order every list shows them.
AGENTS: dict[str, str] = {
    "claude": "Claude",
    "codex": "Codex",
    "copilot": "GitHubCopilot",
    "opencode": "OpenCode",
    "gemini": "Gemini",
    "qwen": "Qwen",
    "cursor": "Cursor",
    "droid": "Droid",
    "cline": "Cline",
    "kilo": "KiloCode",
    "openhands": "OpenHands",
    "auggie": "Augment",
    "qoder": "Qoder",
    "crush": "Crush",
}


def agent(key: str) -> ModuleType | None:
    """The module of agent ``key`` (imported on first use); None for a key the registry does not list."""
    if key not in AGENTS:
        return None
    name = f"{__name__}.{key}"
    module = sys.modules.get(name)
    if module is None:
        __import__(name)  # not importlib: the hook path never loads it
        module = sys.modules[name]
    return module


def all_agents() -> list[ModuleType]:
    """Every agent module in registry order (imports them all: never on the hook path)."""
    return [module for module in map(agent, AGENTS) if module is not None]


def hook_commands() -> dict[str, str]:
    """``<key>-hook`` -> agent key, without importing any agent module."""
    return {f"{key}-hook": key for key in AGENTS}


def agent_for_hook_command(command: str) -> str | None:
    key = command.lower().removesuffix("-hook")
    return key if command.lower().endswith("-hook") and key in AGENTS else None


# -- the actions agent modules map their events to ------------------------------------------------------
PERMISSION_PROMPT = "permission_prompt"
SOFT_LOCK_NOTIFICATIONS = frozenset({"permission_prompt", "elicitation_dialog"})
ACTIVITY_NOTIFICATIONS = frozenset({"elicitation_complete", "elicitation_response"})


class Action:
    """What the engine does for one hook event."""

    __slots__ = ("kind", "reason", "provider_session_end", "prompt", "stop_hook_active",
                 "last_assistant_message", "softlock_without_decision", "blocking", "deny_only", "tool",
                 "turn_id", "tool_call_id", "tool_state", "pending_work", "background", "turn_end",
                 "if_not_running")

    def __init__(self, kind: str, reason: str = "", *, provider_session_end: bool = False, prompt: str = "",
                 stop_hook_active: bool = False, last_assistant_message: str = "",
                 softlock_without_decision: str = "", blocking: bool = False, deny_only: bool = False,
                 tool: str = "", turn_id: str = "", tool_call_id: str = "", tool_state: str = "",
                 pending_work: int = 0, background: bool = False, turn_end: bool = False,
                 if_not_running: bool = False) -> None:
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
        self.background = background  # tool_call_id names a subagent/task, not a tool
        self.turn_end = turn_end  # a stop of the turn only: background work still running defers it
        self.if_not_running = if_not_running  # a start that is a running session's activity (``reason``)

    def __repr__(self) -> str:
        return f"Action({self.kind!r}, {self.reason!r})"


IGNORE = Action("ignore")


def tool_activity(event: str, tool: str, quiet: frozenset[str], payload: Payload | None = None,
                  call_keys: tuple[str, ...] = (), state: str = "") -> Action:
    """Tool activity; with ``call_keys``/``state``, the tool call that starts (``Running``) or
    finishes (``Finished``), by the provider's call id (or the tool name where it gives none)."""
    if tool.lower() in quiet:
        return IGNORE
    call = ""
    if payload is not None and state:
        call = payload.text(*call_keys) if call_keys else f"tool:{tool}"
    return Action("activity", f"{event}:{tool}", tool_call_id=call[:MAX_TOOL_CALL_ID_CHARS], tool_state=state,
                  turn_id=turn_of(payload))


def background_work(event: str, payload: Payload, kind: str, keys: tuple[str, ...], state: str) -> Action:
    """A subagent or task that started (``Running``) or ended (``Finished``): activity that keeps
    ``<kind>:<id>`` in flight meanwhile (the id under ``keys``; ``kind`` alone when the payload gives none)."""
    work = payload.text(*keys)
    work_id = f"{kind}:{work}" if work else kind
    return Action("activity", f"{event}:{state}", tool_call_id=work_id[:MAX_TOOL_CALL_ID_CHARS], tool_state=state,
                  background=True, turn_id=turn_of(payload))


def turn_of(payload: Payload | None) -> str:
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


def stop_action(payload: Payload, reason: str, *, provider_session_end: bool = True, blocking: bool = False,
                message_keys: tuple[str, ...] = _LAST_MESSAGE_KEYS, turn_end: bool = False) -> Action:
    return Action("stop", reason, provider_session_end=provider_session_end, blocking=blocking, turn_end=turn_end,
                  stop_hook_active=payload.flag("stop_hook_active", "stopHookActive"),
                  last_assistant_message=payload.text(*message_keys),
                  turn_id=turn_of(payload), pending_work=running_background_tasks(payload))


def stop_with_detail(payload: Payload, event: str, *keys: str, blocking: bool = False,
                     turn_end: bool = False) -> Action:
    """A stop whose reason is ``<event>:<detail>`` when the payload names one under ``keys``."""
    detail = payload.text(*keys)
    return stop_action(payload, f"{event}:{detail}" if detail else event, blocking=blocking, turn_end=turn_end)


# -- the status messages of installed hooks (the agent shows them while the hook runs) -------------------------
# One wording for every agent whose hooks carry a status message (Claude Code, Codex): ``{product}`` is the agent.
# Changing one changes every installed hook's text (hook-status then reports NeedsUpdate until a re-install).
STATUS_MESSAGES = {
    "start": "Starting LidGuard turn protection",
    "tool": "Recording {product} tool activity",
    "tool-done": "Recording {product} tool completion activity",
    "tool-failed": "Recording {product} failed tool activity",
    "soft-lock": "Recording {product} soft-lock telemetry",
    "permission": "Responding to closed-lid permission request",
    "elicitation": "Canceling closed-lid elicitation request",
    "subagent": "Recording {product} subagent activity",
    "subagent-done": "Recording {product} subagent completion activity",
    "task": "Recording {product} task activity",
    "task-done": "Recording {product} task completion activity",
    "stop": "Stopping LidGuard session protection",
    "turn-stop": "Stopping LidGuard turn protection",
}


def hook_table(product: str, spec: str, matchers: dict[str, str] | None = None) -> dict[str, tuple[str | None, str]]:
    """``event -> (matcher, status message)`` from ``spec``, words ``Event=kind`` or ``Event*=kind`` (matcher
    ``*``), in order; ``matchers`` gives an event another matcher. The kinds are :data:`STATUS_MESSAGES`'."""
    table: dict[str, tuple[str | None, str]] = {}
    for word in spec.split():
        event, kind = word.split("=")
        matcher: str | None = "*" if event.endswith("*") else None
        event = event.rstrip("*")
        table[event] = ((matchers or {}).get(event, matcher), STATUS_MESSAGES[kind].format(product=product))
    return table
