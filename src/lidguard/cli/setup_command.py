"""`lidguard setup`: the first run in one command. Finds the agent CLIs on this machine (on PATH or a
configuration folder), installs their hooks, offers the OS permission power control needs, runs doctor
and ends with its one-line verdict. ``--yes`` answers every question yes; ``--provider`` picks agents."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

from ..agents import AGENTS
from ..l10n import _
from .context import CliContext
from .output import CliError, ask_yes_no, escape_control

__all__ = ["add_setup_command"]



def _ask(question: str, assume_yes: bool) -> bool:
    return ask_yes_no(question, assume_yes=assume_yes, default=True, command="setup")


def _found_agents(only: list[str] | None) -> list[tuple[str, str]]:
    """(provider key, where it was found) for each agent CLI on PATH or with a configuration folder."""
    from ..installers import PROVIDERS

    found = []
    for key, provider in PROVIDERS.items():
        if only is not None and key not in only:
            continue
        executable = shutil.which(key)  # every agent's key is its executable's name
        roots = [root for root in provider.roots() if root.exists()]
        if executable:
            found.append((key, executable))
        elif roots:
            found.append((key, str(roots[0])))
        elif only is not None:
            found.append((key, "asked for with --provider"))
    return found


def _providers(words: list[str] | None) -> list[str] | None:
    from ..installers import PROVIDERS, did_you_mean, parse_provider_words

    if words is None:
        return None
    keys, unknown = parse_provider_words(",".join(words))
    if unknown is not None or not keys:
        raise CliError(_("Unknown provider: {word}{hint}. Use {providers}, or all (a comma list is fine).").format(
            word=escape_control((unknown or "").strip()[:64]), hint=did_you_mean(unknown or "", [*PROVIDERS, "all"]),
            providers=", ".join(PROVIDERS)))
    return list(PROVIDERS) if keys == ["all"] else keys


def _install_hooks(context: CliContext, agents: list[tuple[str, str]], assume_yes: bool) -> list[str]:
    from ..installers import PROVIDERS, InstallError
    from ..installers.common import stop_hook_timeout_seconds

    failed = []
    timeout = stop_hook_timeout_seconds(context.paths.settings_file)
    for key, where in agents:
        provider = PROVIDERS[key]
        if not _ask(f"Install the LidGuard hooks for {provider.display} ({where})?", assume_yes):
            print(_("  skipped {display}").format(display=provider.display))
            continue
        try:
            result = provider.install(None, timeout)
        except InstallError as error:
            print(escape_control(f"  {provider.display}: failed: {error}"))
            failed.append(provider.display)
            continue
        print(escape_control(f"  {provider.display}: {result.message} ({result.config})"))
    return failed


def _offer_permission(context: CliContext, assume_yes: bool) -> None:
    from ..platform.api import PERMISSION_NEEDS_ROOT, Unsupported

    try:
        text = context.platform.permission.describe()
    except Unsupported:
        return
    if "not installed" not in text and PERMISSION_NEEDS_ROOT not in text:  # the install (sudo) finds out
        return
    command = f"{context.platform.name}-permission"
    print(escape_control(f"Power permission: {text}"))
    moot = getattr(context.platform.permission, "moot_reason", None)
    reason = moot() if moot is not None else None
    if reason is not None:
        print(escape_control(f"  skipped: {reason}; the rule would change nothing. "
                             f"Run `lidguard {command} install` once it answers."))
        return
    import os

    password = ", asks for your password" if getattr(os, "geteuid", lambda: 1)() != 0 else ""
    if not _ask(f"Install it now (`lidguard {command} install`{password})?", assume_yes):
        print(_("  skipped; run `lidguard {command} install` later").format(command=command))
        return
    code = context.platform.permission.run("install", out=sys.stdout, err=sys.stderr)
    if code != 0:
        print(_("  the permission was not installed (exit {code}); run `lidguard {command} install` later").format(
            code=code, command=command))


def _setup(context: CliContext, args: argparse.Namespace) -> int:
    from .doctor import collect_doctor_report, doctor_exit_code, format_doctor_report

    agents = _found_agents(_providers(args.provider))
    if agents:
        print(_("Agent CLIs found: {agents}").format(agents=", ".join(f"{key} ({where})" for key, where in agents)))
    else:
        from ..installers import PROVIDERS

        print(_("No agent CLI found ({value} on PATH or their configuration folders).").format(
            value=', '.join(PROVIDERS)))
    failed = _install_hooks(context, agents, args.yes)
    _offer_permission(context, args.yes)
    print()
    report = collect_doctor_report(context)
    print("\n".join(escape_control(line) for line in format_doctor_report(report)))
    if failed:
        raise CliError(_("Setup could not install the hooks for {value} (see above).").format(value=', '.join(failed)))
    return doctor_exit_code(report)


def add_setup_command(subparsers: Any) -> None:
    text = "First run: install the hooks of every agent CLI found, offer the power permission, run doctor."
    sub = subparsers.add_parser("setup", help=text, description=text)
    sub.add_argument("--yes", "-y", action="store_true", help=_("answer yes to every question (non-interactive)"))
    sub.add_argument("--provider", metavar="AGENT", action="append",
                     help=_("only these agents, a comma list or repeated (default: every agent CLI found)")
                     + f" [{', '.join((*AGENTS, 'all'))}]")
    sub.set_defaults(handler=_setup, skip_recovery=True)
