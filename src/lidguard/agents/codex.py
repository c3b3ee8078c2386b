"""Codex CLI (AGENT_CLIS.md): ``lidguard codex-hook`` from ``$CODEX_HOME/hooks.json`` (default ``~/.codex``)
with trust entries in ``config.toml`` (the format: ``installers/toml_trust.py``; Codex's events, trust rules and
``[features]`` checks are below).

Payloads are snake_case with ``hook_event_name``, a ``turn_id`` and ``tool_use_id``; Codex has no
Notification event, so an unanswered PermissionRequest is a wait for the user. ``Interrupt`` ends the turn
like a stop but never as a normal end (no PostSessionEnd); ``SubagentStart``/``SubagentStop`` (``agent_id``,
the child thread; ``session_id`` stays the parent's) keep background work in flight (issue 35.3).
Ancestry: ``hook <- codex`` (native musl ELF) ``<- node .../.bin/codex``; the TUI's hooks run under its
``codex app-server`` daemon, which outlives the TUI: the TUI above it is watched (``matches_process``).
Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, PERMISSION_PROMPT, Action, background_work, hook_table, stop_action, tool_activity, turn_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.toml_trust import TrustedHooksFile, TrustStatus
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


# -- its installer: hooks.json + trust entries in config.toml (installers/toml_trust.py) ------------------------
# event -> (matcher, status message), in the order installed
EVENTS = hook_table("Codex", "UserPromptSubmit=start PreToolUse*=tool PostToolUse*=tool-done "
                             "PermissionRequest*=permission SubagentStart=subagent SubagentStop=subagent-done "
                             "Stop=stop Interrupt=turn-stop SessionEnd=stop")
# How Codex normalizes a handler before it hashes it for trust (snake_case event names): the events whose
# matcher is part of the identity, the events it runs at most 3 s, and a handler's timeout when it has none.
MATCHER_EVENTS = frozenset({"permission_request", "post_compact", "post_tool_use", "pre_compact", "pre_tool_use",
                            "session_start"})
CLAMPED_EVENTS = {"session_end": 3, "interrupt": 3}
CODEX_DEFAULT_TIMEOUT = 600


def codex_home() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("CODEX_HOME", home() / ".codex")


config_root = codex_home


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, hook_command
    from ..installers.hooks_json import HookSpec
    from ..installers.toml_trust import snake

    result = []
    for event, (matcher, message) in EVENTS.items():
        timeout = stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        if snake(event) in CLAMPED_EVENTS:
            timeout = CLAMPED_EVENTS[snake(event)]
        handler = {"type": "command", "command": hook_command(f"{KEY}-hook"), "timeout": timeout,
                   "statusMessage": message}
        result.append(HookSpec(event, matcher, handler))
    return result


def installer() -> TrustedHooksFile:
    """hook-install / hook-remove / hook-status for ``$CODEX_HOME/hooks.json`` and its trust in config.toml."""
    from ..installers.toml_trust import TrustedHooksFile

    return TrustedHooksFile(DISPLAY, "Codex", codex_home, tuple(EVENTS), specs, f"{KEY}-hook", MATCHER_EVENTS,
                            CLAMPED_EVENTS, CODEX_DEFAULT_TIMEOUT, _status, _install_notes)


def _install_notes(config: Any) -> list[str]:
    problem = feature_problem(config)
    return [problem] if problem else []


def _status(found: TrustStatus) -> list[str]:
    problem = feature_problem(found.config)
    lines = [f"Status: {found.status}", f"Config: {found.hooks_file}", f"Config exists: {found.hooks_exists}",
             f"Trust config: {found.config_file}", f"Trust config exists: {found.config_exists}",
             f"Feature flag: {'off' if problem else 'on'}", f"Feature flag from: {_flag_source(found.config)}"]
    lines += [f"{event}: {found.states[event]}" for event in EVENTS]
    lines.append(f"Untrusted hooks: {', '.join(found.untrusted) if found.untrusted else 'none'}")
    if problem:
        lines.append(f"Warning: {problem}")
    note = feature_note(found.config)
    if note:
        lines.append(f"Note: {note}")
    return lines


# ``[features] hooks = false`` (or the old ``codex_hooks = false``) in config.toml turns every hook off: reported,
# never changed.
def _features(doc: Any) -> dict[str, Any]:
    features = doc.get("features") if isinstance(doc, dict) else None
    return features if isinstance(features, dict) else {}


def feature_key(doc: Any) -> str | None:
    """The ``[features]`` key that decides whether Codex runs hooks: ``hooks`` (canonical) when set, else the
    deprecated alias ``codex_hooks``; None when neither is (hooks are on by default)."""
    features = _features(doc)
    for name in ("hooks", "codex_hooks"):
        if isinstance(features.get(name), bool):
            return name
    return None


def feature_problem(doc: Any) -> str | None:
    name = feature_key(doc)
    if name is None or _features(doc)[name] is not False:
        return None
    return (f"[features] {name} = false in config.toml turns every Codex hook off; LidGuard's hooks "
            f"will not run until you remove that line (or set it to true).")


def feature_note(doc: Any) -> str | None:
    """A note when config.toml still spells the flag ``codex_hooks`` (deprecated; Codex prints a notice)."""
    if "codex_hooks" not in _features(doc):
        return None
    return ("[features] codex_hooks in config.toml is a deprecated alias of [features] hooks"
            + ("; hooks decides." if "hooks" in _features(doc) else "; rename it to hooks."))


def _flag_source(doc: Any) -> str:
    key = feature_key(doc)
    return f"[features] {key}" if key else "[features] hooks not set: on by default"


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
