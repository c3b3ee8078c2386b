"""pause, resume and emergency-restore (issue 19 item 4).

``pause`` starts the runtime when none runs (the pause lives in its memory, so a later hook cannot
bring protection back behind the user's back); ``resume`` with no runtime has nothing to do.
``emergency-restore`` never reads the settings file: through a running runtime it pauses, clears
every session and restores what protection changed; with no runtime it clears the session journal
and restores every pending backup itself (``shared.recovery``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..l10n import _
from .context import CliContext
from .output import CliError, countdown, escape_control, local_time, runtime_text

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["add_pause_commands", "paused_line", "parse_duration"]


def parse_duration(text: str) -> int:
    from ..shared.pause import parse_duration as parse

    try:
        return parse(text)
    except ValueError as error:
        # shared/pause.DURATION_MESSAGE's words, whole for the catalogs (tests/cli/test_pause_commands.py)
        raise CliError(_("The for option must be a duration such as 30m, 2h or 1h30m (from 1s to 7d).")) from error


def paused_line(paused: Any, now: datetime | None = None) -> str | None:
    """One status line for the reply's ``Paused`` (None: not paused); the time local, with a countdown."""
    if not isinstance(paused, dict):
        return None
    until = paused.get("UntilUtc")
    if isinstance(until, str) and until:
        return _("Paused until {until} ({countdown}; or `lidguard resume`): no protection, lid policy or "
                 "suspend.").format(until=local_time(until, now), countdown=countdown(until, now))
    return _("Paused until `lidguard resume`: no protection, lid policy or suspend.")


def _print_reply(response: dict[str, Any]) -> None:
    lines = [runtime_text(response.get("Message"))]
    line = paused_line(response.get("Paused"))
    if line is not None:
        lines.append(line)
    print("\n".join(escape_control(text) for text in lines if text))


def _pause(context: CliContext, args: argparse.Namespace) -> int:
    seconds = parse_duration(args.duration) if args.duration is not None else None
    response = context.request("pause", auto_start=True, PauseSeconds=seconds)
    if not response.get("Succeeded"):
        raise CliError(runtime_text(response.get("Message")) or _("The runtime reported a failure."))
    _print_reply(response)
    return 0


def _resume(context: CliContext, args: argparse.Namespace) -> int:
    response = context.request("resume")
    if response.get("RuntimeUnavailable"):
        print(_("LidGuard runtime is not running: nothing is paused."))
        return 0
    if not response.get("Succeeded"):
        raise CliError(runtime_text(response.get("Message")) or _("The runtime reported a failure."))
    _print_reply(response)
    return 0


def _emergency_restore(context: CliContext, args: argparse.Namespace) -> int:
    from ..shared.recovery import RecoveryError, emergency_restore_without_runtime, restore_failed

    response = context.request("emergency-restore")
    if not response.get("RuntimeUnavailable"):
        if not response.get("Succeeded"):
            raise CliError(runtime_text(response.get("Message")) or _("The runtime reported a failure."))
        _print_reply(response)
        return 0
    try:
        lines = emergency_restore_without_runtime(context.paths, lambda: context.platform)
    except RecoveryError as error:
        raise CliError(str(error)) from error
    print("\n".join(escape_control(line) for line in [
        "Emergency restore: LidGuard runtime is not running (nothing to pause).", *lines]))
    if restore_failed(lines):
        raise CliError(_("Emergency restore could not restore everything (see above)."))
    return 0


def add_pause_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pause", help=_("Release protection and the lid policy and stop suspends until resume (sessions stay)."),
        description=_("Release keep-awake protection and the lid policy and hold every suspend back until "
                    "`lidguard resume` or the --for time is up. Sessions keep being tracked."))
    parser.add_argument("--for", dest="duration", metavar="DURATION",
                        help=_("how long, e.g. 30m, 2h or 1h30m (at most 7d); without it: until resume"))
    parser.set_defaults(handler=_pause)
    parser = subparsers.add_parser("resume", help=_("End a pause: protection follows the sessions again."))
    parser.set_defaults(handler=_resume)
    parser = subparsers.add_parser(
        "emergency-restore", help=_("Pause, clear every session and restore every pending backup."),
        description=_("Pause until resume, clear every session and restore every pending backup (the lid "
                    "policy, macOS hibernatemode). Works with no runtime and with a broken settings file."))
    parser.set_defaults(handler=_emergency_restore, skip_recovery=True)  # it restores (and reports) itself
