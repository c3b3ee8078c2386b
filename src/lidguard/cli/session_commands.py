"""status and cleanup-orphans; the argparse help of the hook commands (which run in ``fast.py``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..ipc.client import HELD_LOCK_WAIT_SECONDS
from ..l10n import _
from .context import CliContext
from .fast import COMMAND_HELP, OPTION_HELP, options_of
from .output import (
    CliError,
    escape_control,
    format_local,
    pending_suspend_json,
    pending_suspend_line,
    print_json,
    response_block,
    runtime_text,
    session_json,
    sessions_omitted,
)
from .pause_commands import paused_line

if TYPE_CHECKING:
    from ..platform.api import PowerSource

__all__ = ["STATUS_BUDGET_SECONDS", "StatusView", "add_session_commands", "not_answering_line"]

# A runtime that holds its lock but never answers (never ready, stopped) is reported this soon, not after
# the client's 30 s reply wait as "not running".
STATUS_BUDGET_SECONDS = HELD_LOCK_WAIT_SECONDS  # a runtime starting is still waited for as long as before


def not_answering_line(response: dict[str, Any]) -> str:
    pid = response.get("RuntimeProcessIdentifier")
    head = _("LidGuard runtime not answering (pid {pid})").format(pid=pid) if type(pid) is int \
        else _("LidGuard runtime not answering")
    message = str(response.get("Message") or "")
    return f"{head}: {message}" if message else f"{head}."


def _status(context: CliContext, args: argparse.Namespace) -> int:
    if args.watch:
        from .status_watch import run_status_watch

        return run_status_watch(context, json_mode=args.json)
    response = context.request("status", budget=STATUS_BUDGET_SECONDS)
    if response.get("RuntimeNotAnswering") is True:
        raise CliError(not_answering_line(response))
    running = bool(response.get("Succeeded"))
    if not running and not response.get("RuntimeUnavailable"):
        raise CliError(runtime_text(response.get("Message")))
    view = StatusView(context, response if running else None)
    view.verbose = args.verbose
    if args.json:
        print_json(view.json())
    else:
        print("\n".join(view.lines(terminal=sys.stdout.isatty())))
    return 0


class StatusView:
    """What ``status`` shows for one runtime reply (None: no runtime), ready to render again later
    (``status --watch`` redraws the suspend countdown every second from the same reply)."""

    def __init__(self, context: CliContext, response: dict[str, Any] | None) -> None:
        from ..settings.store import load_settings_report
        from .file_health import file_problems

        self.context = context
        self.report = load_settings_report(context.paths.settings_file)  # never raises, never writes
        self.files = file_problems(context.paths)
        self.running = response is not None
        self.verbose = False  # status --verbose: every setting, not only the changed ones
        self.response = response if response is not None else _local_status(context)
        self.settings = _runtime_settings(self.response.get("Settings"), self.report.settings) \
            if self.running else self.report.settings
        self.power_source = _power_source(context)
        self.fake_platform = _fake_platform(context, self.response if self.running else None)
        from ..shared.readiness import readiness

        self.readiness = readiness(self.response if self.running else None, self.power_source)
        self.verdict, self.last_start_failure = _nothing_protected(context, self.response, self.running)
        self.agent_holders = _agent_holders(context, self.response if self.running else None, self.settings)

    def json(self) -> dict[str, Any]:
        response, running, power_source = self.response, self.running, self.power_source
        return {
            "runtimeRunning": running,
            "readiness": self.readiness.to_json(),  # "Safe to close the lid?" (issue 38.3)
            "powerSource": power_source.to_json() if power_source is not None else None,
            "fakePlatform": self.fake_platform,
            "runtimePlatform": self.runtime_platform,
            "verdict": self.verdict,
            "lastStartFailure": self.last_start_failure,
            "message": "LidGuard runtime is running." if running else "LidGuard runtime is not running.",
            **({"watchRefused": self.watch_refused} if self.watch_refused else {}),
            "activeSessionCount": response.get("ActiveSessionCount", 0),
            "lidSwitchState": response.get("LidSwitchState", "Unknown"),
            "visibleDisplayMonitorCount": response.get("VisibleDisplayMonitorCount", 0),
            "pendingSuspend": pending_suspend_json(response.get("PendingSuspend"),
                                                   lid=response.get("LidSwitchState")),
            "suspendBlocked": _suspend_blocked(response.get("SuspendBlocked")),
            "agentKeepAwake": self.agent_holders,  # sleep blockers an agent holds now (issue 35.5)
            "thermalMonitorRunning": response.get("ThermalMonitorRunning") is True,
            "protectionHeldBack": _held_back(response),
            "lidPolicyHeldBack": _lid_held_back(response),
            "lastSuspendFailure": _last_suspend_failure(response),
            "paused": _paused_json(response.get("Paused")),
            "displayDimmed": _dimmed(response.get("DisplayDimmed")),
            "settingsFile": str(self.context.paths.settings_file),
            "settingsError": self.report.error,
            "settingsProblems": list(self.report.problems),
            "fileProblems": self.files,
            "settings": self.settings.to_camel_json(),
            "sessions": [session_json(session) for session in response.get("Sessions", [])],
            "sessionsOmitted": sessions_omitted(response),  # listed only up to the reply's bounds
            "sessionJournal": response.get("SessionJournal"),
        }

    @property
    def runtime_platform(self) -> dict[str, str] | None:
        """``{"name", "use"}`` of the running runtime's platform (its reply: ``Platform``, ``PlatformUse``)."""
        name, use = self.response.get("Platform"), self.response.get("PlatformUse")
        if not self.running or not isinstance(name, str):
            return None
        return {"name": escape_control(name[:32]), "use": escape_control(use[:16]) if isinstance(use, str) else ""}

    @property
    def suspend_pending(self) -> bool:
        return isinstance(self.response.get("PendingSuspend"), dict)

    @property
    def ticking(self) -> bool:
        """A countdown is shown (a pending suspend, a pause with an end): ``status --watch`` redraws it."""
        paused = self.response.get("Paused")
        return self.suspend_pending or (isinstance(paused, dict) and isinstance(paused.get("UntilUtc"), str))

    @property
    def watch_refused(self) -> str:
        """Why the runtime refused the ``watch`` stream (``ipc.watch``: polled meanwhile), else ""."""
        refused = self.response.get("WatchRefused") if self.running else None
        return escape_control(refused[:500]) if isinstance(refused, str) else ""

    def lines(self, *, terminal: bool) -> list[str]:
        """The colour table on a terminal (``status_view.py``), else the plain text scripts read."""
        from ..settings.display import format_settings_block

        response, report = self.response, self.report
        pending = pending_suspend_line(response.get("PendingSuspend"), lid=response.get("LidSwitchState"))
        from .doctor import fake_platform_text

        tail = [fake_platform_text(self.fake_platform)] if self.fake_platform else []
        tail += _failure_lines(self.verdict, self.last_start_failure)
        tail += [_("Fake state problem: {problem}").format(problem=problem)
                 for problem in _fake_state_problems(self.context)]
        tail.append(pending or _("Pending suspend: none"))
        tail += suspend_blocked_lines(response.get("SuspendBlocked"))
        tail += [_("Agent keep-awake: {holder}").format(holder=holder["text"]) for holder in self.agent_holders]
        if response.get("SuspendBlocked") and self.running:
            running = response.get("ThermalMonitorRunning") is True
            tail.append(_("Emergency thermal monitor: running") if running else _("Emergency thermal monitor: off"))
        paused = paused_line(response.get("Paused"))
        if paused is not None:
            tail.append(paused)
        platform = self.runtime_platform
        if platform:
            tail.append(_("Runtime platform: {name}").format(name=platform["name"])
                        + (f" ({platform['use']})" if platform["use"] else ""))
        tail += [_("Protection held back: {reason}").format(reason=runtime_text(reason))
                 for reason in _held_back(response)]
        lid_note = _lid_held_back(response)
        if lid_note is not None:
            tail.append(_("Lid-close action held back: {note}").format(note=runtime_text(lid_note)))
        failure = _last_suspend_failure(response)
        if failure is not None:
            tail.append(_("Last suspend request failed ({mode}, {reason}, {at}): {message}").format(
                mode=failure["suspendMode"], reason=failure["reason"], at=failure["recordedAt"],
                message=failure["message"]))
        refused = self.watch_refused
        if refused:  # status --watch: the runtime refused the stream (every watcher slot taken)
            tail.append(_("Live updates refused: {refused} Falling back to polling status.").format(refused=refused))
        dimmed = _dimmed(response.get("DisplayDimmed"))
        if dimmed is not None:
            tail.append(_("Display dimmed (the user is away): {dimmed}/{maximum}, restored to {brightness} on "
                          "activity ({device})").format(dimmed=dimmed["dimmedTo"], maximum=dimmed["maxBrightness"],
                                                         brightness=dimmed["brightness"], device=dimmed["device"]))
        journal = response.get("SessionJournal")
        if isinstance(journal, dict) and journal.get("Degraded"):
            tail.append(_("Session journal degraded (a runtime crash would forget sessions): {reason}").format(
                reason=journal["Degraded"]))
        if self.power_source is not None:
            tail.append(_("Power source: {source}").format(source=self.power_source.describe()))
        tail.append(_("Settings file: {path}").format(path=self.context.paths.settings_file))
        if report.error:
            tail.append(_("Settings file error: {error}").format(error=report.error))
        tail += [_("Settings problem: {problem}").format(problem=problem) for problem in report.problems]
        tail += [_("File problem: {problem}").format(problem=problem) for problem in self.files]
        tail += format_settings_block(self.settings, changed_only=not self.verbose)
        if terminal:
            from .status_view import colour_wanted, terminal_status_lines

            colour = colour_wanted()
            answer = escape_control(self.readiness.localized(_))
            if colour:  # green when it is safe, yellow while it is not yet
                answer = f"\x1b[{'32' if self.readiness.safe else '33'}m{answer}\x1b[0m"
            return [answer, *terminal_status_lines(self.running, response, tail, colour=colour)]
        lines = [self.readiness.localized(_)]
        lines.append(_("LidGuard runtime is running.") if self.running else _("LidGuard runtime is not running."))
        lines += response_block({**response, "PendingSuspend": None}, with_message=False)
        lines += tail
        return [escape_control(line) for line in lines]


