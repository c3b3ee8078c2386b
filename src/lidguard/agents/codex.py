"""Codex CLI (AGENT_CLIS.md): ``lidguard codex-hook`` from ``$CODEX_HOME/hooks.json`` (default ``~/.codex``)
with trust entries in ``config.toml`` (installer: ``installers/codex.py``).

Payloads are snake_case with ``hook_event_name``, a ``turn_id`` and ``tool_use_id``; Codex has no
Notification event, so an unanswered PermissionRequest is a wait for the user. ``Interrupt`` ends the turn
like a stop but never as a normal end (no PostSessionEnd); ``SubagentStart``/``SubagentStop`` (``agent_id``,
the child thread; ``session_id`` stays the parent's) keep background work in flight (issue 35.3).
Ancestry: ``hook <- codex`` (native musl ELF) ``<- node .../.bin/codex``; the TUI's hooks run under its
``codex app-server`` daemon, which outlives the TUI: the TUI above it is watched (``matches_process``).
Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, PERMISSION_PROMPT, Action, background_work, stop_action, tool_activity, turn_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

    from ..hooks.payload import Payload
    from ..platform.process_info import ProcessInfo
    from .keep_awake import OwnKeepAwake

KEY = "codex"
PROVIDER = "Codex"
DISPLAY = "Codex"
ALIASES: tuple[str, ...] = ()
CONFIG_TEXT = "hooks.json plus trust entries in config.toml ($CODEX_HOME or ~/.codex)"
HOOK_HELP = ("Codex CLI hook (reads the event JSON on stdin).",
             "Codex command hook: UserPromptSubmit starts the session, PreToolUse/PostToolUse are "
             "activity, subagents are work in flight, Stop/Interrupt end the turn, SessionEnd the session; "
             "with the lid closed it answers PermissionRequest. "
             "Always exits 0.")
PROCESS_COMMANDS: frozenset[str] = frozenset()  # "codex", minus its app-server daemon: matches_process
PROCESS_PACKAGES = ("@openai/codex",)
PROGRAM = "codex"
PROCESS_SCRIPTS = frozenset({PROGRAM})  # node .../.bin/codex (the npm wrapper) is the agent too
# The TUI's hooks run under ``codex app-server --listen unix:// ... --managed-daemon``, started by the TUI and
# outliving it (reparented to pid 1; AGENT_CLIS.md): the TUI above it is the process whose exit ends THIS session.
APP_SERVER = "app-server"
QUIET_TOOLS = frozenset({"", "request_user_input"})
LOG_DETAILS = (("source", ("source",)), ("model", ("model",)), ("tool", ("tool_name",)),
               ("transcriptPath", ("transcript_path",)))


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """The ``codex`` program, but never its shared app-server daemon (an orphaned daemon leaves the session
    unwatched: its Stop and SessionEnd hooks end it)."""
    return PROGRAM in names and not is_app_server(process.cmdline)


def is_app_server(cmdline: tuple[str, ...] | list[str]) -> bool:
    """``codex app-server ...`` (the daemon and its ``daemon pid-update-loop`` helper): the subcommand comes
    first, or the daemon marks itself with ``--managed-daemon``."""
    arguments = list(cmdline[1:])
    return bool(arguments) and (arguments[0] == APP_SERVER or "--managed-daemon" in arguments)


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"), turn_id=turn_of(payload))
    if name in ("pretooluse", "posttooluse"):
        # Not in the original tool: Codex reports tool use too, and a tool call is provider activity.
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, ("tool_use_id",),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "permissionrequest":
        # Codex has no Notification event: with no decision, the approval dialog is a wait for the user.
        return Action("permission", softlock_without_decision=PERMISSION_PROMPT)
    if name in ("subagentstart", "subagentstop"):
        return background_work(event, payload, "subagent", ("agent_id",),
                               "Running" if name == "subagentstart" else "Finished")
    if name == "interrupt":  # the user interrupted the turn: not an end that notifies PostSessionEnd
        return stop_action(payload, event, provider_session_end=False, turn_end=True)
    if name in ("stop", "sessionend"):
        return stop_action(payload, event or "codex-hook-stop", blocking=name == "stop", turn_end=name == "stop")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: Claude's nested shape, a deny with ``message`` and no ``interrupt``."""
    from ..hooks.outputs import nested_permission

    return nested_permission(decision)


def installer() -> ModuleType:
    from ..installers import codex

    return codex


# -- its own keep-awake (issue 35.5; observed in the pinned 0.171 binary): ``[features].prevent_idle_sleep``
# in config.toml, an experimental feature ("Keep your computer awake while Codex is running a thread"), off
# unless set; on Linux it runs ``systemd-inhibit --what=idle --mode=block`` (or gnome-session-inhibit) only
# while a turn runs ("Codex is running an active turn").
_TURN_ONLY = ("Codex holds it only while a turn runs (on Linux an idle inhibitor, which no suspend waits "
              "for): it cannot block lidguard's suspend after the session ends")


def own_keep_awake(env: Mapping[str, str]) -> OwnKeepAwake:
    from .keep_awake import OwnKeepAwake, read_switch

    setting, head, on = read_switch(env, "CODEX_HOME", ".codex", "config.toml", "features", "prevent_idle_sleep",
                                    default=False, unset_note="an experimental feature, off unless turned on")
    return OwnKeepAwake(DISPLAY, f"{head}. {'' if on else 'When on, '}{_TURN_ONLY}.", False, setting, on)
