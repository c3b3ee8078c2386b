"""Factory Droid 0.225 (``@factory/cli``; AGENT_CLIS_NEW.md 1): ``lidguard droid-hook`` from
``~/.factory/hooks.json`` (``$FACTORY_HOME_OVERRIDE`` replaces the home folder), whose event names are the
file's top-level keys - no ``"hooks"`` wrapper (Droid ignores one) - each a Claude-style list of matcher groups.

Payloads are snake_case with ``hook_event_name`` and ``session_id``. ``droid exec`` sends no
UserPromptSubmit: its SessionStart starts the session. The TUI sends SessionStart at launch (ignored: nobody
has asked for anything yet) and UserPromptSubmit per prompt. Tool calls carry no id and pair by tool name.
Notification ``permission_prompt`` (the approval dialog) soft-locks. Stop ends the turn and continues it on
``{"decision": "block", "reason": ...}`` (the next Stop has ``stop_hook_active``). SessionEnd comes twice when
the TUI quits (the TUI's and its worker's). There is no PermissionRequest event.
Ancestry: exec ``hook <- sh -c <- droid`` (native Bun ELF; the npm shim ``node .../.bin/droid`` above it when
the postinstall did not link the binary); TUI ``hook <- sh -c <- droid exec --input-format stream-jsonrpc ...``
(its worker, skipped) ``<- droid`` (the TUI, watched). Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, PERMISSION_PROMPT, Action, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_file import HooksFile
    from ..installers.hooks_json import HookSpec
    from ..platform.process_info import ProcessInfo

KEY = "droid"
PROVIDER = "Droid"
DISPLAY = "Factory Droid"
ALIASES = ("factory-droid", "factory")
CONFIG_TEXT = "hooks.json ($FACTORY_HOME_OVERRIDE/.factory or ~/.factory)"
HOOK_HELP = ("Factory Droid hook (reads the event JSON on stdin).",
             "Factory Droid command hook: UserPromptSubmit (and, for droid exec, SessionStart) starts the session, "
             "tool use is activity, a permission_prompt notification soft-locks it, Stop/SessionEnd end it "
             "(ask-before-sleep continues a Stop). Always exits 0.")
# Ancestry: matched by matches_process alone - its program name "droid" is also its TUI's worker's, skipped.
PROCESS_COMMANDS: frozenset[str] = frozenset()
PROCESS_PACKAGES = ("@factory/cli",)
PROGRAM = "droid"
WORKER_MARK = "stream-jsonrpc"  # the TUI's worker: droid exec --input-format stream-jsonrpc ...
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("permissionMode", ("permission_mode",)), ("tool", ("tool_name",)), ("source", ("source",)),
               ("reason", ("reason",)), ("notificationType", ("notification_type",)),
               ("stopHookActive", ("stop_hook_active",)), ("transcriptPath", ("transcript_path",)))
_RUNNERS = frozenset({"node", "nodejs", "bun"})


MAP_EVENT_CONTEXT = True  # SessionStart reads the hook's ancestry (the runtime's is not it: issue 36)


def map_event(event: str, payload: Payload, context: Any = None) -> Action:  # hooks.runner.HookEnvironment
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("prompt"))
    if name == "sessionstart":
        # droid exec has no UserPromptSubmit; the TUI's launch (from its worker) is no work yet.
        try:
            tui = started_by_worker(hook_ancestry(context.ancestry_pid if context is not None else None))
        except Exception:  # noqa: BLE001 - no ancestry: protect, as for exec
            tui = False
        return IGNORE if tui else Action("start")
    if name in ("pretooluse", "posttooluse"):
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, (),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        return Action("softlock", PERMISSION_PROMPT) if kind == PERMISSION_PROMPT else IGNORE
    if name == "subagentstop":
        return Action("activity", event)  # a subagent handed its result back: the agent goes on
    if name in ("stop", "sessionend"):
        detail = payload.text("reason")
        return stop_action(payload, f"{event}:{detail}" if detail else event, blocking=name == "stop",
                           turn_end=name == "stop")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """Droid has no PermissionRequest event: nothing is ever decided for it."""
    return None


def hook_ancestry(pid: int | None = None) -> Sequence[ProcessInfo]:
    """The hook's ancestors: ``pid`` (the native client the runtime answers) or this hook process."""
    from .. import proctree

    return proctree.read_ancestry(pid)