def _nothing_protected(context: CliContext, response: dict[str, Any], running: bool
                       ) -> tuple[str | None, dict[str, str] | None]:
    """With no session: doctor's verdict when nothing can be protected here, and the last failed start
    (the runtime's ``LastStartFailure``, or the file it left when it is gone); (None, None) otherwise."""
    if response.get("ActiveSessionCount"):
        return None, None
    from .doctor import protection_verdict

    try:
        verdict = protection_verdict(context.platform)
    except Exception:  # noqa: BLE001 - a platform that cannot load: the power source line says why
        verdict = None
    failure = response.get("LastStartFailure") if running else _last_start_failure_file(context)
    if not isinstance(failure, dict) or not all(isinstance(failure.get(key), str) for key in ("At", "Reason")):
        return verdict, None
    return verdict, {"at": failure["At"], "session": str(failure.get("Session") or ""), "reason": failure["Reason"]}


def _agent_holders(context: CliContext, response: dict[str, Any] | None, settings: Any) -> list[dict[str, Any]]:
    """The sleep blockers a known agent holds now: one listing (``cli/agent_keep_awake.py``)."""
    from .agent_keep_awake import live_holders, watched_from_reply

    try:
        platform = context.platform
    except Exception:  # noqa: BLE001 - a platform that cannot load: the power source line says why
        return []
    return live_holders(platform, watched_from_reply(response),
                        ignores_other_blockers=settings.suspend_ignores_other_blockers is True)


