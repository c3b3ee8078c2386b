"""Cursor (the IDE and its ``cursor-agent`` CLI; AGENT_CLIS_NEW.md section 10, documentation only: the CLI is
not on npm, so no run of the real program is recorded): ``lidguard cursor-hook`` from ``~/.cursor/hooks.json``.

The file is Cursor's version 1 shape, ``{"version": 1, "hooks": {"<event>": [{"command": ...}, ...]}}``: a flat
list per camelCase event (no matcher groups), shared with the user's own hooks (only ours are touched).
Payloads are snake_case with ``hook_event_name``; the session is ``conversation_id``. ``beforeSubmitPrompt``
starts the turn, ``preToolUse``/``postToolUse``/``postToolUseFailure`` are activity, ``subagentStart``/
``subagentStop`` keep background work in flight, ``stop`` (``status``: completed|aborted|error, ``loop_count``)
ends the turn and continues it through ``{"followup_message": ...}`` (capped by the entry's ``loop_limit``; no
``stop_hook_active``: a ``loop_count`` above 0 is our own follow-up's stop), ``sessionEnd`` the session.
Ancestry [DOC]: the CLI ``cursor-agent`` (also installed as ``agent``: accepted only when its path names
cursor), the IDE ``Cursor``/``cursor``. Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, Action, background_work, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_file import FlatTable, HooksFile
    from ..platform.process_info import ProcessInfo

KEY = "cursor"
PROVIDER = "Cursor"
DISPLAY = "Cursor"
ALIASES = ("cursor-agent", "cursor-cli")
CONFIG_TEXT = "hooks.json (~/.cursor; documented, not run: the CLI is not on npm)"
HOOK_HELP = ("Cursor hook (IDE and cursor-agent; reads the event JSON on stdin).",
             "Cursor command hook (from its documentation; the CLI is not on npm, so no real run is recorded): "
             "beforeSubmitPrompt starts the session, tool use is activity, subagents are work in flight, stop "
             "ends the turn (ask-before-sleep continues it with followup_message), sessionEnd the session. "
             "Always exits 0.")
SESSION_KEYS = ("conversation_id", "session_id")
PROCESS_COMMANDS = frozenset({"cursor-agent", "cursor"})
PROCESS_PACKAGES: tuple[str, ...] = ()  # not an npm package
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("tool", ("tool_name",)), ("status", ("status",)), ("loopCount", ("loop_count",)),
               ("model", ("model",)), ("cursorVersion", ("cursor_version",)), ("reason", ("reason",)),
               ("transcriptPath", ("transcript_path",)))
_SUBAGENT_KEYS = ("subagent_id", "agent_id", "subagent_type")


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "beforesubmitprompt":
        return Action("start", prompt=payload.text("prompt"))
    if name in ("pretooluse", "posttooluse", "posttoolusefailure"):
        tool = payload.text("tool_name")
        keys = ("tool_use_id",) if payload.text("tool_use_id") else ()  # else pair by the tool's name
        return tool_activity(event, tool, QUIET_TOOLS, payload, keys,
                             "Running" if name == "pretooluse" else "Finished")
    if name in ("subagentstart", "subagentstop"):
        return background_work(event, payload, "subagent", _SUBAGENT_KEYS,
                               "Running" if name == "subagentstart" else "Finished")
    if name == "stop":
        status = payload.text("status").lower()
        completed = status in ("", "completed")
        action = stop_action(payload, f"{event}:{status}" if status else event, provider_session_end=completed,
                             blocking=completed, turn_end=True)
        count = payload.data.get("loop_count")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            action.stop_hook_active = True  # the stop after our own followup_message
        return action
    if name == "sessionend":
        detail = payload.text("reason")
        return stop_action(payload, f"{event}:{detail}" if detail else event)
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """No permission event is installed (beforeShellExecution's ``permission`` would be one): no output."""
    return None


def continuation_output(reply: str) -> dict[str, Any]:
    """The ask-before-sleep reply as Cursor's next user message."""
    return {"followup_message": reply}


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """The CLI's other name ``agent``, only when its program's path names cursor (``agent`` alone is generic)."""
    if "agent" not in names:
        return False
    paths = [process.exe, process.cmdline[0] if process.cmdline else ""]
    return any("cursor" in path.replace("\\", "/").lower() for path in paths if path)


# -- its installer: the flat version 1 hooks.json (installers/hooks_file.FlatTable, as Crush's crush.json) ----
EVENTS = ("beforeSubmitPrompt", "preToolUse", "postToolUse", "postToolUseFailure", "subagentStart",
          "subagentStop", "stop", "sessionEnd")
LOOP_LIMIT = 5  # Cursor's default follow-up cap, written so it is visible


def config_root() -> Path:
    from ..installers.common import home

    return home() / ".cursor"


def entry(event: str, stop_timeout: int) -> dict[str, Any]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command

    handler: dict[str, Any] = {"command": hook_command(f"{KEY}-hook", shell=default_shell())}
    handler["timeout"] = stop_timeout if event == "stop" else DEFAULT_HOOK_TIMEOUT_SECONDS
    if event == "stop":
        handler["loop_limit"] = LOOP_LIMIT
    return handler


def installer() -> HooksFile:
    """hook-install / hook-remove / hook-status for ``~/.cursor/hooks.json``."""
    from ..installers.hooks_file import HooksFile

    return HooksFile(DISPLAY, "Cursor", "Cursor hooks file", config_root, EVENTS, _install_into, _remove_from,
                     _status, install_notes=lambda path: ["Cursor's hooks are documented, not run here (the CLI is "
                                                          "not on npm)."], ignorable=("version",))


def runs_lidguard_hook(home: str) -> bool:
    """``<home>/.cursor/hooks.json`` runs lidguard's ``cursor-hook``: Cursor then counts its turns there, and a
    ``claude-hook`` it also runs (it loads Claude Code's hooks) must not count them again. On the hook path:
    a bounded read, and anything unreadable or misshapen is "no"."""
    import json
    import os

    from ..fileio_open import read_regular_file

    try:
        root = json.loads(read_regular_file(os.path.join(home, ".cursor", "hooks.json"), limit=1 << 20))
    except Exception:  # noqa: BLE001 - missing, unreadable, a FIFO, not JSON: not installed
        return False
    table = root.get("hooks") if isinstance(root, dict) else None
    return isinstance(table, dict) and any(
        isinstance(handlers, list) and any(_ours(handler) for handler in handlers) for handlers in table.values())


def _ours(handler: Any) -> bool:
    from ..installers.common import is_managed_command

    return isinstance(handler, dict) and is_managed_command(handler.get("command"), f"{KEY}-hook")


def _flat() -> FlatTable:
    from ..installers.hooks_file import FlatTable

    return FlatTable(EVENTS, entry, _ours)


def _check_version(root: dict[str, Any], path: Path) -> None:
    from ..installers.common import InstallError

    if not isinstance(root.get("version", 1), int) or isinstance(root.get("version"), bool):
        raise InstallError(f"The \"version\" value of {path} is not a number; it was left as it is.")


def _install_into(root: dict[str, Any], path: Path, stop_timeout: int) -> bool:
    if not root:
        root["version"] = 1
    _check_version(root, path)
    return _flat().install(root, path, stop_timeout)


def _remove_from(root: dict[str, Any], path: Path) -> bool:
    _check_version(root, path)
    return _flat().remove(root, path)


def _status(root: dict[str, Any], original: str | None, path: Path, stop_timeout: int) -> list[str]:
    return [*_flat().status(root, original, path, stop_timeout),
            "Note: from Cursor's documentation only; no real Cursor run is recorded (the CLI is not on npm)."]
