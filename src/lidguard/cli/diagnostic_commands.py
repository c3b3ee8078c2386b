"""current-lid-state, current-monitor-count, current-temperature, suspend-history, doctor."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..l10n import N_, _
from ..platform.api import (
    PERMISSION_SUBCOMMANDS,
    LidState,
    TemperatureMode,
    Unsupported,
    aggregate_temperature,
    count_visible_displays,
)
from ..settings import Settings, load_settings_report
from ..settings.model import SUSPEND_HISTORY_COUNT_MAX
from .context import CliContext
from .output import CliError, escape_control, format_local, print_json

__all__ = ["add_diagnostic_commands"]


def _current_lid_state(context: CliContext, args: argparse.Namespace) -> int:
    reader = context.platform.lid
    deadline = time.monotonic() + 0.5
    try:
        state = reader.read_lid_state()
        while state is LidState.UNKNOWN and time.monotonic() < deadline:
            time.sleep(0.025)  # some backends fill the state asynchronously (REFERENCE 1.2)
            state = reader.read_lid_state()
    except (Unsupported, OSError) as error:
        raise CliError(_("The lid state cannot be read: {error}").format(error=error)) from error
    if args.json:
        print_json({"lidSwitchState": state.value})
    else:
        print(_("Current lid state: {state}").format(state=state.value))
    return 0


def _current_monitor_count(context: CliContext, args: argparse.Namespace) -> int:
    try:
        displays = context.platform.display.list_connected_displays()
    except (Unsupported, OSError) as error:
        raise CliError(_("The display monitors cannot be counted: {error}").format(error=error)) from error
    count = count_visible_displays(displays, exclude_internal=False)
    if args.json:
        print_json({"visibleDisplayMonitorCount": count,
                    "displays": [{"name": item.name, "internal": item.internal} for item in displays]})
    else:
        print(_("Current visible display monitor count: {count}").format(count=count))
    return 0


def _stored_settings(context: CliContext) -> Settings:
    """A read-only command works with an unusable settings file: the defaults, and the same warning
    ``start``, ``status`` and ``doctor`` give (the file is left as it is)."""
    report = load_settings_report(context.paths.settings_file)
    if report.error:
        sys.stderr.write(_("lidguard: warning: {error} Using the defaults.").format(error=escape_control(report.error))
                         + "\n")
    return report.settings


def _temperature_mode(context: CliContext, text: str | None) -> TemperatureMode:
    value = (text or "").strip().lower()
    if value in ("", "default"):
        return _stored_settings(context).emergency_hibernation_temperature_mode
    for mode in TemperatureMode:
        if mode.value.lower() == value:
            return mode
    raise CliError(_("The temperature-mode option must be default, low, average, or high."))


def _current_temperature(context: CliContext, args: argparse.Namespace) -> int:
    mode = _temperature_mode(context, args.temperature_mode)
    try:
        values = context.platform.thermal.read_temperatures_celsius()
    except (Unsupported, OSError):
        values = []
    celsius = aggregate_temperature(values, mode)
    if args.json:
        print_json({"temperatureMode": mode.value, "temperatureCelsius": celsius, "zoneCount": len(values)})
    elif celsius is None:
        print(_("Current recognized system temperature is unavailable from this platform's thermal-zone "
                "information using {mode} mode.").format(mode=mode.value))
    else:
        print(_("Current recognized system temperature using {mode} mode: {celsius} Celsius").format(
            mode=mode.value, celsius=celsius))
    return 0


def _suspend_history(context: CliContext, args: argparse.Namespace) -> int:
    from ..runtime.logs import SuspendHistory

    retention = _stored_settings(context).suspend_history_entry_count
    count = args.count if args.count is not None else (retention or 10)
    entries = SuspendHistory(context.paths.suspend_history_file).newest_first(count)
    if args.json:
        print_json({"suspendHistoryFile": str(context.paths.suspend_history_file), "entries": entries})
        return 0
    recording = _("{value} entries").format(value=retention) if retention else _("off")
    lines = [_("Suspend history file: {path}").format(path=context.paths.suspend_history_file),
             _("Suspend history recording: {value}").format(value=recording)]
    if not entries:
        lines.append(_("No suspend history entries recorded."))
    else:
        lines.append(_("Recent suspend history entries: {count}").format(count=len(entries)))
        for entry in entries:
            lines.append(f"- {format_local(entry.get('RecordedAt'))} mode={entry.get('SuspendMode')} "
                         f"reason={entry.get('Reason')} succeeded={entry.get('Succeeded')} "
                         f"activeSessions={entry.get('ActiveSessionCount')} "
                         f"triggerSessions={entry.get('SuspendTriggerSessionCount')} "
                         f"event={entry.get('EventName')}")
            if entry.get("SessionIdentifier"):
                lines.append(f"  session={entry.get('Provider')}:{entry['SessionIdentifier']}")
            if entry.get("ObservedTemperatureCelsius") is not None:
                lines.append(f"  temperature={entry['ObservedTemperatureCelsius']} Celsius "
                             f"mode={entry.get('EmergencyHibernationTemperatureMode')} "
                             f"threshold={entry.get('EmergencyHibernationTemperatureCelsius')} Celsius")
            for blocker in entry.get("Blockers") or []:
                if isinstance(blocker, dict):
                    lines.append(f"  blockedBy={blocker.get('Who')} why=\"{blocker.get('Why')}\" "
                                 f"pid={blocker.get('Pid')} uid={blocker.get('Uid')} what={blocker.get('What')} "
                                 f"agent={blocker.get('Agent')}")
            if entry.get("WorkingDirectory"):
                lines.append(f"  cwd=\"{entry['WorkingDirectory']}\"")
            if entry.get("Message"):
                lines.append(f"  message={entry['Message']}")
    print("\n".join(lines))
    return 0


def _doctor(context: CliContext, args: argparse.Namespace) -> int:
    from .doctor import collect_doctor_report, doctor_exit_code, format_doctor_report

    report = collect_doctor_report(context)
    if args.json:
        print_json(report)
    else:
        print("\n".join(format_doctor_report(report)))
    return doctor_exit_code(report)


_COUNT_MESSAGE = f"must be an integer from 1 to {SUSPEND_HISTORY_COUNT_MAX}"


def _history_count(text: str) -> int:
    """1 to the largest retention: the history file never holds more entries than that."""
    value = text.strip()
    if not (value.isascii() and value.isdigit() and len(value) <= 10 and 1 <= int(value) <= SUSPEND_HISTORY_COUNT_MAX):
        raise argparse.ArgumentTypeError(_COUNT_MESSAGE)
    return int(value)


# One line each for `lidguard linux-permission --help` / `lidguard help linux-permission` (short
# enough for argparse's help column on an 80-column terminal).
_PERMISSION_HELP = {
    "status": N_("Show the rule, the tools and logind's answers."),
    "check": N_("Try an inhibitor and logind; never suspends."),
    "install": N_("Install this user's polkit rule (uses sudo)."),
    "remove": N_("Remove the polkit rule lidguard installed."),
}


def _permission(context: CliContext, args: argparse.Namespace) -> int:
    """Through the platform's permission capability (the CLI never imports an OS package)."""
    import sys

    backend = context.platform.name
    if backend not in (args.permission_backend, "fake"):
        raise CliError(_("The {name}-permission command needs the {name} backend; the selected platform is "
                         "{backend}.").format(name=args.permission_backend, backend=backend))
    try:
        return context.platform.permission.run(args.subcommand, out=sys.stdout, err=sys.stderr)
    except Unsupported as error:
        raise CliError(_("The permission command is unavailable: {error}").format(error=error)) from error


