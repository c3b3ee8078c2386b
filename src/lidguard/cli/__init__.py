"""The `lidguard` command line. Errors are one line on stderr with exit code 1."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

__all__ = ["main"]

CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Session Control", ("start", "stop", "status", "remove-session", "cleanup-orphans")),
    ("Settings & Suspend", ("settings", "remove-pre-suspend-webhook", "remove-post-session-end-webhook",
                            "remove-closed-lid-stop-follow-up-webhook", "suspend-history")),
    ("Diagnostics", ("doctor", "current-lid-state", "current-monitor-count", "current-temperature",
                     "linux-permission")),
    ("Managed / Internal Commands", ("run-server",)),
)
HELP_COMMANDS = ("help", "--help", "-h", "/?")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one readable line and exit code 1."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"lidguard: {message} (see `lidguard help {self.prog.split()[-1]}`)\n"
                         if " " in self.prog else f"lidguard: {message} (see `lidguard help`)\n")
        raise SystemExit(1)


def _run_server(context: Any, args: argparse.Namespace) -> int:
    from ..runtime.server import run_server

    return run_server()


def build_parser() -> argparse.ArgumentParser:
    from .diagnostic_commands import add_diagnostic_commands
    from .session_commands import add_session_commands
    from .settings_commands import add_settings_commands

    parser = _Parser(prog="lidguard", add_help=False)
    subparsers = parser.add_subparsers(dest="command", parser_class=_Parser)
    add_session_commands(subparsers)
    add_settings_commands(subparsers)
    add_diagnostic_commands(subparsers)
    sub = subparsers.add_parser("run-server", help="Run the per-user runtime (started automatically).")
    sub.set_defaults(handler=_run_server, skip_recovery=True)
    return parser


def _summary_help(parser: argparse.ArgumentParser) -> str:
    from ..platform.paths import resolve_paths

    commands = {name: sub for name, sub in _subcommands(parser).items()}
    lines = ["Usage: lidguard <command> [options]", "       lidguard help <command>", ""]
    for title, names in CATEGORIES:
        present = [name for name in names if name in commands]
        if not present:
            continue
        lines.append(f"{title}:")
        for name in present:
            lines.append(f"  {name:<42}{_help_text(parser, name)}")
        lines.append("")
    paths = resolve_paths()
    lines += ["Paths & Notes:", f"  Settings file: {paths.settings_file}", f"  Session log: {paths.session_log_file}",
              f"  Suspend history: {paths.suspend_history_file}",
              "  Read commands take --json for machine-readable output."]
    return "\n".join(lines)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_text(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def _help(parser: argparse.ArgumentParser, topics: list[str]) -> int:
    if not topics:
        print(_summary_help(parser))
        return 0
    if len(topics) > 1:
        sys.stderr.write(f"lidguard: Unexpected argument: {topics[1]} (use `lidguard help <command>`)\n")
        return 1
    commands = _subcommands(parser)
    topic = topics[0].lower()
    if topic not in commands:
        sys.stderr.write(f"lidguard: Unknown command: {topics[0]} (see `lidguard help`)\n")
        return 1
    print(commands[topic].format_help())
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not arguments:
        print(_summary_help(parser))
        return 1
    arguments[0] = arguments[0].lower()
    if arguments[0] in HELP_COMMANDS:
        return _help(parser, arguments[1:])
    from .context import CliContext
    from .output import CliError

    try:
        args = parser.parse_args(arguments)
        context = CliContext()
        if not getattr(args, "skip_recovery", False):
            context.recover_if_no_runtime()
        return int(args.handler(context, args) or 0)
    except CliError as error:
        sys.stderr.write(f"lidguard: {error}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("lidguard: interrupted\n")
        return 130
    except Exception as error:  # last resort: still one readable line
        sys.stderr.write(f"lidguard: unexpected error: {type(error).__name__}: {error}\n")
        return 1
