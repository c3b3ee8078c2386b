"""start, stop, status, remove-session, cleanup-orphans."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..runtime.sessions import AgentProvider, parse_provider
from ..settings import SettingsFileError, load_or_create_settings
from ..settings.display import format_settings_block
from .context import CliContext
from .output import CliError, print_json, response_block, session_json

__all__ = ["add_session_commands"]

PROVIDER_REQUIRED = "A provider is required. Use codex, claude, copilot, opencode, custom, mcp, or unknown."


def _add_session_options(parser: argparse.ArgumentParser, *, provider_required: bool = True) -> None:
    parser.add_argument("--provider", required=False, help="codex, claude, copilot, opencode, custom, mcp or unknown")
    parser.add_argument("--session", "--session-id", "--session-identifier", dest="session",
                        help="session identifier (default: <Provider>:<working directory>)")
    parser.add_argument("--provider-name", "--mcp-provider-name", dest="provider_name",
                        help="required with --provider mcp")
    parser.add_argument("--parent-pid", "--watched-process-id", "--watched-process-identifier",
                        dest="parent_pid",
                        help="process to watch (the session ends when it exits), or 'auto' for the "
                             "provider's agent found in this command's own ancestry")
    parser.add_argument("--working-directory", "--cwd", dest="working_directory",
                        help="working directory recorded for the session (default: current)")


def _session_fields(args: argparse.Namespace) -> dict[str, Any]:
    provider = parse_provider(args.provider)
    if provider is None:
        raise CliError(PROVIDER_REQUIRED)
    provider_name = (args.provider_name or "").strip()
    if provider is AgentProvider.MCP and not provider_name:
        raise CliError("The --provider-name option is required when --provider mcp is used.")
    watched = 0
    if (args.parent_pid or "").strip().lower() == "auto":
        watched = _agent_from_own_ancestry(provider)
    elif args.parent_pid is not None:
        try:
            watched = int(args.parent_pid)
        except ValueError:
            watched = -1
        if watched < 0:
            raise CliError("The watched process identifier must be a non-negative integer.")
    working_directory = os.path.abspath(args.working_directory or os.getcwd()).rstrip(os.sep) or os.sep
    display = f"Mcp:{provider_name}" if provider is AgentProvider.MCP else provider.value
    session = (args.session or "").strip() or f"{display}:{working_directory}"
    return {
        "Provider": provider.value,
        "ProviderName": provider_name,
        "SessionIdentifier": session,
        "WatchedProcessIdentifier": watched,
        "WorkingDirectory": working_directory,
    }


_ANCESTRY_PROVIDER_WORDS = {
    AgentProvider.CLAUDE: "claude",
    AgentProvider.CODEX: "codex",
    AgentProvider.GITHUB_COPILOT: "copilot",
    AgentProvider.OPENCODE: "opencode",
}


def _agent_from_own_ancestry(provider: AgentProvider) -> int:
    """The provider's agent process above this command (0 = none found); never the working directory."""
    from .. import proctree
    from ..hooks.agent_process import resolve_agent_process
    from ..platform.api import Unsupported

    try:
        chain = proctree.read_ancestry()
    except (Unsupported, OSError) as error:
        raise CliError(f"The process ancestry cannot be read: {error}") from error
    agent = resolve_agent_process(chain, _ANCESTRY_PROVIDER_WORDS.get(provider, "unknown"))
    return agent.pid if agent is not None else 0


def _print_response(response: dict[str, Any]) -> int:
    if not response.get("Succeeded"):
        raise CliError(str(response.get("Message") or "The runtime reported a failure."))
    print("\n".join(response_block(response)))
    return 0


def _start(context: CliContext, args: argparse.Namespace) -> int:
    fields = _session_fields(args)
    try:
        load_or_create_settings(context.paths.settings_file)
    except SettingsFileError as error:
        raise CliError(str(error)) from error
    return _print_response(context.request("start", auto_start=True, **fields))


def _stop(context: CliContext, args: argparse.Namespace) -> int:
    fields = _session_fields(args)
    return _print_response(context.request("stop", IsProviderSessionEnd=False, **fields))


