"""``lidguard tray`` (the indicator; extra ``lidguard[tray]``) and its autostart entry."""

from __future__ import annotations

import argparse
from typing import Any

from ..l10n import _
from .context import CliContext
from .output import CliError, escape_control

__all__ = ["add_tray_command"]


def _autostart(install: bool, os_name: str | None) -> int:
    from ..installers.common import env_dir, home, hook_argv
    from ..platform.autostart import AutostartError, autostart_file, install_autostart, remove_autostart
    from ..platform.host import host_os_name

    user_home = home()
    try:
        entry = autostart_file(os_name or host_os_name(), argv=hook_argv(), home=user_home,
                               config_home=env_dir("XDG_CONFIG_HOME", user_home / ".config"),
                               appdata=env_dir("APPDATA", user_home / "AppData" / "Roaming"))
        if install:
            install_autostart(entry, user_home)
            print(escape_control(f"Installed the {entry.description}: {entry.path}"))
        elif remove_autostart(entry, user_home):
            print(escape_control(f"Removed the {entry.description}: {entry.path}"))
        else:
            print(escape_control(f"No {entry.description} to remove at {entry.path}."))
    except AutostartError as error:
        raise CliError(str(error)) from error
    return 0


def _tray(context: CliContext, args: argparse.Namespace) -> int:
    if args.install_autostart or args.remove_autostart:
        if args.install_autostart and args.remove_autostart:
            raise CliError(_("Use one of --install-autostart and --remove-autostart."))
        return _autostart(bool(args.install_autostart), args.os)
    if args.os is not None:
        raise CliError(_("--os goes with --install-autostart or --remove-autostart."))
    from ..shared.extras import ExtraMissing, require

    try:
        require("tray", "lidguard tray")
    except ExtraMissing as error:
        raise CliError(str(error)) from error
    from ..platform.desktop import display_problem
    from ..platform.host import host_os_name

    problem = display_problem(host_os_name())
    if problem is not None:
        raise CliError(_("Cannot show the tray: {problem}.").format(problem=problem))
    from ..tray.app import TrayApp, TrayExtraMissing, TrayUnavailable

    try:
        app = TrayApp(context.paths, host_os_name(), panel=args.panel)
    except TrayExtraMissing as error:
        raise CliError(str(error)) from error
    except TrayUnavailable as error:
        raise CliError(_("Cannot show the tray: {error}.").format(error=error)) from error
    except Exception as error:  # the backend could not create its icon (no tray host, display gone)
        raise CliError(_("Cannot show the tray: {__name__}: {error}.").format(
            __name__=type(error).__name__, error=error)) from error
    try:
        return app.run()
    except TrayUnavailable as error:
        raise CliError(_("Tray stopped: {error}.").format(error=error)) from error


DESCRIPTION = ("Shows the runtime's state in the system tray (menu bar) with a menu to pause, resume, sleep and "
               "toggle settings. Needs the tray extra (lidguard[tray]){installed}.")


def _description() -> str:
    """The help's last sentence: installed, or the install command for this installation (pipx, a venv's
    pip, pip). Worked out only when the help is shown: it reads the package metadata."""
    from ..shared.extras import install_command, missing_modules

    if not missing_modules("tray"):
        return DESCRIPTION.format(installed=", installed here")
    return DESCRIPTION.format(installed=f": {install_command('tray')}")


def add_tray_command(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tray", help=_("Show a tray / menu-bar indicator (needs the tray extra, lidguard[tray])."),
        description=DESCRIPTION.format(installed=""))
    plain_help = parser.format_help

    def format_help() -> str:  # `tray --help` and `lidguard help tray`
        parser.description = _description()
        return plain_help()

    setattr(parser, "format_help", format_help)  # noqa: B010 - this one parser's help only
    parser.add_argument("--panel", choices=("dark", "light"), default="dark",
                        help=_("draw the icon for a dark (default) or light panel"))
    parser.add_argument("--install-autostart", action="store_true",
                        help=_("start the tray at login (XDG autostart, launchd agent or the Startup folder)"))
    parser.add_argument("--remove-autostart", action="store_true", help=_("stop starting the tray at login"))
    parser.add_argument("--os", choices=("linux", "macos", "windows"),
                        help=_("with --install/--remove-autostart: the entry of this OS (default: this one)"))
    parser.set_defaults(handler=_tray)
