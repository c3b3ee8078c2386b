"""MCP Integration commands: the two stdio servers and the installers (REFERENCE 1.2, 12).

``mcp-server`` / ``provider-mcp-server`` need the optional ``mcp`` SDK (``lidguard[mcp]``) and import it
only when they run; the installers never need it.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..l10n import _
from .context import CliContext
from .output import CliError, block_json, escape_control, print_json

__all__ = ["MCP_COMMANDS", "add_mcp_commands"]

MCP_COMMANDS = ("mcp-server", "provider-mcp-server", "mcp-status", "mcp-install", "mcp-remove",
                "provider-mcp-status", "provider-mcp-install", "provider-mcp-remove")
_PROVIDERS = ("claude", "codex", "copilot", "all")


def _require_sdk() -> None:
    from ..mcp import McpSdkMissing, require_sdk

    try:
        require_sdk()
    except McpSdkMissing as error:
        raise CliError(str(error)) from error


def _provider_name(value: str | None) -> str:
    from ..ipc.limits import MAX_PROVIDER_NAME_CHARS
    from ..mcp.tools import ToolFailure, checked_text

    if value is None or not value.strip():
        raise CliError(_("The provider-mcp-server command requires --provider-name <name>."))
    try:
        return checked_text(value, "provider name", MAX_PROVIDER_NAME_CHARS, required=True)
    except ToolFailure as error:
        raise CliError(str(error)) from error


def _english_for_agents() -> None:
    """An MCP server answers a model, whose parsers read English (issue 38.2: what agents read stays English)."""
    from .. import l10n

    l10n.set_culture("en")


def _mcp_server(context: CliContext, args: argparse.Namespace) -> int:
    _require_sdk()
    _english_for_agents()
    from ..mcp.servers import build_server, run_stdio
    from ..mcp.tools import ToolContext

    return run_stdio(build_server(ToolContext(context.paths)))


def _provider_mcp_server(context: CliContext, args: argparse.Namespace) -> int:
    name = _provider_name(args.provider_name)
    _require_sdk()
    _english_for_agents()
    from ..mcp.servers import build_provider_server, run_stdio
    from ..mcp.tools import ToolContext

    return run_stdio(build_provider_server(ToolContext(context.paths), name))


def _print_lines(lines: list[str]) -> None:
    print("\n".join(escape_control(line) for line in lines))


def _providers(value: str | None, skipped_out: list[str] | None = None) -> list[str]:
    from ..mcp.install import PROVIDERS, available_providers

    word = (value or "all").strip().lower()
    if word in ("github-copilot", "githubcopilot"):
        word = "copilot"
    if word not in _PROVIDERS:
        raise CliError(_("Unknown provider: {value}. Use claude, codex, copilot, or all.").format(
            value=escape_control(word[:64])))
    if word != "all":
        return [word]
    present, skipped = available_providers()
    for provider, reason in skipped:
        line = f"Skipping absent provider: {PROVIDERS[provider].display} ({reason})"
        if skipped_out is not None:
            skipped_out.append(line)
        else:
            print(line)
    if not present:
        raise CliError(_("No available providers were found for all-provider execution."))
    return present


def _mcp_install(action: str):
    def run(context: CliContext, args: argparse.Namespace) -> int:
        from ..mcp.install import PROVIDERS, McpInstallError, install, remove, status_lines
        from ..platform.locking import ConfigLockError, config_lock

        if action == "status" and getattr(args, "json", False):
            skipped: list[str] = []
            blocks = [block_json(status_lines(provider)) for provider in _providers(args.provider, skipped)]
            print_json({"providers": blocks, "skipped": skipped})
            return 0
        failed = False
        for provider in _providers(args.provider):
            if action == "status":
                _print_lines(status_lines(provider))
                continue
            try:
                with config_lock(PROVIDERS[provider].config()):
                    result = (install if action == "install" else remove)(provider)
            except (McpInstallError, ConfigLockError) as error:
                _print_lines([f"Provider: {provider}", "Changed: False", f"Message: {error}"])
                failed = True
                continue
            _print_lines(result.lines())
        if failed:
            raise CliError(_("mcp-{action} failed for at least one provider (see above).").format(action=action))
        return 0

    return run


def _provider_mcp(action: str):
    def run(context: CliContext, args: argparse.Namespace) -> int:
        import os
        from pathlib import Path

        from ..mcp.config_file import ConfigFileError, install_provider_server, provider_status, remove_provider_server
        from ..platform.locking import ConfigLockError, config_lock

        locked = [Path(os.path.expanduser(args.config))] if action != "status" and (args.config or "").strip() else []
        try:
            with config_lock(*locked):
                if action == "install":
                    lines = install_provider_server(args.config, _provider_name_for_install(args.provider_name),
                                                    args.server_name)
                elif action == "remove":
                    lines = remove_provider_server(args.config, args.server_name)
                else:
                    lines = provider_status(args.config, args.server_name)
        except (ConfigFileError, ConfigLockError) as error:
            raise CliError(str(error)) from error
        _print_lines(lines)
        return 0

    return run


def _provider_name_for_install(value: str | None) -> str:
    if value is None or not value.strip():
        raise CliError(_("The provider-mcp-install command requires --provider-name <name>."))
    return _provider_name(value)


def add_mcp_commands(subparsers: Any) -> None:
    sub = subparsers.add_parser("mcp-server", help=_("Run the LidGuard MCP server on stdio (settings and sessions)."),
                                description=_("stdio MCP server `lidguard` (needs the mcp extra, lidguard[mcp]); "
                                            "logs go to stderr."))
    sub.set_defaults(handler=_mcp_server)
    sub = subparsers.add_parser(
        "provider-mcp-server", help=_("Run the provider MCP server on stdio for an MCP-only agent."),
        description=_("stdio MCP server `lidguard-provider` for agents without hooks: the model reports its own "
                    "session start, waits and end through the provider_* tools. Best effort, not guaranteed: "
                    "protection starts, pauses and ends only when the model calls those tools; a session the "
                    "model forgets to stop is soft-locked by the inactive-session timeout (unless it is off)."))
    sub.add_argument("--provider-name", "--mcp-provider-name", dest="provider_name", metavar="NAME",
                     help=_("name the sessions carry (shown as Mcp:NAME)"))
    sub.set_defaults(handler=_provider_mcp_server)
    for action, text in (("status", "Show whether the LidGuard MCP server is registered with an agent CLI."),
                         ("install", "Register the LidGuard MCP server with an agent CLI (again = refresh)."),
                         ("remove", "Unregister the LidGuard MCP server from an agent CLI.")):
        aliases = ["mcp-uninstall"] if action == "remove" else []
        sub = subparsers.add_parser(f"mcp-{action}", aliases=aliases, help=text, description=text)
        sub.add_argument("--provider", metavar="claude|codex|copilot|all",
                         help=_("agent CLI (default: all present); claude and codex through their own `mcp "
                              "add/remove` when on PATH, else their config file; copilot: mcp-config.json"))
        if action == "status":
            sub.add_argument("--json", action="store_true", help=_("machine-readable output"))
        sub.set_defaults(handler=_mcp_install(action))
    for action, text in (("status", "Show the provider MCP server entry of a JSON MCP config file."),
                         ("install", "Add or refresh the provider MCP server in a JSON MCP config file."),
                         ("remove", "Remove the provider MCP server from a JSON MCP config file.")):
        aliases = ["provider-mcp-uninstall"] if action == "remove" else []
        sub = subparsers.add_parser(f"provider-mcp-{action}", aliases=aliases, help=text, description=text)
        sub.add_argument("--config", required=True, metavar="FILE", help=_("the JSON MCP config file"))
        sub.add_argument("--server-name", default="lidguard-provider", metavar="NAME",
                         help=_("server entry name (default: lidguard-provider)"))
        if action != "remove":
            sub.add_argument("--provider-name", "--mcp-provider-name", dest="provider_name", metavar="NAME",
                             help=_("name the sessions carry (shown as Mcp:NAME); required") if action == "install"
                             else _("name the sessions carry (shown as Mcp:NAME)"))
        else:
            sub.set_defaults(provider_name=None)
        sub.set_defaults(handler=_provider_mcp(action))