def started_by_worker(chain: Sequence[ProcessInfo]) -> bool:
    """Whether the closest droid above the hook (``chain[0]``) is a TUI's stream-jsonrpc worker."""
    for process in chain[1:]:
        if _is_droid(process):
            return is_worker(process.cmdline)
    return False


def is_worker(cmdline: Sequence[str]) -> bool:
    """``droid exec --input-format stream-jsonrpc ...`` (or ``--input-format=stream-jsonrpc``): a TUI's worker."""
    for index, argument in enumerate(cmdline):
        if argument == f"--input-format={WORKER_MARK}":
            return True
        if argument == "--input-format" and index + 1 < len(cmdline) and cmdline[index + 1] == WORKER_MARK:
            return True
    return False


def _is_droid(process: ProcessInfo) -> bool:
    names = {process.name.lower()} if process.name else set()
    for path in (process.exe, process.cmdline[0] if process.cmdline else ""):
        if path:
            names.add(path.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe"))
    return PROGRAM in names


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """The native ``droid`` but not a TUI's worker (its parent, the TUI, is the one to watch), or the npm shim
    ``node .../.bin/droid`` (``node .../@factory/cli/bin/droid`` goes by ``PROCESS_PACKAGES``)."""
    if PROGRAM in names:
        return not is_worker(process.cmdline)
    if names & _RUNNERS:
        operands = [argument for argument in process.cmdline[1:] if not argument.startswith("-")]
        return bool(operands) and operands[0].replace("\\", "/").rsplit("/", 1)[-1].lower() == PROGRAM
    return False


# -- its installer: hooks.json with the events at the top level (Droid's own shape, shared with nobody) --------
# event -> matcher (None: a group without one). Timeouts in seconds; Notification matches notification_type.
EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "*",
    "PostToolUse": "*",
    "Notification": PERMISSION_PROMPT,
    "SubagentStop": None,
    "Stop": None,
    "SessionEnd": None,
}


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("FACTORY_HOME_OVERRIDE", home()) / ".factory"  # the override stands for the home folder


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook", shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "command": command,
                                      "timeout": stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS})
            for event, matcher in EVENTS.items()]


def installer() -> HooksFile:
    """hook-install / hook-remove / hook-status for ``~/.factory/hooks.json``."""
    from ..installers.hooks_file import HooksFile

    return HooksFile(DISPLAY, "Factory Droid", "Factory Droid hooks file", config_root, tuple(EVENTS),
                     _install_into, _remove_from, _status)


def _is_ours(event: str) -> Any:
    from ..installers.common import is_managed_command

    return lambda command: is_managed_command(command, f"{KEY}-hook")


def _check(root: dict[str, Any], path: Path) -> None:
    from ..installers.common import InstallError

    for event in EVENTS:
        if event in root and not isinstance(root[event], list):
            raise InstallError(f"The {event} value of {path} is not a JSON array; it was left as it is.")


def _install_into(root: dict[str, Any], path: Path, stop_timeout: int) -> bool:
    """The shared Claude-style table code (``installers/hooks_json.py``) edits the file's top level through a
    ``{"hooks": root}`` view (Droid reads its events at the top level)."""
    from ..installers.hooks_json import upsert_managed

    _check(root, path)
    return upsert_managed({"hooks": root}, specs(stop_timeout), _is_ours, path)


def _remove_from(root: dict[str, Any], path: Path) -> bool:
    from ..installers.hooks_json import remove_managed

    _check(root, path)
    return remove_managed({"hooks": root}, list(EVENTS), _is_ours, path)


def _status(root: dict[str, Any], original: str | None, path: Path, stop_timeout: int) -> list[str]:
    from ..installers.hooks_json import event_states, overall

    states = event_states({"hooks": root}, specs(stop_timeout), _is_ours)
    lines = [f"Status: {overall(states)}", f"Config: {path}", f"Config exists: {original is not None}"]
    lines += [f"{event}: {states[event]}" for event in EVENTS]
    if isinstance(root.get("hooks"), dict):
        lines.append(f"Warning: {path} has a \"hooks\" key; Droid reads the events at the top level and "
                     "ignores it.")
    return lines
