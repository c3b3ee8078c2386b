"""The full command line (argparse): every command, categorized help. Hook commands never load it
(``cli/fast.py``) except for their ``--help``."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, NoReturn

from ..agents import AGENTS
from ..l10n import N_, _

__all__ = ["CATEGORIES", "build_parser", "run_full"]

CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (N_("Session Control"), ("start", "stop", "status", "remove-session", "cleanup-orphans", "stop-runtime",
                         "pause", "resume", "emergency-restore")),
    (N_("Settings & Suspend"), ("settings", "remove-pre-suspend-webhook", "remove-post-session-end-webhook",
                            "remove-closed-lid-stop-follow-up-webhook", "suspend-history",
                            "preview-system-sound", "preview-current-sound")),
    (N_("Getting Started"), ("setup", "doctor", "completion", "service", "tray", "uninstall")),
    (N_("Diagnostics"), ("current-lid-state", "current-monitor-count", "current-temperature",
                     "linux-permission", "macos-permission")),
    (N_("Hook Integration"), ("hook-install", "hook-status", "hook-remove", "claude-hooks", "codex-hooks",
                          "copilot-hooks", "hook-events", *(f"{key}-hook" for key in AGENTS))),
    (N_("MCP Integration"), ("mcp-status", "mcp-install", "mcp-remove", "provider-mcp-status", "provider-mcp-install",
                         "provider-mcp-remove", "mcp-server", "provider-mcp-server")),
    (N_("Managed / Internal Commands"), ("mark-session-active", "mark-session-softlocked", "run-server", "version")),
)
HELP_COMMANDS = ("help", "--help", "-h", "/?")
# argparse's own words (it translates them with gettext's ``_``, which ``_Parser`` points at lidguard.l10n).
ARGPARSE_TEXTS = (N_("usage: "), N_("options"), N_("positional arguments"), N_("show this help message and exit"),
                  N_("the following arguments are required: %s"), N_("unrecognized arguments: %s"),
                  N_("invalid choice: %(value)r (choose from %(choices)s)"), N_("expected one argument"),
                  N_("argument %(argument_name)s: %(message)s"), N_("invalid %(type)s value: %(value)r"),
                  N_("not allowed with argument %s"), N_("ambiguous option: %(option)s could match %(matches)s"),
                  N_("expected at least one argument"), N_("expected at most one argument"),
                  N_("one of the arguments %s is required"), N_("ignored explicit argument %r"))


HELP_WIDTH = 100  # `lidguard help` and every --help fit 100 columns (fewer on a narrower terminal)


def _help_width() -> int:
    import shutil

    return max(40, min(HELP_WIDTH, shutil.get_terminal_size((HELP_WIDTH, 24)).columns))


class _Formatter(argparse.HelpFormatter):
    """Help within ``_help_width()``; an option with long aliases shows its first name only (the
    aliases still work), so no line outgrows the width."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_help_width(), max_help_position=34)

    def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None) -> str:
        """argparse counts characters: an ASCII stand-in as wide as the translated ``usage:`` keeps the
        indentation and the width right, then the words replace it."""
        if prefix is not None:
            return super()._format_usage(usage, actions, groups, prefix)
        from .status_view import display_width

        translated = _("usage: ")
        columns = display_width(translated)
        text = super()._format_usage(usage, actions, groups, "u" * columns)
        return translated + text[columns:]

    def _split_lines(self, text: str, width: int) -> list[str]:
        import re

        return _wrap(re.sub(r"\s+", " ", text).strip(), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re

        return "\n".join(indent + line for line in _wrap(re.sub(r"\s+", " ", text).strip(), width - len(indent)))

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings:
            return super()._format_action_invocation(action)
        value = "" if action.nargs == 0 else " " + self._format_args(
            action, self._get_default_metavar_for_optional(action))
        text = ", ".join(action.option_strings) + value
        return text if len(text) <= 56 else action.option_strings[0] + value


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one readable line and exit code 1."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        argparse._ = _  # type: ignore[attr-defined]  # argparse's words in the user's language
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        topic = f" {self.prog.split()[-1]}" if " " in self.prog else ""
        sys.stderr.write(_("lidguard: {message} (see `lidguard help{topic}`)").format(message=message, topic=topic)
                         + "\n")
        raise SystemExit(1)


def _run_server(context: Any, args: argparse.Namespace) -> int:
    from ..runtime.server import run_server

    return run_server()


def _version(context: Any, args: argparse.Namespace) -> int:
    from . import print_version

    return print_version()


def _completion(context: Any, args: argparse.Namespace) -> int:
    from .completion import completion_script

    sys.stdout.write(completion_script(args.shell, build_parser()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .diagnostic_commands import add_diagnostic_commands
    from .hook_commands import add_hook_commands
    from .install_commands import add_install_commands
    from .mcp_commands import add_mcp_commands
    from .pause_commands import add_pause_commands
    from .service_command import add_service_command
    from .session_commands import add_session_commands
    from .settings_commands import add_settings_commands
    from .setup_command import add_setup_command
    from .sound_commands import add_sound_commands
    from .tray_command import add_tray_command
    from .uninstall_command import add_uninstall_command

    parser = _Parser(prog="lidguard", add_help=False)
    subparsers = parser.add_subparsers(dest="command", parser_class=_Parser)
    add_session_commands(subparsers)
    add_pause_commands(subparsers)
    add_settings_commands(subparsers)
    add_diagnostic_commands(subparsers)
    add_sound_commands(subparsers)
    add_install_commands(subparsers)
    add_hook_commands(subparsers)
    add_mcp_commands(subparsers)
    add_setup_command(subparsers)
    add_service_command(subparsers)
    add_tray_command(subparsers)
    add_uninstall_command(subparsers)
    sub = subparsers.add_parser("completion", help=_("Print the shell completion script: completion bash|zsh|fish."),
                                description=_("Print a completion script for lidguard. bash: "
                                              "`lidguard completion bash > ~/.local/share/bash-completion/completions/"
                                              "lidguard`; zsh: `lidguard completion zsh > ~/.zfunc/_lidguard`; fish: "
                                              "`lidguard completion fish > ~/.config/fish/completions/lidguard.fish`."))
    sub.add_argument("shell", choices=("bash", "zsh", "fish"), help=_("bash, zsh or fish"))
    sub.set_defaults(handler=_completion, skip_recovery=True)
    sub = subparsers.add_parser("run-server", help=_("Run the per-user runtime (started automatically)."))
    sub.set_defaults(handler=_run_server, skip_recovery=True)
    sub = subparsers.add_parser("version", help=_("Print the installed lidguard version (also --version)."))
    sub.set_defaults(handler=_version, skip_recovery=True)
    return parser


def _summary_help(parser: argparse.ArgumentParser) -> str:
    from ..platform.paths import resolve_paths
    from .output import CliError

    commands = _subcommands(parser)
    from .status_view import display_width

    usage = _("Usage: lidguard <command> [options]")
    lines = [usage, " " * display_width(usage.split("lidguard", 1)[0]) + "lidguard help <command>", ""]
    for title, names in CATEGORIES:
        present = [name for name in names if name in commands]
        if not present:
            continue
        lines.append(f"{_(title)}:")
        column = max(len(name) for name in commands) + 4
        for name in present:
            wrapped = _wrap(_help_text(parser, name), _help_width() - column) or [""]
            lines.append(f"  {name:<{column - 2}}{wrapped[0]}")
            lines += [" " * column + more for more in wrapped[1:]]
        lines.append("")
    try:
        paths = resolve_paths()
    except ValueError as error:  # RuntimeDirError: an unsafe folder
        raise CliError(str(error)) from error
    lines += [_("Paths & Notes:"), _("  Settings file: {path}").format(path=paths.settings_file),
              _("  Session log: {path}").format(path=paths.session_log_file),
              _("  Suspend history: {path}").format(path=paths.suspend_history_file),
              _("  Read commands take --json for machine-readable output."),
              _("  Language: --ui-culture or LIDGUARD_UI_CULTURE (auto, en, ko, ja, zh-Hans, zh-Hant)."),
              _("  Stop the runtime: lidguard stop-runtime (add --force while sessions are active).")]
    return "\n".join(lines)


def _wrap(text: str, width: int) -> list[str]:
    """``textwrap.wrap`` that counts East Asian wide characters as two columns and breaks between them
    (CJK text has no spaces)."""
    from .status_view import display_width

    if display_width(text) == len(text):
        return textwrap.wrap(text, width=width)
    lines: list[str] = []
    current: list[str] = []
    for word in _words(text):
        if current and display_width("".join(current) + word) > width:
            carried: list[str] = []
            if word[:1] in _NO_LINE_START and len(current) > 1:  # "。" never starts a line: take a character along
                carried = [current.pop()]
            lines.append("".join(current).rstrip())
            current = [piece.lstrip() for piece in carried] + [word.lstrip()]
        else:
            current.append(word)
    if "".join(current).strip():
        lines.append("".join(current).rstrip())
    return lines


_NO_LINE_START = frozenset("、。，．：；！？）」』】〉》”’ー々ぁぃぅぇぉっゃゅょァィゥェォッャュョ")


# Han, kana and full-width forms break anywhere; Hangul, like Latin, breaks at spaces.
_WIDE_BREAKABLE = "\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"


def _words(text: str) -> list[str]:
    """Breakable pieces: each Han/kana character alone, other runs with their trailing space."""
    import re

    return re.findall(f"[{_WIDE_BREAKABLE}]|[^\\s{_WIDE_BREAKABLE}]+\\s*|\\s+", text)


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
    from .output import escape_control

    if not topics:
        print(_summary_help(parser))
        return 0
    if len(topics) > 1:
        sys.stderr.write(_("lidguard: Unexpected argument: {argument} (use `lidguard help <command>`)").format(
            argument=escape_control(topics[1])) + "\n")
        return 1
    commands = _subcommands(parser)
    topic = topics[0].lower()
    if topic not in commands:
        from ..installers import did_you_mean

        hint = did_you_mean(topics[0], list(commands)) or " (see `lidguard help`)"
        sys.stderr.write(_("lidguard: Unknown command: {value}{hint}").format(
            value=escape_control(topics[0]), hint=hint) + "\n")
        return 1
    print(commands[topic].format_help())
    return 0


def run_full(arguments: list[str]) -> int:
    """Every command the fast path did not take. CliError and friends are handled by ``cli.main``."""
    parser = build_parser()
    if not arguments:
        print(_summary_help(parser))
        return 1
    arguments = [arguments[0].lower(), *("--help" if token.lower() == "--help" else token for token in arguments[1:])]
    if arguments[0] in HELP_COMMANDS:
        return _help(parser, arguments[1:])
    if arguments[0] not in _subcommands(parser):
        from ..installers import did_you_mean
        from .output import escape_control

        hint = did_you_mean(arguments[0], list(_subcommands(parser))) or " (see `lidguard help`)"
        sys.stderr.write(_("lidguard: Unknown command: {value}{hint}").format(
            value=escape_control(arguments[0]), hint=hint) + "\n")
        return 1
    from .context import CliContext

    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:  # a hook command reached here only for its help
        print(_subcommands(parser)[arguments[0]].format_help())
        return 0
    context = CliContext()
    if not getattr(args, "skip_recovery", False):
        context.recover_if_no_runtime()
    return int(handler(context, args) or 0)
