"""``lidguard linux-permission status|check|install|remove``: the managed polkit rule (REFERENCE 1.4).

The stock logind polkit policy allows ``inhibit-block-sleep``/``inhibit-handle-lid-switch``/``suspend``
only to active local sessions, so a runtime started from SSH or a service is denied. The rule grants
exactly seven ``org.freedesktop.login1.*`` actions to one user (polkit(8), "AUTHORIZATION RULES"), plus
``suspend-ignore-inhibit``/``hibernate-ignore-inhibit`` while ``SuspendIgnoresOtherBlockers`` is on.
A file is ours only when it carries both managed markers; anything else is never overwritten or removed.
Root writes the file itself (atomic, mode 0644); other users go through one ``sudo sh -c`` script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import TextIO

from ...fileio import write_atomic
from ..api import PERMISSION_NEEDS_ROOT, Unsupported
from ._binding import (
    LOGIND_DESTINATION,
    LOGIND_MANAGER_INTERFACE,
    LOGIND_PATH,
    LogindConnection,
    LogindError,
    binding_status,
    refuse_real_system_bus_under_pytest,
)
from .power import acquire_inhibitor

__all__ = [
    "DEFAULT_RULE_PATH",
    "describe_permission",
    "LIDGUARD_POLKIT_ACTIONS",
    "MANAGED_MARKERS",
    "install_rule",
    "query_logind_capability",
    "remove_rule",
    "render_rule",
    "resolve_rule_path",
    "resolve_target_user",
    "run_linux_permission",
]

DEFAULT_RULE_PATH = Path("/etc/polkit-1/rules.d/49-lidguard.rules")
MANAGED_MARKERS = ("Managed by LidGuard Linux permission command.", "LidGuard Linux polkit rule v1.")
LIDGUARD_POLKIT_ACTIONS = (
    "org.freedesktop.login1.suspend",
    "org.freedesktop.login1.suspend-multiple-sessions",
    "org.freedesktop.login1.hibernate",
    "org.freedesktop.login1.hibernate-multiple-sessions",
    "org.freedesktop.login1.inhibit-block-sleep",
    "org.freedesktop.login1.inhibit-block-idle",
    "org.freedesktop.login1.inhibit-handle-lid-switch",
)
# Added while SuspendIgnoresOtherBlockers is on (issue 34.3): logind then lets this user's Suspend and
# Hibernate through another user's block inhibitor (logind's default for them is auth_admin_keep).
IGNORE_INHIBIT_ACTIONS = (
    "org.freedesktop.login1.suspend-ignore-inhibit",
    "org.freedesktop.login1.hibernate-ignore-inhibit",
)
SUBCOMMANDS = ("status", "check", "install", "remove")
SUDO_TIMEOUT_SECONDS = 120.0
QUERY_TIMEOUT_SECONDS = 5.0
CHECK_INHIBITOR_WHAT = ("sleep", "idle", "handle-lid-switch")  # one at a time: a combined one is checked as lid
CHECK_INHIBITOR_WHY = "LidGuard linux-permission check (acquired and released at once)."
# Exit codes of the sudo scripts: 17 = existing file is not managed by LidGuard, 2 = nothing to remove.
UNMANAGED_EXIT_CODE = 17
NOT_FOUND_EXIT_CODE = 2
# $1 temp file, $2 destination, $3 $4 the managed markers.
_SUDO_INSTALL_SCRIPT = """set -eu
if [ -e "$2" ] && ! { grep -qF -- "$3" "$2" && grep -qF -- "$4" "$2"; }; then exit 17; fi
mkdir -p -- "$(dirname -- "$2")"
install -m 0644 -- "$1" "$2"
"""
# $1 destination, $2 $3 the managed markers.
_SUDO_REMOVE_SCRIPT = """set -eu
if [ ! -e "$1" ]; then exit 2; fi
if ! { grep -qF -- "$2" "$1" && grep -qF -- "$3" "$1"; }; then exit 17; fi
rm -f -- "$1"
"""
_RULE_USER_PATTERN = re.compile(r'subject\.user == "((?:[^"\\]|\\.)*)"')
_QUOTED_PATTERN = re.compile(r'"((?:[^"\\]|\\.)*)"')


def resolve_rule_path() -> Path:
    """``LIDGUARD_POLKIT_RULE_PATH`` (tests point it at a temp dir) or the polkit rules.d default."""
    from ... import switches

    override = switches.polkit_rule_path()
    return Path(override) if override else DEFAULT_RULE_PATH


def _running_as_root() -> bool:
    return os.geteuid() == 0


def resolve_target_user() -> str:
    """``$SUDO_USER`` when root, else the current user's name, else ``whoami``, else "unknown"."""
    if _running_as_root() and os.environ.get("SUDO_USER", "").strip():
        return os.environ["SUDO_USER"].strip()
    import pwd  # Unix-only; imported here so the module imports on every OS

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        pass
    try:
        completed = subprocess.run(["whoami"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return completed.stdout.strip() if completed.returncode == 0 and completed.stdout.strip() else "unknown"


def _escape_js_string(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _unescape_js_string(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def render_rule(user: str, *, ignore_inhibit: bool = False) -> str:
    """The exact rule text: both markers as ``//`` lines at the top, then one polkit.addRule;
    ``ignore_inhibit`` (SuspendIgnoresOtherBlockers) adds ``IGNORE_INHIBIT_ACTIONS``."""
    granted = LIDGUARD_POLKIT_ACTIONS + (IGNORE_INHIBIT_ACTIONS if ignore_inhibit else ())
    actions = ",\n".join(f'        "{action}"' for action in granted)
    return (
        f"// {MANAGED_MARKERS[0]}\n"
        f"// {MANAGED_MARKERS[1]}\n"
        "polkit.addRule(function(action, subject) {\n"
        "    var lidGuardActions = [\n"
        f"{actions}\n"
        "    ];\n"
        f'    if (subject.user == "{_escape_js_string(user)}" && lidGuardActions.indexOf(action.id) >= 0) {{\n'
        "        return polkit.Result.YES;\n"
        "    }\n"
        "});\n"
    )


def _is_managed(content: str) -> bool:
    return all(marker in content for marker in MANAGED_MARKERS)


class NeedsRoot(OSError):
    """The rule's folder or file is closed to this user: Debian's /etc/polkit-1/rules.d is 0700 polkitd,
    so a normal user cannot even tell whether the rule is there; only root (or sudo) can."""


def _read_rule(path: Path, *, allow_sudo: bool = True) -> str | None:
    """The rule text, None when absent; unreadable -> ``sudo -n cat`` -> OSError with the reason
    (``NeedsRoot`` when only root could read it)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except PermissionError as error:
        if not allow_sudo:
            if _running_as_root():
                raise
            raise NeedsRoot(f"{path.parent} is closed to {resolve_target_user()}") from error
        try:
            completed = subprocess.run(
                ["sudo", "-n", "cat", "--", str(path)],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as sudo_error:
            raise OSError(f"{error.strerror}; sudo -n cat failed: {sudo_error}") from error
        if completed.returncode != 0:
            message = f"{error.strerror}; sudo -n cat: {completed.stderr.strip()}"
            raise (OSError if _running_as_root() else NeedsRoot)(message) from error
        return completed.stdout


def describe_rule_state(path: Path, user: str, *, allow_sudo: bool = True) -> str:
    try:
        content = _read_rule(path, allow_sudo=allow_sudo)
    except NeedsRoot as error:
        return f"{PERMISSION_NEEDS_ROOT} ({error}; `sudo lidguard linux-permission status` shows it)"
    except OSError as error:
        return f"unable to inspect ({error})"
    if content is None:
        return "not installed"
    if not _is_managed(content):
        return "present but not managed by LidGuard"
    match = _RULE_USER_PATTERN.search(content)
    if match is not None and _unescape_js_string(match.group(1)) == user:
        return "installed for current user"
    return "installed for another user"


def describe_permission() -> str:
    """One line for ``doctor``: the rule's state, read without sudo (doctor never asks for a password)."""
    path = resolve_rule_path()
    state = describe_rule_state(path, resolve_target_user(), allow_sudo=False)
    return f"polkit rule {path}: {state} (see `lidguard linux-permission status`)"


def query_logind_capability(method: str) -> str:
    """``CanSuspend``/``CanHibernate`` via the binding, else ``busctl call`` (busctl(1), 5 s timeout)."""
    if binding_status()[0]:
        with LogindConnection() as connection:
            return connection.can_suspend() if method == "CanSuspend" else connection.can_hibernate()
    refuse_real_system_bus_under_pytest(f"query {method} with busctl")
    busctl = shutil.which("busctl")
    if busctl is None:
        raise Unsupported("suspend", "busctl was not found and the logind binding is inactive")
    completed = subprocess.run(
        [busctl, "call", LOGIND_DESTINATION, LOGIND_PATH, LOGIND_MANAGER_INTERFACE, method],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=QUERY_TIMEOUT_SECONDS,
        check=False,
    )
    match = _QUOTED_PATTERN.search(completed.stdout)  # busctl prints: s "yes"
    if completed.returncode != 0 or match is None:
        detail = completed.stderr.strip() or completed.stdout.strip() or f"exit code {completed.returncode}"
        raise OSError(f"busctl call {method} failed: {detail}")
    return _unescape_js_string(match.group(1))


def _query_capability_text(method: str) -> tuple[str, bool]:
    """(answer, True) or (why it failed, False)."""
    try:
        return query_logind_capability(method), True
    except (LogindError, Unsupported, OSError, subprocess.TimeoutExpired) as error:
        return str(error), False


def _tool_line(name: str) -> str:
    path = shutil.which(name)
    return f"available ({path})" if path else "missing"


def show_status(out: TextIO) -> int:
    path, user = resolve_rule_path(), resolve_target_user()
    print("Linux permission status:", file=out)
    print(f"User: {user}", file=out)
    print(f"Polkit rule path: {path}", file=out)
    print(f"Polkit rule: {describe_rule_state(path, user)}", file=out)
    print(f"systemd-inhibit: {_tool_line('systemd-inhibit')}", file=out)
    print(f"systemctl: {_tool_line('systemctl')}", file=out)
    for method in ("CanSuspend", "CanHibernate"):
        text, succeeded = _query_capability_text(method)
        print(f"logind {method}: {text if succeeded else f'unavailable ({text})'}", file=out)
    return 0


def run_check(out: TextIO) -> int:
    """Non-destructive: one inhibitor acquired and released, ``systemctl --version``, two queries."""
    failures = 0
    print("Linux permission check:", file=out)
    try:
        for kind in CHECK_INHIBITOR_WHAT:
            acquire_inhibitor(kind, CHECK_INHIBITOR_WHY).release()
        print("inhibitor acquire/release: ok", file=out)
    except (LogindError, Unsupported, OSError) as error:
        failures += 1
        print(f"inhibitor acquire/release: failed - {error}", file=out)
    try:
        completed = subprocess.run(
            ["systemctl", "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=QUERY_TIMEOUT_SECONDS,
            check=False,
        )
        first_line = (completed.stdout.splitlines() or [""])[0]
        if completed.returncode != 0:
            raise OSError(completed.stderr.strip() or f"exit code {completed.returncode}")
        print(f"systemctl --version: ok ({first_line})", file=out)
    except (OSError, subprocess.TimeoutExpired) as error:
        failures += 1
        print(f"systemctl --version: failed - {error}", file=out)
    for method in ("CanSuspend", "CanHibernate"):
        text, succeeded = _query_capability_text(method)
        failures += 0 if succeeded else 1
        print(f"logind {method}: {text if succeeded else f'failed - {text}'}", file=out)
    return 1 if failures else 0


def suspend_ignores_other_blockers() -> bool:
    """The user's ``SuspendIgnoresOtherBlockers`` (False when the settings file cannot be read)."""
    from ...settings.store import load_settings_report
    from ..paths import resolve_paths

    try:
        return load_settings_report(resolve_paths().settings_file).settings.suspend_ignores_other_blockers
    except Exception:  # noqa: BLE001 - an unusable settings file grants nothing extra
        return False


def install_rule(path: Path, user: str, *, use_sudo: bool, out: TextIO, err: TextIO,
                 ignore_inhibit: bool | None = None) -> int:
    ignore_inhibit = suspend_ignores_other_blockers() if ignore_inhibit is None else ignore_inhibit
    content = render_rule(user, ignore_inhibit=ignore_inhibit)
    if not use_sudo:
        try:
            existing = _read_rule(path)
            if existing is not None and not _is_managed(existing):
                print(f"Refusing to overwrite unmanaged polkit rule file: {path}", file=err)
                return 1
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            write_atomic(path, content, mode=0o644)  # polkitd reads it as its own user
        except OSError as error:
            print(f"Failed to install LidGuard polkit rule {path}: {error}", file=err)
            return 1
    else:
        temp_path = Path(tempfile.gettempdir()) / f"lidguard-polkit-{uuid.uuid4()}.rules"
        try:
            write_atomic(temp_path, content, mode=0o644)
            exit_code, stderr = _run_sudo_script(
                _SUDO_INSTALL_SCRIPT, "lidguard-rule-install", [str(temp_path), str(path), *MANAGED_MARKERS]
            )
        finally:
            temp_path.unlink(missing_ok=True)
        if exit_code == UNMANAGED_EXIT_CODE:
            print(f"Refusing to overwrite unmanaged polkit rule file: {path}", file=err)
            return 1
        if exit_code != 0:
            print(
                f"Failed to install LidGuard polkit rule {path} (sudo exit code {exit_code}): {stderr}",
                file=err,
            )
            return 1
    print(f"Installed LidGuard polkit rule for user {user}: {path}", file=out)
    if ignore_inhibit:
        print("SuspendIgnoresOtherBlockers is on: the rule also grants "
              f"{' and '.join(IGNORE_INHIBIT_ACTIONS)}.", file=out)
    return 0


def remove_rule(path: Path, *, use_sudo: bool, out: TextIO, err: TextIO) -> int:
    if not use_sudo:
        try:
            existing = _read_rule(path)
            if existing is None:
                exit_code = NOT_FOUND_EXIT_CODE
            elif not _is_managed(existing):
                exit_code = UNMANAGED_EXIT_CODE
            else:
                path.unlink()
                exit_code = 0
        except OSError as error:
            print(f"Failed to remove LidGuard polkit rule {path}: {error}", file=err)
            return 1
        stderr = ""
    else:
        exit_code, stderr = _run_sudo_script(
            _SUDO_REMOVE_SCRIPT, "lidguard-rule-remove", [str(path), *MANAGED_MARKERS]
        )
    if exit_code == NOT_FOUND_EXIT_CODE:
        print(f"LidGuard polkit rule is not installed: {path}", file=out)
        return 0
    if exit_code == UNMANAGED_EXIT_CODE:
        print(f"Refusing to remove unmanaged polkit rule file: {path}", file=err)
        return 1
    if exit_code != 0:
        print(
            f"Failed to remove LidGuard polkit rule {path} (sudo exit code {exit_code}): {stderr}", file=err
        )
        return 1
    print(f"Removed LidGuard polkit rule: {path}", file=out)
    return 0


def _run_sudo_script(script: str, script_name: str, arguments: list[str]) -> tuple[int, str]:
    """``sudo sh -c '<script>' <name> args...``; sudo may prompt on the terminal (2 min timeout)."""
    try:
        completed = subprocess.run(
            ["sudo", "sh", "-c", script, script_name, *arguments],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=SUDO_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        return 127, "sudo was not found; run this command as root instead"
    except subprocess.TimeoutExpired:
        return 124, f"sudo did not finish within {SUDO_TIMEOUT_SECONDS:.0f} s"
    return completed.returncode, completed.stderr.strip()


def run_linux_permission(subcommand: str, *, out: TextIO, err: TextIO) -> int:
    """Runs one ``linux-permission`` subcommand and returns its exit code."""
    if subcommand == "status":
        return show_status(out)
    if subcommand == "check":
        return run_check(out)
    use_sudo = not _running_as_root()
    if subcommand == "install":
        return install_rule(resolve_rule_path(), resolve_target_user(), use_sudo=use_sudo, out=out, err=err)
    if subcommand == "remove":
        return remove_rule(resolve_rule_path(), use_sudo=use_sudo, out=out, err=err)
    print(f"Usage: lidguard linux-permission {'|'.join(SUBCOMMANDS)}", file=err)
    return 2
