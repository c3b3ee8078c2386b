"""Crush (``@charmland/crush`` 0.96.1; AGENT_CLIS_NEW.md section 4, documentation only: its npm postinstall
downloads the binary from github.com and there is no Go toolchain here, so no real Crush run is recorded):
``lidguard crush-hook`` from the ``hooks`` object of Crush's global ``crush.json``.

Crush 0.96.1 has two hook events: ``PreToolUse`` (before each tool call of the top-level agent; a sub-agent's
own calls are not hooked, its outer ``agent`` call is) and ``PreCompact`` (before its context is compacted).
There is no session, prompt or turn-end event. Stdin is ``{"event", "session_id", "cwd", "tool_name",
"tool_input"}`` (PreCompact's ``tool_name`` is ``compact``), and event names may come in any case or
snake_case. So a PreToolUse starts the session when it is not running and is that session's activity otherwise
(``Action("start", if_not_running=True)``): the first tool call protects, later ones renew the lease, all in
one turn. PreCompact is activity. Nothing ends a turn. It ends by silence (``SessionTimeoutMinutes`` soft-locks
it and the lease ends it) or when the watched ``crush`` exits. So a reply written without a tool call runs
unprotected, and the wait for the user after the last tool call keeps the laptop awake until the timeout.

The hook must never change Crush's own decision. Exit 0 with empty output means "no opinion". Exit 2 denies the
tool, exit 49 halts the turn, and ``{"decision": "allow"}`` would skip Crush's permission prompt. So no event
here has an output, with the lid closed too.

Config [DOC]: each entry is flat, ``{"name", "matcher", "command", "timeout"}``, with no nested ``hooks`` list.
``timeout`` is in seconds, and no matcher matches every tool. The global file is
``$CRUSH_GLOBAL_CONFIG/crush.json``: the variable names Crush's config folder, not the file (Crush's own tests
set it to ``.../.config/crush``). Else it is ``$XDG_CONFIG_HOME/crush/crush.json``, else
``~/.config/crush/crush.json``. Windows' ``%LOCALAPPDATA%\\crush`` is not looked at, and newer Crush releases'
shell-style ``crushrc`` is not written. The command runs through Crush's embedded POSIX shell
(``mvdan.cc/sh``, on every OS, so it is quoted for ``sh``). The hook is therefore a child of ``crush`` itself,
the Go binary; through npm, a ``node .../.bin/crush`` may sit above it. Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, Action

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_file import FlatTable, HooksFile

KEY = "crush"
PROVIDER = "Crush"
DISPLAY = "Crush"
ALIASES = ("charm-crush",)
CONFIG_TEXT = ("crush.json ($CRUSH_GLOBAL_CONFIG, else $XDG_CONFIG_HOME/crush or ~/.config/crush; documented, "
               "not run: its npm package downloads the binary from GitHub)")
HOOK_HELP = ("Crush hook (reads the event JSON on stdin).",
             "Crush command hook (from its documentation; its npm package downloads the binary from GitHub, so "
             "no real run is recorded): Crush has tool events only, so the first PreToolUse starts the session, "
             "later ones and PreCompact are activity, and silence (the session timeout) or Crush's exit ends "
             "it. Prints nothing, so Crush's own permission decisions stay its own. Always exits 0.")
EVENT_KEYS = ("event", "hook_event_name")
SESSION_KEYS = ("session_id",)
PROCESS_COMMANDS = frozenset({"crush"})
PROCESS_PACKAGES = ("@charmland/crush",)
STOP_TIMEOUT = False  # no Stop hook: every entry gets the default timeout
LOG_DETAILS = (("tool", ("tool_name",)),)


def map_event(event: str, payload: Payload) -> Action:
    name = event.replace("_", "").lower()  # PreToolUse, pretooluse, pre_tool_use: Crush takes them all
    if name == "pretooluse":
        tool = payload.text("tool_name")
        return Action("start", f"{event}:{tool}" if tool else event, if_not_running=True)
    if name == "precompact":
        return Action("activity", event)
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """No event is answered: an ``allow`` would skip Crush's own permission prompt, a deny would block a tool."""
    return None


# -- its installer: the flat entries of crush.json's "hooks" (installers/hooks_file.FlatTable, as Cursor's) ------
EVENTS = ("PreToolUse", "PreCompact")
ENTRY_NAME = "lidguard"  # the name Crush's TUI shows for the hook


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("CRUSH_GLOBAL_CONFIG", env_dir("XDG_CONFIG_HOME", home() / ".config") / "crush")


def entry(event: str, stop_timeout: int = 0) -> dict[str, Any]:
    """Ours for ``event``: every tool (no matcher), quoted for Crush's embedded ``sh`` on every OS."""
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, hook_command

    return {"name": ENTRY_NAME, "command": hook_command(f"{KEY}-hook", shell="sh"),
            "timeout": DEFAULT_HOOK_TIMEOUT_SECONDS}


def installer() -> HooksFile:
    """hook-install / hook-remove / hook-status for the global ``crush.json``."""
    from ..installers.hooks_file import HooksFile

    return HooksFile(DISPLAY, "Crush", "Crush config file", config_root, EVENTS, _flat().install, _flat().remove,
                     _status, install_notes=lambda path: [_NOTE], file_name="crush.json")


_NOTE = ("Crush's hooks are documented, not run here (its npm package downloads the binary from GitHub). Crush "
         "has tool events only: its session ends after the session timeout without a tool call, or when Crush "
         "exits.")


def _ours(handler: Any) -> bool:
    from ..installers.common import is_managed_command

    return isinstance(handler, dict) and is_managed_command(handler.get("command"), f"{KEY}-hook")


def _flat() -> FlatTable:
    from ..installers.hooks_file import FlatTable

    return FlatTable(EVENTS, entry, _ours)


def _status(root: dict[str, Any], original: str | None, path: Path, stop_timeout: int) -> list[str]:
    return [*_flat().status(root, original, path, stop_timeout), f"Note: {_NOTE}"]
