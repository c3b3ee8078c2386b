"""settings (options or interactive) and the remove-*-webhook commands."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..l10n import N_, _
from ..settings import (
    SETTING_OPTIONS,
    Settings,
    SettingsInputError,
    apply_changes,
    headless_defaults,
    load_settings_report,
    save_settings,
)
from ..settings.display import format_settings_block
from ..settings.model import NUMBER_RANGES
from ..settings.validation import parse_bool, range_text
from .context import CliContext
from .output import CliError, escape_control, print_json, runtime_text

__all__ = ["add_settings_commands"]

# (name shown, JSON path, option of SETTING_OPTIONS whose parser validates the answer)
_INTERACTIVE = (
    (N_("Prevent system sleep"), "prevent-system-sleep"),
    (N_("Prevent away mode sleep"), "prevent-away-mode-sleep"),
    (N_("Prevent display sleep"), "prevent-display-sleep"),
    (N_("Change lid action"), "change-lid-action"),
    (N_("Watch parent process"), "watch-parent-process"),
    (N_("Session timeout minutes"), "session-timeout-minutes"),
    (N_("Server runtime cleanup delay minutes"), "server-runtime-cleanup-delay-minutes"),
    (N_("Emergency hibernation on high temperature"), "emergency-hibernation-on-high-temperature"),
    (N_("Emergency hibernation temperature mode"), "emergency-hibernation-temperature-mode"),
    (N_("Emergency hibernation temperature Celsius"), "emergency-hibernation-temperature-celsius"),
    (N_("Suspend mode"), "suspend-mode"),
    (N_("Post-stop suspend delay seconds"), "post-stop-suspend-delay-seconds"),
    (N_("Post-stop suspend sound"), "post-stop-suspend-sound"),
    (N_("Post-stop suspend sound volume override percent"), "post-stop-suspend-sound-volume-override-percent"),
    (N_("Suspend history entry count"), "suspend-history-count"),
    (N_("Closed lid permission request decision"), "closed-lid-permission-request-decision"),
)
_OPTIONS_BY_NAME = {option.name: option for option in SETTING_OPTIONS}
# Interactive ``settings`` asks every setting (issue 33.15): the ones above first, in that order (the
# original tool's), then every other option in the order ``settings --help`` lists them.
_ASKED = _INTERACTIVE + tuple((option.name.replace("-", " ").capitalize(), option.name) for option in SETTING_OPTIONS
                              if option.name not in {name for _label, name in _INTERACTIVE})
# The labels _ASKED makes of the other options today, for the catalogs (a new option is asked in English
# until its label is added here).
_ASKED_LABELS = (N_("Power request reason"), N_("Session lease hours"), N_("Suspend ignores other blockers"),
                 N_("Pre suspend webhook url"), N_("Post session end webhook url"),
                 N_("Closed lid stop follow up webhook url"), N_("Closed lid stop follow up delay seconds"),
                 N_("Repeat closed lid stop follow up"), N_("Closed lid stop follow up sound"),
                 N_("Closed lid stop follow up sound volume override percent"), N_("Webhook previews"),
                 N_("Log full text"), N_("Power policy"), N_("Battery floor percent"),
                 N_("Dim display when idle minutes"), N_("Dim display brightness percent"), N_("Ui culture"))


def _choices_text(option: Any) -> str:
    """``choices: sleep, hibernate, `` for an option with a fixed set of answers (its metavar), else ""."""
    from ..settings.model import SYSTEM_SOUND_NAMES

    if option.metavar == "off|NAME|WAV":
        return _("choices: off, {names} or a .wav file path, ").format(names=", ".join(SYSTEM_SOUND_NAMES))
    if "|" not in option.metavar or option.metavar == "true|false" or option.json_path[-1] in NUMBER_RANGES:
        return ""
    return _("choices: {choices}, ").format(choices=option.metavar.replace("|", ", "))


def _load(context: CliContext) -> tuple[Settings, list[str]]:
    """The stored settings (created with the headless defaults when missing) and the problem lines
    of values that were not used as stored; an unusable file is an error and is left as it is."""
    path = context.paths.settings_file
    report = load_settings_report(path)
    if report.error is not None:
        raise CliError(report.error)
    if not report.exists:
        _save(path, report.settings)
    return report.settings, report.problems


def _save(path: Path, settings: Settings) -> None:
    """``save_settings`` with one readable line for what stops it (a directory, a full disk)."""
    try:
        save_settings(path, settings)
    except OSError as error:
        if os.path.isdir(path):
            reason = _("it is a directory; move it away first")
        else:
            reason = str(error.strerror or error).rstrip(".")
        raise CliError(_("Cannot save the settings file {path}: {reason}.").format(path=path, reason=reason)) \
            from error


def problem_lines(problems: list[str], *, saved: bool) -> list[str]:
    """The stored values that were not used as they are, for the settings output."""
    if not problems:
        return []
    title = (_("Stored values that were not usable (the file now holds the values used):") if saved
             else _("Stored values that are not used as they are:"))
    return [title, *(f"  {problem}" for problem in problems)]


def _stored_value(settings: Settings, json_path: tuple[str, ...]) -> Any:
    value: Any = settings.to_file_json()
    for key in json_path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _display_value(value: Any) -> str:
    if value is None or value == "":
        return _("off")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def changed_lines(before: Settings, after: Settings) -> list[str]:
    """The lines of the settings block that differ, as ``  Name: old -> new``."""
    old = dict(line.split(": ", 1) for line in format_settings_block(before)[1:])
    lines = []
    for line in format_settings_block(after)[1:]:
        name, value = line.split(": ", 1)
        if old.get(name) != value:
            lines.append(f"{name}: {old.get(name, _('unset'))} -> {value}")
    return [_("Changed:"), *lines] if lines else [_("No setting changed (the stored values are already these).")]


def _save_and_sync(context: CliContext, settings: Settings, lines: list[str],
                   problems: list[str] | None = None, *, before: Settings | None = None) -> int:
    from ..installers.common import stop_hook_timeout_seconds
    from ..installers.refresh import refresh_stop_hooks

    previous_timeout = stop_hook_timeout_seconds(context.paths.settings_file)
    _save(context.paths.settings_file, settings)
    block = format_settings_block(settings) if before is None else changed_lines(before, settings)
    # Issue 32.5: a new Stop hook timeout rewrites the installed Stop hooks (the settings lock is held).
    lines = [_("Settings file: {path}").format(path=context.paths.settings_file),
             *problem_lines(problems or [], saved=True),
             *block, *lines, *refresh_stop_hooks(context.paths.settings_file, previous_timeout)]
    response = context.request("settings", HasSettings=True, Settings=settings.to_file_json())
    if response.get("Succeeded"):
        lines.append(_("Runtime settings updated."))
    elif response.get("RuntimeUnavailable"):
        lines.append(_("Runtime is not running; saved settings will be used on the next start."))
    else:
        print("\n".join(lines))
        raise CliError(runtime_text(response.get("Message")))
    print("\n".join(lines))
    return 0


def _interactive(context: CliContext, settings: Settings, problems: list[str]) -> dict[tuple[str, ...], Any]:
    from ..platform.host import away_mode_supported

    if problems:
        print("\n".join(problem_lines(problems, saved=False)))
    defaults = headless_defaults()
    changes: dict[tuple[str, ...], Any] = {}
    for label, option_name in _ASKED:
        if option_name == "prevent-away-mode-sleep" and not away_mode_supported():
            continue
        option = _OPTIONS_BY_NAME[option_name]
        stored = _stored_value(settings, option.json_path)
        default = _stored_value(defaults, option.json_path)
        extra = f"{range_text(option.json_path[-1])}, " if option.json_path[-1] in NUMBER_RANGES else ""
        extra += _choices_text(option)
        label = _(label)
        while True:
            sys.stdout.write(_("{label} (stored: {stored}, default: {default}, {extra}press Enter to keep stored): ")
                             .format(label=label, stored=_display_value(stored), default=_display_value(default),
                                     extra=extra))
            sys.stdout.flush()
            answer = sys.stdin.readline()
            if answer == "":
                raise CliError(_("Input ended before {label} was entered.").format(label=label))
            answer = answer.strip()
            if not answer:
                break
            try:
                if isinstance(stored, bool) and answer.lower() not in ("true", "false"):
                    raise SettingsInputError(_("{label} must be true or false.").format(label=label))
                changes[option.json_path] = option.parse(answer)
                break
            except SettingsInputError as error:
                print(str(error))
    return changes


def _settings(context: CliContext, args: argparse.Namespace) -> int:
    given = {option.name: getattr(args, option.name.replace("-", "_")) for option in SETTING_OPTIONS}
    given = {name: value for name, value in given.items() if value is not None}
    reset = parse_bool(args.reset, "reset") if args.reset is not None else False
    if args.json:
        if given or reset:
            raise CliError(_("The --json option shows the settings; it cannot be combined with changes."))
        report = load_settings_report(context.paths.settings_file)
        if report.error is not None:  # a read command: the one warning line, exit 0 (issue 19)
            sys.stderr.write(_("lidguard: warning: {error}").format(error=escape_control(report.error)) + "\n")
            print_json({"settingsFile": str(context.paths.settings_file), "settings": None,
                        "settingsError": report.error, "problems": []})
            return 0
        settings, problems = _load(context)
        # camelCase like status --json (issue 33.14); the settings file itself keeps PascalCase
        print_json({"settingsFile": str(context.paths.settings_file), "settings": settings.to_camel_json(),
                    "settingsError": None, "problems": problems})
        return 0
    if not given and not reset:
        # Never hold the lock while the user types: the answers go onto the file as it is when saved.
        report = load_settings_report(context.paths.settings_file)
        if report.error is not None:
            raise CliError(report.error)
        answers = _interactive(context, report.settings, report.problems)
        return _locked(lambda context, args: _save_interactive(context, answers))(context, args)
    return _locked(_settings_from_options)(context, args)


def _save_interactive(context: CliContext, answers: dict[tuple[str, ...], Any]) -> int:
    settings, problems = _load(context)
    hints = [
        _("To remove the pre-suspend webhook run: lidguard remove-pre-suspend-webhook"),
        _("To remove the post-session-end webhook run: lidguard remove-post-session-end-webhook"),
        _("To remove the ask-before-sleep webhook run: lidguard remove-closed-lid-stop-follow-up-webhook"),
    ]
    updated = apply_changes(settings, answers)
    if not problems and updated.to_file_json() == settings.to_file_json():  # as stored: say so, write nothing
        print("\n".join([_("Settings file: {path}").format(path=context.paths.settings_file), _("Nothing changed."),
                         *hints]))
        return 0
    return _save_and_sync(context, updated, hints, problems, before=settings)


def _settings_from_options(context: CliContext, args: argparse.Namespace) -> int:
    given = {option.name: getattr(args, option.name.replace("-", "_")) for option in SETTING_OPTIONS}
    given = {name: value for name, value in given.items() if value is not None}
    reset = parse_bool(args.reset, "reset") if args.reset is not None else False
    problems: list[str] = []
    before: Settings | None = None
    if reset:
        settings = headless_defaults()
        report = load_settings_report(context.paths.settings_file)
        before = report.settings if report.error is None and report.exists else None
        if report.error is not None:
            _keep_a_copy(context.paths.settings_file)
    else:
        settings, problems = _load(context)
        before = settings
    changes: dict[tuple[str, ...], Any] = {}
    for name, text in given.items():
        option = _OPTIONS_BY_NAME[name]
        try:
            changes[option.json_path] = option.parse(text)
        except SettingsInputError as error:
            raise CliError(str(error)) from error
    return _save_and_sync(context, apply_changes(settings, changes), [], problems, before=before)


def _keep_a_copy(path: Path) -> None:
    """``--reset true`` over an unusable file keeps its bytes (0600) beside it first (issue 19)."""
    from datetime import datetime, timezone

    from ..fileio import write_atomic
    from ..fileio_open import UnusableFileError, read_regular_file

    try:
        data = read_regular_file(path, limit=16 * 1024 * 1024)
    except (OSError, UnusableFileError):
        return  # a directory, FIFO or unreadable file: nothing to copy (saving says what is wrong)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    copy = path.with_name(f"{path.name}.broken-{stamp}")
    try:
        write_atomic(copy, data)
    except OSError as error:
        raise CliError(_("Cannot keep a copy of the unusable settings file at {path}: {reason}; nothing was "
                         "changed.").format(path=copy, reason=error.strerror or error)) from error
    print(escape_control(_("Kept a copy of the unusable settings file at {path}.").format(path=copy)))


def _remover(json_key: str, missing: str, removed: str):
    def remove(context: CliContext, args: argparse.Namespace) -> int:
        settings, problems = _load(context)
        if not _stored_value(settings, (json_key,)):
            print(_(missing))
            return 0
        return _save_and_sync(context, apply_changes(settings, {(json_key,): ""}), [_(removed)], problems)

    return remove


def _locked(handler: Any) -> Any:
    """The whole read-modify-write under the settings file's exclusive lock (REFERENCE row 42)."""

    def run(context: CliContext, args: argparse.Namespace) -> int:
        from ..platform.locking import ConfigLockError, config_lock

        try:
            with config_lock(context.paths.settings_file):
                return int(handler(context, args))
        except ConfigLockError as error:
            raise CliError(str(error)) from error

    return run


