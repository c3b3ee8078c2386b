"""Hook Integration commands: hook-install / hook-remove (hook-uninstall) / hook-status and the
claude-hooks / codex-hooks / copilot-hooks snippet printers (REFERENCE 1.2, 5)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..agents import AGENTS, all_agents
from ..l10n import _
from .context import CliContext
from .output import CliError, block_json, escape_control, print_json

__all__ = ["INSTALL_COMMANDS", "add_install_commands"]

INSTALL_COMMANDS = ("hook-status", "hook-install", "hook-remove", "claude-hooks", "codex-hooks", "copilot-hooks")
_PROVIDER_WORDS = f"{', '.join(AGENTS)}, all"
# The agents are listed in the help text, not the usage line: with the next wave the usage line of every
# hook command outgrew 100 columns (tests/cli/test_help_width.py).
PROVIDER_METAVAR = "AGENT"
# installers.snippets.FORMATS, kept here so building the parser does not import tomlkit (a test keeps them equal)
SNIPPET_FORMATS = {"claude": ("settings-json", "json", "hooks-json"),
                   "codex": ("config-toml", "toml", "hooks-json", "json"),
                   "copilot": ("config-json", "json", "hooks-json")}


def _print_lines(lines: list[str]) -> None:
    print("\n".join(escape_control(line) for line in lines), flush=True)


def _ask_provider(action: str) -> str:
    sys.stdout.write(_("Provider to {action} LidGuard hooks for ({providers}; default: all): ").format(
        action=action, providers=_PROVIDER_WORDS))
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        print()
        raise CliError(_("No provider was given (input ended); use --provider {providers}.").format(
            providers=f"{'|'.join(AGENTS)}|all"))
    return line.strip() or "all"


def _unknown(word: str) -> CliError:
    from ..installers import PROVIDERS, did_you_mean

    return CliError(_("Unknown provider: {word}{hint}. Use {providers} (a comma list is fine).").format(
        word=escape_control(word.strip()[:64]), hint=did_you_mean(word, [*PROVIDERS, "all"]),
        providers=_PROVIDER_WORDS))


def _providers(value: list[str] | str | None, config: Path | None, action: str,
               skipped_out: list[str] | None = None) -> list[str]:
    from ..installers import PROVIDERS, available_providers, parse_provider_words

    if value is None:
        for attempt in range(3):  # a typo at the prompt asks again instead of ending the command
            keys, unknown = parse_provider_words(_ask_provider(action))
            if unknown is None and keys:
                break
            if attempt == 2:
                raise _unknown(unknown or "")
            print(escape_control(str(_unknown(unknown or ""))))
    else:
        keys, unknown = parse_provider_words(",".join([value] if isinstance(value, str) else value))
        if unknown is not None or not keys:
            raise _unknown(unknown or "")
    if keys != ["all"]:
        if config is not None and len(keys) > 1:
            raise CliError(_("The --config option needs one provider."))
        return keys
    if config is not None:
        raise CliError(_("The --config option needs one provider; it cannot be used with --provider all."))
    present, skipped = available_providers()
    if skipped_out is not None:
        skipped_out += skipped
    else:
        _print_lines(skipped)
    if not present:
        raise CliError(_("No available providers were found for all-provider execution."))
    return [name for name in PROVIDERS if name in present]


def _config(value: str | None) -> Path | None:
    if value is None:
        return None
    if not value.strip():
        raise CliError(_("The --config option needs a file path."))
    return Path(os.path.expanduser(value)).absolute()


def _hook_action(action: str) -> Any:
    verb = {"install": "install", "remove": "remove", "status": "show"}[action]

    def run(context: CliContext, args: argparse.Namespace) -> int:
        from ..installers import PROVIDERS, InstallError, status_block
        from ..installers.common import stop_hook_timeout_seconds
        from ..installers.leftovers import remove_leftovers
        from ..installers.locks import config_files
        from ..platform.locking import ConfigLockError, config_lock

        config = _config(args.config)
        if getattr(args, "json", False):
            return _status_json(context, args, config)
        failed = []
        for index, key in enumerate(_providers(args.provider, config, verb)):
            if index:
                print()
            provider = PROVIDERS[key]
            try:
                if action == "status":
                    _print_lines(status_block(key, config, context.paths.settings_file, context.paths.data_dir))
                elif action == "install":
                    timeout = stop_hook_timeout_seconds(context.paths.settings_file)
                    with config_lock(*config_files(key, config)):
                        _print_lines(provider.install(config, timeout).lines())
                else:
                    files = config_files(key, config)
                    with config_lock(*files):
                        result = provider.remove(config)
                        _print_lines(result.lines())
                        _print_lines(remove_leftovers([*files, result.config]))  # the sidecars too, still held
            except (InstallError, ConfigLockError) as error:
                _print_lines([f"Provider: {provider.display}", "Changed: False", f"Message: {error}"])
                failed.append(provider.display)
        if failed:
            raise CliError(_("hook-{action} failed for {agents} (see above).").format(
                action=action, agents=", ".join(failed)))
        return 0

    return run


def _status_json(context: CliContext, args: argparse.Namespace, config: Path | None) -> int:
    from ..installers import PROVIDERS, InstallError, status_block

    skipped: list[str] = []
    result: dict[str, Any] = {"providers": [], "skipped": skipped}
    for key in _providers(args.provider if args.provider is not None else "all", config, "show", skipped):
        try:
            block = block_json(status_block(key, config, context.paths.settings_file, context.paths.data_dir))
        except InstallError as error:
            block = {"provider": PROVIDERS[key].display, "status": "Unknown", "message": str(error)}
        block.setdefault("commandCheck", [])
        result["providers"].append(block)
    print_json(result)
    return 0


def _snippet(provider: str) -> Any:
    def run(context: CliContext, args: argparse.Namespace) -> int:
        from ..installers.common import stop_hook_timeout_seconds
        from ..installers.snippets import FORMATS, render

        fmt = (args.format or next(iter(FORMATS[provider]))).strip().lower()
        if fmt not in FORMATS[provider]:
            raise CliError(_("The format option must be {formats}.").format(formats=", ".join(FORMATS[provider])))
        sys.stdout.write(render(provider, fmt, stop_hook_timeout_seconds(context.paths.settings_file)))
        return 0

    return run


def add_install_commands(subparsers: Any) -> None:
    texts = {
        "status": "Show whether the LidGuard hooks are installed for an agent CLI.",
        "install": "Install (or update) the LidGuard hooks for an agent CLI: the one step that protects it.",
        "remove": "Remove the LidGuard hooks from an agent CLI (other hooks stay).",
    }
    configs = "; ".join(f"{agent.DISPLAY}: {agent.CONFIG_TEXT}" for agent in all_agents())
    for action, text in texts.items():
        aliases = ["hook-uninstall"] if action == "remove" else []
        sub = subparsers.add_parser(
            f"hook-{action}", aliases=aliases, help=text,
            description=_("{text} {configs}. A changed file is backed up first as <file>.lidguard.bak (one per "
                          "file); its mode is kept.").format(text=text, configs=configs))
        sub.add_argument("--provider", metavar=PROVIDER_METAVAR, action="append",
                         help=_("agent CLIs, a comma list or repeated (asked when omitted; all = every agent whose "
                              "configuration folder exists)") + f" [{', '.join((*AGENTS, 'all'))}]")
        sub.add_argument("--config", metavar="FILE",
                         help=_("use this file instead of the agent's default one (one provider only)"))
        if action == "status":
            sub.add_argument("--json", action="store_true", help=_("machine-readable output (default provider: all)"))
        sub.set_defaults(handler=_hook_action(action), skip_recovery=True)
    for provider, name in (("claude", "Claude Code"), ("codex", "Codex"), ("copilot", "GitHub Copilot CLI")):
        formats = SNIPPET_FORMATS[provider]
        text = f"Print the LidGuard hooks for {name} as a snippet to add by hand."
        sub = subparsers.add_parser(f"{provider}-hooks", help=text, description=text)
        sub.add_argument("--format", metavar="|".join(formats), help=_("snippet format (default: {format})").format(
            format=formats[0]))
        sub.set_defaults(handler=_snippet(provider), skip_recovery=True)