def _last_start_failure_file(context: CliContext) -> Any:
    from ..fileio_open import read_json_object
    from ..runtime.components.start_failures import LAST_START_FAILURE_FILE_NAME

    try:
        return read_json_object(context.paths.data_dir / LAST_START_FAILURE_FILE_NAME, limit=16384)
    except Exception:  # noqa: BLE001 - unreadable: nothing to show
        return None


def _failure_lines(verdict: str | None, failure: dict[str, str] | None) -> list[str]:
    from .doctor import localized_verdict
    from .output import local_time

    lines = [_("Verdict: {verdict}").format(verdict=localized_verdict(verdict))] if verdict else []
    if failure is not None:
        session = f" ({failure['session']})" if failure["session"] else ""
        lines.append(_("Last failed start{session} at {at}: {reason}").format(
            session=session, at=local_time(failure["at"]), reason=failure["reason"]))
    return lines


def _fake_state_problems(context: CliContext) -> list[str]:
    """What ``LIDGUARD_FAKE_STATE`` got wrong (the fake platform only; each with the shape it wants)."""
    from .. import switches

    try:
        platform = context.platform
        if platform.name != "fake":
            return []
        problems = list(platform.machine.problems)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a platform that cannot load is reported elsewhere
        return []
    return [f"{switches.fake_state_file()}: {problem}" for problem in problems]


