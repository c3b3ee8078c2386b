"""Hook Integration commands of the full parser: the agent hooks' help and ``hook-events``.

The hooks themselves (one ``<agent>-hook`` per agent of ``lidguard.agents``) never reach argparse:
``lidguard.cli.main`` hands them to ``lidguard.hooks.runner`` first. They are registered here so
``lidguard help claude-hook`` and ``lidguard claude-hook --help`` describe them.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..agents import AGENTS, all_agents
from ..l10n import _
from .output import CliError, escape_control, format_local, print_json

__all__ = ["HOOK_COMMANDS", "add_hook_commands"]

HOOK_COMMANDS = (*(f"{key}-hook" for key in AGENTS), "hook-events")
_PROVIDER_WORDS = f"{', '.join(list(AGENTS)[:-1])}, or {list(AGENTS)[-1]}"
DEFAULT_COUNT = 50
MAX_COUNT = 100_000


def _provider(value: str | None) -> str:
    word = (value or "").strip().lower()
    if not word:
        raise CliError(_("A provider is required. Use {_PROVIDER_WORDS}.").format(_PROVIDER_WORDS=_PROVIDER_WORDS))
    provider = next((agent.KEY for agent in all_agents() if word in (agent.KEY, *agent.ALIASES)), None)
    if provider is None:
        raise CliError(_("Unknown provider: {value}. Use {_PROVIDER_WORDS}.").format(
            value=escape_control(word[:64]), _PROVIDER_WORDS=_PROVIDER_WORDS))
    return provider


def _count(value: str | None) -> int:
    text = (value if value is not None else str(DEFAULT_COUNT)).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 7 and 1 <= int(text) <= MAX_COUNT):
        raise CliError(_("The --count option must be an integer from 1 to {MAX_COUNT}.").format(MAX_COUNT=MAX_COUNT))
    return int(text)


def _event_json(line: str) -> dict[str, str]:
    """``<UTC time> key=value ...`` as ``{"time": ..., "key": "value", ...}``. Values hold no ``=`` (the log
    writes it ``\\x3d``), so a word without one continues the value before it (a folder with a space);
    a key seen twice keeps its first value: nothing later in a record overrides what came first."""
    time, _sep, rest = line.strip().partition(" ")
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
        raise CliError(_("Cannot read the hook event log {path}: {value}").format(
            path=path, value=error.strerror or error)) from error
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
    for agent in all_agents():
        summary, description = agent.HOOK_HELP
        sub = subparsers.add_parser(f"{agent.KEY}-hook", help=summary, description=description)
        if getattr(agent, "EVENT_OPTION", False):
            sub.add_argument("--event", metavar="NAME", help=_("the hook event name"))
        sub.set_defaults(handler=None, skip_recovery=True)
    sub = subparsers.add_parser("hook-events", help=_("Show the latest entries of a provider's hook event log."),
                                description=_("Prints the latest lines of <provider>-hook-events.log in the data "
                                            "folder (what each hook received, what the runtime answered)."))
    # the agents in the help text, not the usage line (with the next wave it outgrew 100 columns)
    sub.add_argument("--provider", metavar="AGENT",
                     help=_("whose hook events (required)") + f" [{', '.join(AGENTS)}]")
    sub.add_argument("--count", metavar="N", help=_("how many of the latest lines (default {DEFAULT_COUNT})").format(
        DEFAULT_COUNT=DEFAULT_COUNT))
    sub.add_argument("--json", action="store_true", help=_("machine-readable output"))
    sub.set_defaults(handler=_hook_events)
