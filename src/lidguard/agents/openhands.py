"""OpenHands CLI 1.16 (PyPI ``openhands``, SDK 1.21; AGENT_CLIS_NEW.md section 7): ``lidguard openhands-hook``
from ``~/.openhands/hooks.json``.

OpenHands reads ``<working dir>/.openhands/hooks.json`` when it exists, else ``~/.openhands/hooks.json``: the first
found wins, they are never merged (so a project file hides the user's hooks). The file is strict (the SDK's
``HookConfig`` forbids unknown keys): either the Claude-style ``{"hooks": {"<Event>": [{"matcher", "hooks":
[{"type", "command", "timeout"}]}]}}`` wrapper or the events at the top level in PascalCase or snake_case
(``pre_tool_use``); we write only those keys, in the file's own shape and spelling. Every event sends one flat
payload naming itself in ``event_type`` (no ``hook_event_name``) with ``session_id`` (also
``OPENHANDS_SESSION_ID`` in the hook's environment), ``working_dir`` (the hook's working folder too),
``tool_name``/``tool_input``/``tool_response``, ``message`` and ``metadata``; no transcript path and no tool call
id (tool calls pair by name).
UserPromptSubmit starts the turn (``message``: the prompt; a Stop hook's continuation comes back as an
environment message and fires none), PreToolUse/PostToolUse are activity, Stop (``metadata.reason``:
``agent_finished``, the only one) ends the turn and SessionEnd the session (headless: right after Stop; the TUI:
on quit). SessionStart is not installed: the TUI sends it at launch, before anything runs.
A Stop continues the agent through ``{"decision": "deny", "reason": ...}`` or exit 2 (``"block"`` is ignored);
its next Stop carries no ``stop_hook_active``: a continued Stop is told from the conversation's event files
(``<conversations>/<session hex>/events/event-NNNNN-<id>.json``, written before the hook runs) - the latest
user or environment message is OpenHands' ``[Stop hook feedback] <reason>`` (bounded reads; any doubt: not one).
Ancestry: ``hook <- /bin/sh -c <- openhands`` (the Python console script: comm ``openhands``, exe
``python3.12``; the TUI the same). Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, Action, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_file import HooksFile
    from ..installers.hooks_json import HookSpec
    from ..platform.process_info import ProcessInfo

KEY = "openhands"
PROVIDER = "OpenHands"
DISPLAY = "OpenHands CLI"
ALIASES = ("openhands-cli",)
CONFIG_TEXT = "hooks.json (~/.openhands; a project's .openhands/hooks.json replaces it)"
HOOK_HELP = ("OpenHands CLI hook (reads the event JSON on stdin).",
             "OpenHands CLI command hook: UserPromptSubmit starts the session, tool use is activity, Stop ends "
             "the turn (ask-before-sleep continues it with decision deny), SessionEnd the session. "
             "Always exits 0.")
EVENT_KEYS = ("event_type",)
SESSION_KEYS = ("session_id",)
PROCESS_COMMANDS = frozenset({"openhands"})
PROCESS_PACKAGES: tuple[str, ...] = ()  # a PyPI package, not npm
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("tool", ("tool_name",)), ("workingDir", ("working_dir",)))
_PYTHONS = ("python", "pypy")
# A continued Stop: the newest events read back to the latest user/environment message, each one bounded.
FEEDBACK_PREFIX = "[Stop hook feedback]"
MAX_EVENT_FILES = 64
MAX_EVENT_BYTES = 256 * 1024
MAX_SCAN_BYTES = 2 * 1024 * 1024  # in all, per Stop: the hook stays quick in a long conversation
_SESSION_CHARS = frozenset("0123456789abcdefABCDEF-")


MAP_EVENT_CONTEXT = True  # Stop reads the conversation under the hook's HOME (not the runtime's: issue 36)


def map_event(event: str, payload: Payload, context: Any = None) -> Action:  # hooks.runner.HookEnvironment
    name = event.lower()
    if name == "userpromptsubmit":
        return Action("start", prompt=payload.text("message"))
    if name in ("pretooluse", "posttooluse"):
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, (),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "stop":
        metadata = payload.data.get("metadata")
        detail = metadata.get("reason") if isinstance(metadata, dict) else None
        reason = f"{event}:{detail.strip()}" if isinstance(detail, str) and detail.strip() else event
        action = stop_action(payload, reason, blocking=True, turn_end=True)
        action.stop_hook_active = continued_stop(payload.text("session_id"),
                                                 context.environ if context is not None else None)
        return action
    if name == "sessionend":
        return stop_action(payload, event)
    return IGNORE  # SessionStart (not installed) and anything newer


def conversation_events(session: str, environ: Mapping[str, str] | None = None) -> str:
    """The conversation's event folder, as the CLI lays it out (``OPENHANDS_CONVERSATIONS_DIR``, else
    ``$OPENHANDS_PERSISTENCE_DIR/conversations``, else ``~/.openhands/conversations``; the id without dashes),
    from the hook's environment (``environ``; None: this process's)."""
    import os

    environ = os.environ if environ is None else environ
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("OPENHANDS_CONVERSATIONS_DIR") or os.path.join(
        environ.get("OPENHANDS_PERSISTENCE_DIR") or os.path.join(home, ".openhands"), "conversations")
    return os.path.join(base, session.replace("-", ""), "events")


def _event_index(name: str) -> int:
    number = name.split("-", 2)[1] if name.count("-") >= 2 else ""
    return int(number) if number.isdigit() and len(number) <= 12 else -1


def continued_stop(session: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the turn this Stop ends began with a Stop hook's continuation (OpenHands' stop_hook_active)."""
    if not session or len(session) > 64 or not set(session) <= _SESSION_CHARS:
        return False
    import json
    import os

    from ..fileio_open import read_regular_file

    folder = conversation_events(session, environ)
    try:
        names = [name for name in os.listdir(folder) if name.startswith("event-") and name.endswith(".json")]
    except (OSError, ValueError):
        return False
    newest = sorted((index, name) for name in names if (index := _event_index(name)) >= 0)[-MAX_EVENT_FILES:]
    budget = MAX_SCAN_BYTES
    for _, name in reversed(newest):
        path = os.path.join(folder, name)
        try:
            size = os.stat(path, follow_symlinks=False).st_size
            if size > MAX_EVENT_BYTES:
                continue  # a large observation: not a message we look for
            budget -= size
            if budget < 0:
                return False
            raw = read_regular_file(path, limit=MAX_EVENT_BYTES, follow_symlinks=False)  # no FIFO, no symlink
            data = json.loads(raw) if b'"MessageEvent"' in raw else None  # only messages are parsed
        except (OSError, ValueError, RecursionError):
            continue  # gone, unusable, garbage: not a message
        if not isinstance(data, dict) or data.get("kind") != "MessageEvent" or data.get("source") == "agent":
            continue  # actions, observations, hook records, the agent's own replies
        if data.get("source") != "environment":
            return False  # the user's own prompt came later
        message = data.get("llm_message")
        parts = message.get("content") if isinstance(message, dict) else None
        texts = [part.get("text") for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []
        return any(isinstance(text, str) and text.startswith(FEEDBACK_PREFIX) for text in texts)
    return False


def permission_output(decision: str) -> dict[str, Any] | None:
    """OpenHands has no permission event (PreToolUse fires for every tool, asked or not): no output."""
    return None


def continuation_output(reply: str) -> dict[str, Any]:
    """The ask-before-sleep reply: OpenHands continues on ``decision: deny`` (``block`` is not one of its
    words) and sends ``[Stop hook feedback] <reason>`` to the model as the next user message."""
    return {"decision": "deny", "reason": reply}


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """``python .../bin/openhands`` started through its interpreter (comm ``python3``): the script it runs."""
    if not any(name.startswith(_PYTHONS) for name in names):
        return False
    for argument in process.cmdline[1:]:
        if argument.startswith("-"):
            return False  # -m, -c, options: not the console script
        return argument.replace("\\", "/").rsplit("/", 1)[-1].lower() in PROCESS_COMMANDS
    return False


# -- its installer: ~/.openhands/hooks.json in the file's own shape (installers/hooks_json.py does the edits) --
EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")
_SNAKE = {"UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use",
          "Stop": "stop", "SessionEnd": "session_end", "SessionStart": "session_start"}
_KNOWN_KEYS = frozenset(_SNAKE) | frozenset(_SNAKE.values())
MATCHER = "*"


def config_root() -> Path:
    from ..installers.common import home

    return home() / ".openhands"  # HookConfig.load reads Path.home(), never OPENHANDS_PERSISTENCE_DIR


def installer() -> HooksFile:
    """hook-install / hook-remove / hook-status for ``~/.openhands/hooks.json``."""
    from ..installers.hooks_file import HooksFile

    return HooksFile(DISPLAY, "OpenHands", "OpenHands hooks file", config_root, EVENTS, _install_into,
                     _remove_from, _status, install_notes=_project_notes)


def _view(root: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(an object whose ``hooks`` is the event table, whether the file has its events at the top level).
    A new or empty file gets the ``hooks`` wrapper; a file without one keeps its events where they are."""
    if not root or "hooks" in root:
        return root, False
    return {"hooks": root}, True


def _key(table: Any, event: str, direct: bool) -> str:
    """The event's key as this file spells it (OpenHands refuses an event spelled both ways); a new event at
    the top level follows the file's other keys (snake_case, OpenHands' own ``save`` shape, unless they are
    PascalCase)."""
    if not isinstance(table, dict):
        return event
    for spelling in (event, _SNAKE[event]):
        if spelling in table:
            return spelling
    pascal = any(isinstance(key, str) and key[:1].isupper() for key in table)
    return _SNAKE[event] if direct and not pascal else event


def _checked(view: dict[str, Any], path: Path) -> Any:
    """The event table, refused (left as it is) when it or one of our events is not what OpenHands reads."""
    from ..installers.common import InstallError

    table = view.get("hooks")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise InstallError(f"The \"hooks\" value of {path} is not a JSON object; it was left as it is.")
    for key in (_key(table, event, False) for event in EVENTS):
        if key in table and not isinstance(table[key], list):
            raise InstallError(f"The {key} value of {path} is not a JSON array; it was left as it is.")
    return table


def specs(stop_timeout: int, table: Any = None, direct: bool = False) -> list[HookSpec]:
    """Our handler per event: only the keys OpenHands' HookDefinition accepts (``timeout`` in seconds)."""
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook")  # run by OpenHands through the shell (subprocess shell=True)
    return [HookSpec(_key(table, event, direct), MATCHER,
                     {"type": "command", "command": command,
                      "timeout": stop_timeout if event == "Stop" else DEFAULT_HOOK_TIMEOUT_SECONDS})
            for event in EVENTS]


def _is_ours(event: str) -> Any:
    from ..installers.common import is_managed_command

    return lambda command: is_managed_command(command, f"{KEY}-hook")


def _install_into(root: dict[str, Any], path: Path, stop_timeout: int) -> bool:
    from ..installers.hooks_json import upsert_managed

    view, direct = _view(root)
    return upsert_managed(view, specs(stop_timeout, _checked(view, path), direct), _is_ours, path)


def _remove_from(root: dict[str, Any], path: Path) -> bool:
    from ..installers.hooks_json import remove_managed

    view, direct = _view(root)
    table = _checked(view, path)
    return remove_managed(view, [_key(table, event, direct) for event in EVENTS], _is_ours, path)


def _status(root: dict[str, Any], original: str | None, path: Path, stop_timeout: int) -> list[str]:
    from ..installers.hooks_json import event_states, overall

    view, direct = _view(root)
    table = view.get("hooks")
    wanted = specs(stop_timeout, table, direct)
    states = event_states(view, wanted, _is_ours)
    lines = [f"Status: {overall(states)}", f"Config: {path}", f"Config exists: {original is not None}"]
    lines += [f"{event}: {states[spec.event]}" for event, spec in zip(EVENTS, wanted, strict=True)]
    unknown = sorted(key for key in table if key not in _KNOWN_KEYS) if isinstance(table, dict) else []
    if unknown:
        lines.append(f"Warning: {', '.join(unknown)} is not an OpenHands hook event; OpenHands refuses the "
                     "whole file and runs none of its hooks.")
    lines += [f"Note: {note}" for note in _project_notes(path)]
    return lines


def _project_notes(path: Path) -> list[str]:
    """A project file in this folder replaces ~/.openhands/hooks.json for an OpenHands started here."""
    import os
    from pathlib import Path

    folder = os.environ.get("OPENHANDS_WORK_DIR") or os.getcwd()
    project = Path(folder) / ".openhands" / "hooks.json"
    try:
        if not project.is_file() or project.resolve() == path.resolve():
            return []
        text = project.read_text(encoding="utf-8", errors="replace")[:1_000_000]
    except OSError:
        return []
    if f"{KEY}-hook" in text:
        return []
    return [f"{project} exists without lidguard's hooks: OpenHands started in {folder} reads it instead of "
            f"{path} (the two are not merged), so lidguard's hooks do not run there."]