def add_diagnostic_commands(subparsers: Any) -> None:
    from ..platform.host import host_os_name

    parser = subparsers.add_parser("doctor",
                                   help=_("Check this machine: platform, native modules, capabilities, paths."))
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_doctor)
    parser = subparsers.add_parser("current-lid-state", help=_("Print the lid switch state."))
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_current_lid_state)
    parser = subparsers.add_parser("current-monitor-count", help=_("Print the visible display monitor count."))
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_current_monitor_count)
    parser = subparsers.add_parser("current-temperature", help=_("Print the system temperature."))
    parser.add_argument("--temperature-mode", metavar="default|low|average|high")
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_current_temperature)
    parser = subparsers.add_parser("suspend-history", help=_("Show recent suspend attempts, newest first."))
    parser.add_argument("--count", type=_history_count, metavar=f"1-{SUSPEND_HISTORY_COUNT_MAX}",
                        help=_("how many entries (default: the retention)"))
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_suspend_history)
    if host_os_name() == "linux":
        parser = subparsers.add_parser(
            "linux-permission", help=_("Check or install the polkit rule for logind actions."),
            description=_("Manage the polkit rule that allows this user's lidguard runtime to hold sleep/lid "
                        "inhibitors and to suspend or hibernate through systemd-logind."))
        commands = parser.add_subparsers(dest="subcommand", metavar="|".join(PERMISSION_SUBCOMMANDS),
                                         title="subcommands", required=True)
        for name in PERMISSION_SUBCOMMANDS:
            commands.add_parser(name, help=_(_PERMISSION_HELP[name]), description=_(_PERMISSION_HELP[name]))
        parser.set_defaults(handler=_permission, skip_recovery=False, permission_backend="linux")
    if host_os_name() == "macos" or _selected_platform() == "macos":
        parser = subparsers.add_parser(
            "macos-permission", help=_("Check or install the sudoers rule for pmset/powermetrics."),
            description=_("Manage the sudoers rule that lets this user's lidguard runtime run exactly the "
                        "allowlisted pmset and powermetrics commands through `sudo -n`."))
        commands = parser.add_subparsers(dest="subcommand", metavar="|".join(PERMISSION_SUBCOMMANDS),
                                         title="subcommands", required=True)
        for name in PERMISSION_SUBCOMMANDS:
            commands.add_parser(name, help=_(_MACOS_PERMISSION_HELP[name]),
                                description=_(_MACOS_PERMISSION_HELP[name]))
        parser.set_defaults(handler=_permission, skip_recovery=False, permission_backend="macos")


# One line each for `lidguard macos-permission --help` (owned by the macOS backend, H7).
_MACOS_PERMISSION_HELP = {
    "status": N_("Show the sudoers rule, the tools and pmset values."),
    "check": N_("Try caffeinate, pmset and powermetrics; never sleeps."),
    "install": N_("Install the sudoers rule for this user (uses sudo)."),
    "remove": N_("Remove the sudoers rule lidguard installed."),
}


def _selected_platform() -> str:
    from ..platform import selected_platform_name

    try:
        return selected_platform_name()
    except ValueError:
        return ""