def add_settings_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "settings", help=_("Show and change settings (interactive with no options)."),
        description=_("With no options, asks for each setting in turn. Values are validated; the running "
                      "runtime receives the update."))
    from ..platform.host import away_mode_supported

    for option in SETTING_OPTIONS:
        flags = [f"--{flag}" for flag in option.flags]
        # Away mode is Windows-only: hidden elsewhere (still parsed, to answer with a clear error).
        hidden = option.name == "prevent-away-mode-sleep" and not away_mode_supported()
        parser.add_argument(*flags, dest=option.name.replace("-", "_"), metavar=option.metavar,
                            help=argparse.SUPPRESS if hidden else _(option.help))
    parser.add_argument("--reset", metavar="true|false", help=_("start from the defaults before applying options"))
    parser.add_argument("--json", action="store_true",
                        help=_("print the stored settings as JSON (no other options)"))
    parser.set_defaults(handler=_settings)
    for command, key, missing, removed in (
        ("remove-pre-suspend-webhook", "PreSuspendWebhookUrl", N_("No pre-suspend webhook URL is configured."),
         N_("Pre-suspend webhook URL removed.")),
        ("remove-post-session-end-webhook", "PostSessionEndWebhookUrl",
         N_("No post-session-end webhook URL is configured."), N_("Post-session-end webhook URL removed.")),
        ("remove-closed-lid-stop-follow-up-webhook", "ClosedLidStopFollowUpWebhookUrl",
         N_("No closed lid stop follow-up webhook URL is configured."),
         N_("Closed lid stop follow-up webhook URL removed.")),
    ):
        sub = subparsers.add_parser(command, help=_("Clear {key} and update the runtime.").format(key=key))
        sub.set_defaults(handler=_locked(_remover(key, missing, removed)))
