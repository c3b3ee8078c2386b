"""``lidguard service install|remove|status``: hand the runtime's supervision to the OS service manager
(``platform/service.py`` has the definitions). The files are written atomically (0600); the manager's
commands run only on the OS they are for and never in test mode (they are printed instead)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ..l10n import _
from .output import CliError, escape_control

__all__ = ["add_service_command"]

SUBCOMMANDS = ("install", "remove", "status")
COMMAND_TIMEOUT_SECONDS = 60


def add_service_command(subparsers: Any) -> None:
    from ..platform.service import SERVICE_OS_NAMES

    parser = subparsers.add_parser(
        "service", help=_("Let the OS service manager supervise the runtime: service install|remove|status."),
        description=_("Install, remove or show a systemd user unit with socket activation (Linux), a launchd "
                    "agent (macOS) or a scheduled task (Windows) that restarts the runtime when it fails."))
    commands = parser.add_subparsers(dest="subcommand", metavar="|".join(SUBCOMMANDS), title="subcommands",
                                     required=True)
    helps = {"install": "write the definitions and enable them", "remove": "disable and delete the definitions",
             "status": "show whether the definitions are installed and current"}
    for name in SUBCOMMANDS:
        sub = commands.add_parser(name, help=helps[name], description=helps[name].capitalize() + ".")
        sub.add_argument("--os", choices=SERVICE_OS_NAMES, default=None,
                         help=_("the definitions of another OS (written and shown, never enabled here)"))
        if name == "install":
            sub.add_argument("--no-enable", action="store_true", help=_("write the files only; print the commands"))
        if name == "status":
            sub.add_argument("--json", action="store_true", help=_("machine-readable output"))
    parser.set_defaults(handler=_service, skip_recovery=True)


def _plan(context: Any, os_name: str) -> Any:
    from ..installers.common import env_dir, home, hook_argv
    from ..platform.host import current_user_id
    from ..platform.service import service_plan

    environment = {name: value for name in ("XDG_DATA_HOME", "PYTHONPATH")
                   if (value := os.environ.get(name, "").strip()) and os.path.isabs(value.split(os.pathsep)[0])}
    try:
        return service_plan(os_name, argv=hook_argv(), data_dir=context.paths.data_dir,
                            socket_path=context.paths.socket_file, home=home(),
                            config_home=env_dir("XDG_CONFIG_HOME", home() / ".config"),
                            environment=environment, user_id=current_user_id())
    except ValueError as error:
        raise CliError(str(error)) from error


def _run(argv: list[str], *, here: bool) -> None:
    from ..switches import in_test_mode

    shown = escape_control(subprocess.list2cmdline(argv))
    if not here or in_test_mode():
        reason = "test mode" if here else "not this OS"
        print(_("  not run ({reason}): {shown}").format(reason=reason, shown=shown))
        return
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CliError(_("Could not run {shown}: {error}").format(shown=shown, error=error)) from error
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise CliError(_("{shown} failed (exit {code})").format(shown=shown, code=result.returncode)
                       + (f": {escape_control(detail[0])}" if detail else "."))
    print(_("  ran: {shown}").format(shown=shown))


def _file_state(path: Path, wanted: bytes) -> str:
    from ..fileio import read_regular_file

    if not os.path.lexists(path):
        return "not installed"
    try:
        current = read_regular_file(path, limit=1024 * 1024, follow_symlinks=False)
    except Exception as error:  # noqa: BLE001 - a FIFO, folder or unreadable file is reported, never followed
        return f"unusable ({error})"
    return "installed" if current == wanted else "installed, differs from what install writes now"


def _service(context: Any, args: argparse.Namespace) -> int:
    from ..platform.host import host_os_name

    os_name = args.os or host_os_name()
    here = os_name == host_os_name()
    plan = _plan(context, os_name)
    from ..platform.host import current_user_id
    from ..platform.service import manager_problem

    problem = manager_problem(os_name, current_user_id()) if here else None
    if args.subcommand == "status":
        files = [{"path": str(path), "state": _file_state(path, data)} for path, data in plan.files.items()]
        if args.json:
            print(json.dumps({"manager": plan.manager, "files": files, "check": plan.check,
                              "managerProblem": problem}, indent=2))
            return 0
        print(f"{plan.manager}:")
        for entry in files:
            print(f"  {escape_control(entry['path'])}: {entry['state']}")
        if problem is not None:
            print(escape_control(f"Not running them: {problem}."))
        print(_("The service manager's view: {value}").format(
            value=escape_control(subprocess.list2cmdline(plan.check))))
        return 0
    if args.subcommand == "install":
        if problem is not None and not args.no_enable:
            raise CliError(_("Not installed: {problem}, so the units would never start. `lidguard service install "
                             "--no-enable` writes them anyway.").format(problem=problem))
        return _install(plan, here=here, enable=not args.no_enable)
    return _remove(plan, here=here)


def _install(plan: Any, *, here: bool, enable: bool) -> int:
    from ..fileio import write_atomic

    for path, data in plan.files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(path, data)
        except OSError as error:
            raise CliError(_("Could not write {path}: {value}.").format(
                path=path, value=error.strerror or error)) from error
        print(_("Wrote {value}").format(value=escape_control(str(path))))
    print(_("Installed the {manager}; the service manager restarts the runtime when it fails.").format(
        manager=plan.manager))
    for argv in plan.enable:
        if enable:
            _run(argv, here=here)
        else:
            print(_("  to enable: {value}").format(value=escape_control(subprocess.list2cmdline(argv))))
    return 0


def _remove(plan: Any, *, here: bool) -> int:
    present = [path for path in plan.files if os.path.lexists(path)]
    if not present:
        print(_("The {manager} is not installed; nothing to remove.").format(manager=plan.manager))
        return 0
    for argv in plan.disable:
        try:
            _run(argv, here=here)
        except CliError as error:  # not loaded is fine: the files go anyway
            print(f"  {error}")
    for path in present:
        try:
            path.unlink()
        except OSError as error:
            raise CliError(_("Could not delete {path}: {value}.").format(
                path=path, value=error.strerror or error)) from error
        print(_("Deleted {value}").format(value=escape_control(str(path))))
    for argv in plan.after_remove:
        _run(argv, here=here)
    print(_("Removed the {manager}.").format(manager=plan.manager))
    return 0