def _fake_platform(context: CliContext, response: dict[str, Any] | None) -> dict[str, str] | None:
    """``{"reason", "text"}`` while the runtime (or, with none running, this command) uses the fake
    platform, which protects nothing; None otherwise."""
    from .. import switches

    if response is not None:
        reason = response.get("FakePlatform")
        if not isinstance(reason, str):
            return None
    else:
        try:
            if context.platform.name != "fake":
                return None
        except Exception:  # noqa: BLE001 - the power source line reports a platform that cannot load
            return None
        reason = switches.fake_platform_reason() or "chosen by the caller"
    return {"reason": reason, "text": switches.fake_platform_line(reason)}


def _runtime_settings(data: Any, fallback: Any) -> Any:
    """The settings the runtime applies (its reply), or the file's when the reply cannot be read."""
    from ..settings.model import Settings

    try:
        return Settings.from_raw(data)
    except ValueError:
        return fallback


def _power_source(context: CliContext) -> PowerSource | None:
    """AC/battery facts where the platform can tell (``Platform.describe_power_source``)."""
    from ..platform.errors import Unsupported

    try:
        return context.platform.describe_power_source()
    except (Unsupported, OSError):
        return None


def _local_status(context: CliContext) -> dict[str, Any]:
    """Lid and display facts read by the CLI itself when no runtime runs."""
    from ..platform.api import LidState, Unsupported, count_visible_displays

    try:
        lid = context.platform.lid.read_lid_state()
    except (Unsupported, OSError):
        lid = LidState.UNKNOWN
    try:
        count = count_visible_displays(context.platform.display.list_connected_displays(), exclude_internal=False)
    except (Unsupported, OSError):
        count = 0
    return {"ActiveSessionCount": 0, "LidSwitchState": lid.value, "VisibleDisplayMonitorCount": count,
            "Sessions": []}


def _cleanup_orphans(context: CliContext, args: argparse.Namespace) -> int:
    response = context.request("cleanup-orphans")
    if response.get("RuntimeUnavailable"):
        print(_("LidGuard runtime is not running. Nothing to clean up."))
        return 0
    if not response.get("Succeeded"):
        raise CliError(runtime_text(response.get("Message")) or _("The runtime reported a failure."))
    print("\n".join(response_block(response)))
    return 0


def _add_hook_command_help(subparsers: Any, command: str) -> None:
    """argparse knows the hook commands only for ``help <command>`` / ``<command> --help``."""
    parser = subparsers.add_parser(command, help=_(COMMAND_HELP[command]), description=_(COMMAND_HELP[command]))
    for key in options_of(command):
        names, text = OPTION_HELP[key]
        text = _(text)
        if key in ("all", "force"):
            parser.add_argument(*names, dest=key, action="store_true", help=text)
        else:
            parser.add_argument(*names, dest=key, help=text)


