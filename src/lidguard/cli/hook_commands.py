"""Hook Integration commands of the full parser: the agent hooks' help and ``hook-events``.

The hooks themselves (``claude-hook``, ``codex-hook``, ``copilot-hook``, ``opencode-hook``) never reach
argparse: ``lidguard.cli.main`` hands them to ``lidguard.hooks.runner`` first. They are registered here
so ``lidguard help claude-hook`` and ``lidguard claude-hook --help`` describe them.
"""

from __future__ import annotations

import argparse
from typing import Any

from .output import CliError, escape_control, format_local, print_json

__all__ = ["HOOK_COMMANDS", "add_hook_commands"]

HOOK_COMMANDS = ("claude-hook", "codex-hook", "copilot-hook", "opencode-hook", "gemini-hook", "qwen-hook",
                 "hook-events")
_PROVIDERS = {"claude": "claude", "codex": "codex", "copilot": "copilot", "github-copilot": "copilot",
              "githubcopilot": "copilot", "opencode": "opencode", "gemini": "gemini", "qwen": "qwen"}
_PROVIDER_WORDS = "claude, codex, copilot, opencode, gemini, or qwen"
DEFAULT_COUNT = 50
MAX_COUNT = 100_000
_HOOK_HELP = {
    "claude-hook": ("Claude Code hook (reads the event JSON on stdin).",
                    "Claude Code command hook: UserPromptSubmit starts the session, tool use is activity, "
                    "permission/elicitation notifications soft-lock it, Stop/SessionEnd end it; with the lid "
                    "closed it answers PermissionRequest (ClosedLidPermissionRequestDecision) and cancels "
                    "Elicitation. Always exits 0."),
    "codex-hook": ("Codex CLI hook (reads the event JSON on stdin).",
                   "Codex command hook: UserPromptSubmit starts the session, PreToolUse/PostToolUse are "
                   "activity, Stop/SessionEnd end it; with the lid closed it answers PermissionRequest. "
                   "Always exits 0."),
    "copilot-hook": ("GitHub Copilot CLI hook (--event <name>; event JSON on stdin).",
                     "Copilot CLI command hook: userPromptSubmitted starts the session, tool use is activity, "
                     "agentStop/sessionEnd end it; with the lid closed it answers permissionRequest and denies "
                     "ask_user. Always exits 0."),
    "opencode-hook": ("OpenCode plugin hook (--event <name>; event JSON on stdin).",
                      "Called by the managed OpenCode plugin: chat.message starts the session, tool.execute.* "
                      "and permission.replied are activity, session.idle ends it; with the lid closed it answers "
                      "permission.asked. Always exits 0."),
    "gemini-hook": ("Gemini CLI hook (reads the event JSON on stdin).",
                    "Gemini CLI command hook: BeforeAgent starts the session, BeforeTool/AfterTool are activity, "
                    "a ToolPermission notification soft-locks it, AfterAgent/SessionEnd end it; with the lid "
                    "closed and the decision Deny it denies BeforeTool of tools Gemini would confirm (never under "
                    "--yolo, --approval-mode auto_edit for edits, or --allowed-tools; nothing can approve a tool "
                    "there). Always exits 0."),
    "qwen-hook": ("Qwen Code hook (reads the event JSON on stdin).",
                  "Qwen Code command hook: UserPromptSubmit with a prompt starts the session, tool use is "
                  "activity, a permission_prompt notification soft-locks it, Stop/SessionEnd end it; with the lid "
                  "closed it answers PermissionRequest. Always exits 0."),
}


def _provider(value: str | None) -> str:
    word = (value or "").strip().lower()
    if not word:
        raise CliError(f"A provider is required. Use {_PROVIDER_WORDS}.")
    provider = _PROVIDERS.get(word)
    if provider is None:
        raise CliError(f"Unknown provider: {escape_control(word[:64])}. Use {_PROVIDER_WORDS}.")
    return provider


def _count(value: str | None) -> int:
    text = (value if value is not None else str(DEFAULT_COUNT)).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 7 and 1 <= int(text) <= MAX_COUNT):
        raise CliError(f"The --count option must be an integer from 1 to {MAX_COUNT}.")
    return int(text)


def _event_json(line: str) -> dict[str, str]:
    """``<UTC time> key=value ...`` as ``{"time": ..., "key": "value", ...}``. Values hold no ``=`` (the log
    writes it ``\\x3d``), so a word without one continues the value before it (a folder with a space);
    a key seen twice keeps its first value: nothing later in a record overrides what came first."""
    time, _, rest = line.strip().partition(" ")
    entry = {"time": time}
    key = ""
    for part in rest.split(" "):
        name, separator, value = part.partition("=")
        if separator and name:
            key = name if name not in entry else ""
            if key:
                entry[key] = value
        elif key:
            entry[key] += " " + part
    return entry


def _hook_events(context: Any, args: argparse.Namespace) -> int:
    from ..hooks.eventlog import hook_log_path, latest_lines

    provider = _provider(args.provider)
    count = _count(args.count)
    path = hook_log_path(context.paths.data_dir, provider)
    try:
        lines = latest_lines(path, count)
    except OSError as error:
        raise CliError(f"Cannot read the hook event log {path}: {error.strerror or error}") from error
    if args.json:
        print_json({"provider": provider, "log": str(path), "events": [_event_json(line) for line in lines]})
        return 0
    if not lines:
        print(escape_control(f"No {provider} hook events recorded yet ({path})."))
        return 0
    print("\n".join(escape_control(_local_time(line)) for line in lines))
    return 0


def _local_time(line: str) -> str:
    """The stored UTC time at the start of a line printed in local time (a line without one as is)."""
    stamp, separator, rest = line.partition(" ")
    if not stamp.endswith("Z"):
        return line
    local = format_local(stamp)
    return f"{local}{separator}{rest}" if local != stamp else line


def add_hook_commands(subparsers: Any) -> None:
    for command, (summary, description) in _HOOK_HELP.items():
        sub = subparsers.add_parser(command, help=summary, description=description)
        if command in ("copilot-hook", "opencode-hook"):
            sub.add_argument("--event", metavar="NAME", help="the hook event name")
        sub.set_defaults(handler=None, skip_recovery=True)
    sub = subparsers.add_parser("hook-events", help="Show the latest entries of a provider's hook event log.",
                                description="Prints the latest lines of <provider>-hook-events.log in the data "
                                            "folder (what each hook received, what the runtime answered).")
    sub.add_argument("--provider", metavar="claude|codex|copilot|opencode|gemini|qwen",
                     help="whose hook events (required)")
    sub.add_argument("--count", metavar="N", help=f"how many of the latest lines (default {DEFAULT_COUNT})")
    sub.add_argument("--json", action="store_true", help="machine-readable output")
    sub.set_defaults(handler=_hook_events)