def _status(context: CliContext, args: argparse.Namespace) -> int:
    response = context.request("status")
    running = bool(response.get("Succeeded"))
    if running:
        settings_json = response.get("Settings") or {}
        from ..settings.model import Settings

        settings = Settings.model_validate(settings_json)
    else:
        if not response.get("RuntimeUnavailable"):
            raise CliError(str(response.get("Message")))
        try:
            settings = load_or_create_settings(context.paths.settings_file)
        except SettingsFileError as error:
            raise CliError(str(error)) from error
        response = _local_status(context)
    power_source = _power_source(context)
    if args.json:
        print_json({
            "runtimeRunning": running,
            "powerSource": power_source,
            "message": "LidGuard runtime is running." if running else "LidGuard runtime is not running.",
            "activeSessionCount": response.get("ActiveSessionCount", 0),
            "lidSwitchState": response.get("LidSwitchState", "Unknown"),
            "visibleDisplayMonitorCount": response.get("VisibleDisplayMonitorCount", 0),
            "settingsFile": str(context.paths.settings_file),
            "settings": settings.to_camel_json(),
            "sessions": [session_json(session) for session in response.get("Sessions", [])],
        })
        return 0
    lines = ["LidGuard runtime is running." if running else "LidGuard runtime is not running."]
    lines += response_block(response, with_message=False)
    if power_source is not None:
        lines.append(f"Power source: {_power_source_text(power_source)}")
    lines.append(f"Settings file: {context.paths.settings_file}")
    lines += format_settings_block(settings)
    print("\n".join(lines))
    return 0


def _power_source(context: CliContext) -> dict[str, Any] | None:
    """AC/battery facts where the backend reads them (Linux: /sys/class/power_supply)."""
    describe = getattr(context.platform, "describe_power_source", None)
    if describe is None:
        return None
    try:
        return describe()
    except OSError:
        return None


def _power_source_text(power_source: dict[str, Any]) -> str:
    on_ac = power_source.get("onAc")
    parts = ["AC" if on_ac else "battery" if on_ac is False else "unknown"]
    if power_source.get("batteryPercent") is not None:
        parts.append(f"battery {power_source['batteryPercent']}%")
    if power_source.get("batteryStatus"):
        parts.append(str(power_source["batteryStatus"]))
    return ", ".join(parts)


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


def _remove_session(context: CliContext, args: argparse.Namespace) -> int:
    fields: dict[str, Any]
    if args.all:
        for flag, value in (("--session", args.session), ("--provider", args.provider),
                            ("--provider-name", args.provider_name)):
            if value:
                raise CliError(f"The --all option cannot be combined with {flag}.")
        fields = {"MatchAllSessions": True}
    else:
        if not (args.session or "").strip():
            raise CliError("A session identifier is required.")
        fields = {"SessionIdentifier": args.session.strip()}
        if args.provider:
            provider = parse_provider(args.provider)
            if provider is None:
                raise CliError(PROVIDER_REQUIRED)
            fields["Provider"] = provider.value
            fields["ProviderName"] = (args.provider_name or "").strip()
    response = context.request("remove-session", **fields)
    if response.get("RuntimeUnavailable"):
        print("LidGuard runtime is not running. No active session was removed.")
        return 0
    return _print_response(response)


def _cleanup_orphans(context: CliContext, args: argparse.Namespace) -> int:
    response = context.request("cleanup-orphans")
    if response.get("RuntimeUnavailable"):
        print("LidGuard runtime is not running. Nothing to clean up.")
        return 0
    return _print_response(response)


def add_session_commands(subparsers: Any) -> None:
    parser = subparsers.add_parser("start", help="Start or update a session (starts the runtime if needed).")
    _add_session_options(parser)
    parser.set_defaults(handler=_start)
    parser = subparsers.add_parser("stop", help="Stop a session (never sends a session-end webhook).")
    _add_session_options(parser)
    parser.set_defaults(handler=_stop)
    parser = subparsers.add_parser("status", help="Show the runtime, its sessions and the settings.")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_status)
    parser = subparsers.add_parser("remove-session", help="Remove sessions without ending them normally.")
    parser.add_argument("--all", action="store_true", help="remove every session")
    parser.add_argument("--session", "--session-id", "--session-identifier", dest="session")
    parser.add_argument("--provider")
    parser.add_argument("--provider-name", "--mcp-provider-name", dest="provider_name")
    parser.set_defaults(handler=_remove_session)
    parser = subparsers.add_parser("cleanup-orphans", help="Remove sessions whose watched process is gone.")
    parser.set_defaults(handler=_cleanup_orphans)