def add_session_commands(subparsers: Any) -> None:
    _add_hook_command_help(subparsers, "start")
    _add_hook_command_help(subparsers, "stop")
    parser = subparsers.add_parser("status", help=_("Show the runtime, its sessions and the settings."))
    parser.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.add_argument("--verbose", "-v", action="store_true",
                        help=_("list every setting, not only the changed ones"))
    parser.add_argument("--watch", action="store_true",
                        help=_("keep showing the status, redrawn on every change the runtime reports (Ctrl-C ends)"))
    parser.set_defaults(handler=_status)
    _add_hook_command_help(subparsers, "remove-session")
    parser = subparsers.add_parser("cleanup-orphans", help=_("Remove sessions whose watched process is gone."))
    parser.set_defaults(handler=_cleanup_orphans)
    _add_hook_command_help(subparsers, "stop-runtime")
    _add_hook_command_help(subparsers, "mark-session-active")
    _add_hook_command_help(subparsers, "mark-session-softlocked")


def _suspend_blocked(blocked: Any) -> dict[str, Any] | None:
    """camelCase ``SuspendBlocked`` (a suspend waits for another program's sleep blocker), else None."""
    if not isinstance(blocked, dict):
        return None
    listed = blocked.get("Blockers")
    blockers: list[Any] = listed if isinstance(listed, list) else []
    return {"mode": blocked.get("Mode"), "reason": blocked.get("Reason"), "sinceUtc": blocked.get("SinceUtc"),
            "waiting": blocked.get("Waiting") is True,
            "blockers": [{key[:1].lower() + key[1:]: value for key, value in blocker.items()}
                         for blocker in blockers if isinstance(blocker, dict)]}


def suspend_blocked_lines(blocked: Any) -> list[str]:
    """``Suspend blocked by another program: backup (nightly), pid 42, uid 1001`` per blocker, plus the wait."""
    view = _suspend_blocked(blocked)
    if view is None:
        return []
    lines = [_("Suspend blocked since {since} ({mode}): waiting for the blocker to end, then suspending once").format(
        since=format_local(view["sinceUtc"]), mode=view["mode"])]
    for blocker in view["blockers"]:
        parts = [f"{blocker.get('who') or _('unknown program')}" + (f" ({blocker['why']})" if blocker.get("why")
                                                                    else "")]
        labels = (("pid", "pid"), ("uid", "uid"), ("what", _("blocks")), ("agent", _("agent")))
        parts += [f"{label} {blocker[key]}" for key, label in labels if blocker.get(key) not in (None, "")]
        lines.append(_("Suspend blocked by: {blockers}").format(blockers=", ".join(str(part) for part in parts)))
    return lines


def _held_back(response: dict[str, Any]) -> list[str]:
    """Why the runtime holds protection back (power policy, Emergency Hibernation); sessions stay."""
    reasons = response.get("ProtectionHeldBack")
    return [str(reason) for reason in reasons if isinstance(reason, str)] if isinstance(reasons, list) else []


def _lid_held_back(response: dict[str, Any]) -> str | None:
    """Why the lid-close change is left alone while keep-awake is held (a missing permission)."""
    note = response.get("LidPolicyHeldBack")
    return note if isinstance(note, str) and note else None


def _last_suspend_failure(response: dict[str, Any]) -> dict[str, str] | None:
    """camelCase ``LastSuspendFailure`` (the newest suspend request was refused: why, and the command
    that fixes it when there is one), else None."""
    failure = response.get("LastSuspendFailure")
    keys = ("RecordedAt", "SuspendMode", "Reason", "Message")
    if not isinstance(failure, dict) or not all(isinstance(failure.get(key), str) for key in keys):
        return None
    return {key[:1].lower() + key[1:]: failure[key] for key in keys}


def _dimmed(dimmed: Any) -> dict[str, Any] | None:
    """camelCase ``DisplayDimmed`` of a reply (the runtime dimmed the display), else None."""
    keys = ("Device", "Brightness", "MaxBrightness", "DimmedTo", "SinceUtc")
    if not isinstance(dimmed, dict) or not all(key in dimmed for key in keys):
        return None
    return {key[:1].lower() + key[1:]: dimmed[key] for key in keys}


def _paused_json(paused: Any) -> dict[str, Any] | None:
    """``{"untilUtc": ...}`` while paused (``untilUtc`` null: until resume), else None."""
    if not isinstance(paused, dict):
        return None
    until = paused.get("UntilUtc")
    return {"untilUtc": until if isinstance(until, str) else None}
