"""`lidguard uninstall`: the last day. Removes everything lidguard put outside its own install - the
hooks of every agent (and the backups and lock sidecars that would bring them back or litter the agent's
folder), the MCP entries, the tray autostart entry, the service definitions and the OS permission rule -
and stops the runtime first, so no inhibitor or lid policy is left behind. Each removed thing is printed;
the data and config folders stay unless ``--purge``. Run it before ``pipx uninstall lidguard``: after
that, the hooks would point at a deleted program."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from ..l10n import _
from .context import CliContext
from .output import CliError, ask_yes_no, escape_control

__all__ = ["add_uninstall_command"]

class _Report:
    def __init__(self) -> None:
        self.removed = 0
        self.failed: list[str] = []

    def did(self, text: str) -> None:
        self.removed += 1
        print(escape_control(f"Removed: {text}"))

    def fail(self, what: str, error: object) -> None:
        self.failed.append(what)
        print(escape_control(f"Could not remove {what}: {error}"))


def _ask(question: str, assume_yes: bool) -> bool:
    return ask_yes_no(question, assume_yes=assume_yes, default=False, command="uninstall")


def _stop_runtime(context: CliContext, report: _Report) -> None:
    response = context.request("shutdown", Force=True)
    if response.get("RuntimeUnavailable"):
        return
    if not response.get("Succeeded"):
        from ..platform.locking import stop_lock_holder

        if not stop_lock_holder(context.paths.lock_file):
            raise CliError(_("The runtime did not stop: {reason}; run `lidguard stop-runtime --force`, then "
                             "`lidguard uninstall` again.").format(reason=str(response.get("Message") or "no answer")))
    report.did("the running runtime (stopped; its keep-awake and lid policy released)")


def _is_mcp_leftover(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() and not path.is_symlink() else ""
    except OSError:
        return False
    return "lidguard" in text and "mcp-server" in text


def _tidy(files: list[Path], report: _Report) -> None:
    from ..installers.leftovers import remove_leftovers

    for line in remove_leftovers(files):
        if line.startswith("Removed: "):
            report.did(line[len("Removed: "):])
        else:
            report.failed.append(line)
            print(escape_control(line))


def _unlink(path: Path, what: str, report: _Report, *, quiet: bool = False) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as error:
        report.fail(f"{what} {path}", error.strerror or error)
        return
    if not quiet:
        report.did(f"{what} {path}")


def _remove_hooks(report: _Report) -> None:
    from ..installers import PROVIDERS, InstallError
    from ..installers.locks import config_files
    from ..platform.locking import ConfigLockError, config_lock

    for key, provider in PROVIDERS.items():
        roots = provider.roots()
        if not any(root.exists() for root in roots):
            continue
        files = config_files(key, None)
        try:
            with config_lock(*files):
                result = provider.remove(None)
                if result.changed:
                    report.did(f"the {provider.display} hooks ({result.config})")
                _tidy([*files, result.config], report)
        except (InstallError, ConfigLockError) as error:
            report.fail(f"the {provider.display} hooks", error)


def _remove_mcp(report: _Report) -> None:
    from ..mcp.install import PROVIDERS, McpInstallError, _is_managed, _read_entry, remove
    from ..platform.locking import ConfigLockError, config_lock

    for key, provider in PROVIDERS.items():
        entry, problem = _read_entry(key)
        if problem or entry is None or not _is_managed(entry):
            continue
        try:
            with config_lock(provider.config()):
                result = remove(key)
                if result.changed:
                    report.did(f"the {provider.display} MCP entry ({result.config})")
                if result.backup is not None and _is_mcp_leftover(result.backup):
                    _unlink(result.backup, "backup holding lidguard's MCP entry", report)
                _tidy([provider.config()], report)
        except (McpInstallError, ConfigLockError) as error:
            report.fail(f"the {provider.display} MCP entry", error)


def _remove_autostart(report: _Report) -> None:
    from ..installers.common import env_dir, home, hook_argv
    from ..platform.autostart import AutostartError, autostart_file, remove_autostart
    from ..platform.host import host_os_name

    user_home = home()
    try:
        entry = autostart_file(host_os_name(), argv=hook_argv(), home=user_home,
                               config_home=env_dir("XDG_CONFIG_HOME", user_home / ".config"),
                               appdata=env_dir("APPDATA", user_home / "AppData" / "Roaming"))
        if remove_autostart(entry, user_home):
            report.did(f"the {entry.description} ({entry.path})")
    except (AutostartError, ValueError) as error:
        report.fail("the tray autostart entry", error)


def _remove_service(context: CliContext, report: _Report) -> None:
    from ..platform.host import host_os_name
    from .service_command import _plan, _remove

    plan = _plan(context, host_os_name())
    if not any(os.path.lexists(path) for path in plan.files):
        return
    try:
        _remove(plan, here=True)
    except CliError as error:
        report.fail(f"the {plan.manager}", error)
        return
    report.did(f"the {plan.manager}")


def _remove_permission(context: CliContext, assume_yes: bool, report: _Report) -> None:
    from ..platform.api import PERMISSION_NEEDS_ROOT, Unsupported

    try:
        text = context.platform.permission.describe()
    except Unsupported:
        return
    if ": installed for" not in text and PERMISSION_NEEDS_ROOT not in text:  # the remove (sudo) finds out
        return
    command = f"lidguard {context.platform.name}-permission remove"
    password = "" if os.geteuid() == 0 else " (sudo asks for your password for this step only)"
    print(escape_control(f"Power permission: {text}"))
    if not _ask(f"Remove it now ({command}){password}?", assume_yes):
        print(_("  kept; run `{command}` later").format(command=command))
        return
    if context.platform.permission.run("remove", out=sys.stdout, err=sys.stderr) != 0:
        report.fail("the power permission rule", f"run `{command}`")
        return
    report.did("the power permission rule")


def _purge(context: CliContext, report: _Report) -> None:
    from ..platform.paths import user_config_dir

    for folder, what in ((context.paths.data_dir, "data folder"), (user_config_dir(), "config folder")):
        if folder.is_symlink():
            _unlink(folder, what, report)
        elif folder.is_dir():
            try:
                shutil.rmtree(folder)
            except OSError as error:
                report.fail(f"the {what} {folder}", error.strerror or error)
                continue
            report.did(f"the {what} {folder}")


def _uninstall(context: CliContext, args: argparse.Namespace) -> int:
    report = _Report()
    if not _ask("Remove lidguard's hooks, MCP entries, autostart, service and permission rule"
                + (", and its data and config folders" if args.purge else "") + "?", args.yes):
        print(_("Nothing was removed."))
        return 1
    _stop_runtime(context, report)
    _remove_hooks(report)
    _remove_mcp(report)
    _remove_autostart(report)
    _remove_service(context, report)
    _remove_permission(context, args.yes, report)
    if args.purge:
        _purge(context, report)
    if report.failed:
        raise CliError(_("Uninstall could not remove: {value} (see above).").format(value=', '.join(report.failed)))
    if report.removed == 0:
        print(_("Nothing to remove: no agent, MCP entry, autostart entry, service or permission rule names lidguard."))
    elif not args.purge:
        print(escape_control(f"Kept the data folder {context.paths.data_dir} (settings, logs); "
                             "`lidguard uninstall --purge` removes it and notify's config folder."))
    from ..shared.extras import remove_command

    print(escape_control(f"Now remove the program: {remove_command()}"))
    return 0


def add_uninstall_command(subparsers: Any) -> None:
    text = _("Remove everything lidguard put outside its install: agent hooks, MCP entries, autostart, service, "
             "permission rule.")
    sub = subparsers.add_parser("uninstall", help=text, description=_(
        "{text} Run it before `pipx uninstall lidguard`. The data and config folders stay unless --purge.").format(
            text=text))
    sub.add_argument("--yes", "-y", action="store_true", help=_("no questions: remove everything"))
    sub.add_argument("--purge", action="store_true",
                     help=_("also delete the data folder (settings, logs) and notify's config (token, keys)"))
    sub.set_defaults(handler=_uninstall, skip_recovery=False)
