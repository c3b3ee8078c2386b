"""``lidguard macos-permission status|check|install|remove``: the managed sudoers rule (REFERENCE 1.5).

The runtime changes ``SleepDisabled``/``hibernatemode`` and samples ``powermetrics`` through
``sudo -n`` only; this rule lets exactly those commands run without a password. A file is ours only
when it carries both managed markers; anything else is never overwritten or removed. The generated
text is validated with ``visudo -cf`` before it is moved in place (a broken sudoers file can lock
the user out of sudo). Root writes the file itself (mode 0440); other users go through one
``sudo sh -c`` script (which may ask for the password once, on the terminal, 2 min timeout).
``LIDGUARD_MACOS_SUDOERS_PATH`` moves the file (tests); under test the real path is refused.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import TextIO

from ...fileio import write_atomic
from ..api import ProtectionRequest, Unsupported
from .commands import (
    TOOL_PATHS,
    CommandResult,
    RealToolRefused,
    describe_tool,
    resolve_tool,
    run_privileged,
    run_tool,
    running_as_root,
    running_under_tests,
)
from .power import MacPowerRequests, parse_pmset_setting, parse_sleep_disabled

__all__ = [
    "DEFAULT_SUDOERS_PATH",
    "MANAGED_MARKERS",
    "describe_permission",
    "render_sudoers",
    "resolve_sudoers_path",
    "run_macos_permission",
]

DEFAULT_SUDOERS_PATH = Path("/private/etc/sudoers.d/lidguard")
SUDOERS_PATH_VARIABLE = "LIDGUARD_MACOS_SUDOERS_PATH"
MANAGED_MARKERS = ("Managed by LidGuard macOS permission command.", "LidGuard macOS sudoers rule v1.")
ALLOWED_PMSET = ("-a disablesleep 0", "-a disablesleep 1", "-a hibernatemode 0", "-a hibernatemode 3",
                 "-a hibernatemode 25")
ALLOWED_POWERMETRICS = "--samplers smc -n 1 -i 1000"
SUDO_TIMEOUT_SECONDS = 120.0
CHECK_TIMEOUT_SECONDS = 8.0
UNMANAGED_EXIT_CODE = 17
NOT_FOUND_EXIT_CODE = 2
_SUDO_INSTALL_SCRIPT = """set -eu
if [ -e "$2" ] && ! { grep -qF -- "$3" "$2" && grep -qF -- "$4" "$2"; }; then exit 17; fi
mkdir -p -- "$(dirname -- "$2")"
install -m 0440 -- "$1" "$2"
"""
_SUDO_REMOVE_SCRIPT = """set -eu
if [ ! -e "$1" ]; then exit 2; fi
if ! { grep -qF -- "$2" "$1" && grep -qF -- "$3" "$1"; }; then exit 17; fi
rm -f -- "$1"
"""
_PLAIN_USER = re.compile(r"^[A-Za-z0-9_.-]+$")


def resolve_sudoers_path() -> Path:
    override = os.environ.get(SUDOERS_PATH_VARIABLE, "").strip()
    if override:
        return Path(override)
    if running_under_tests():
        raise Unsupported("permission", f"refusing the real sudoers file under test; set {SUDOERS_PATH_VARIABLE}")
    return DEFAULT_SUDOERS_PATH


def resolve_target_user() -> str:
    """``$SUDO_USER`` when root, else the current user name, else "unknown"."""
    if running_as_root() and os.environ.get("SUDO_USER", "").strip():
        return os.environ["SUDO_USER"].strip()
    import pwd  # Unix-only; imported here so the module imports on every OS

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return os.environ.get("USER", "").strip() or "unknown"


def _quote_user(user: str) -> str:
    if _PLAIN_USER.match(user):
        return user
    return '"' + user.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _tool_path(name: str) -> str:
    """The path the runtime runs through sudo (the same resolver), else the macOS default."""
    try:
        return resolve_tool(name) or TOOL_PATHS[name]
    except RealToolRefused:
        return TOOL_PATHS[name]


def render_sudoers(user: str) -> str:
    pmset, powermetrics = _tool_path("pmset"), _tool_path("powermetrics")
    commands = [f"{pmset} {arguments}" for arguments in ALLOWED_PMSET] + [f"{powermetrics} {ALLOWED_POWERMETRICS}"]
    return (f"# {MANAGED_MARKERS[0]}\n# {MANAGED_MARKERS[1]}\n"
            f"{_quote_user(user)} ALL=(root) NOPASSWD: {', '.join(commands)}\n")


def _is_managed(content: str) -> bool:
    return all(marker in content for marker in MANAGED_MARKERS)


def describe_rule_state(path: Path, user: str) -> str:
    """Read directly only: never ``sudo cat`` (REFERENCE 1.5)."""
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "not installed"
    except OSError as error:
        return f"unable to inspect ({error.strerror or error})"
    if not _is_managed(content):
        return "present but not managed by LidGuard"
    rule_line = next((line for line in content.splitlines() if "NOPASSWD:" in line), "")
    mine = rule_line.startswith(_quote_user(user) + " ")
    return "installed for current user" if mine else "installed for another user"


def describe_permission() -> str:
    try:
        path = resolve_sudoers_path()
    except Unsupported as error:
        return f"unavailable: {error.reason}"
    return f"sudoers rule {path}: {describe_rule_state(path, resolve_target_user())} " \
           "(see `lidguard macos-permission status`)"


def _current_values() -> tuple[int | None, int | None, str | None]:
    """(SleepDisabled, hibernatemode, failure) from ``pmset -g``."""
    try:
        result = run_tool("pmset", ["-g"], capability="permission", timeout=CHECK_TIMEOUT_SECONDS)
    except (Unsupported, RealToolRefused, subprocess.TimeoutExpired) as error:
        return None, None, str(error)
    if not result.ok:
        return None, None, result.failure_text()
    return parse_sleep_disabled(result.stdout), parse_pmset_setting(result.stdout, "hibernatemode"), None


def _privileged_line(arguments: list[str], name: str = "pmset") -> tuple[bool, str]:
    try:
        result: CommandResult = run_privileged(name, arguments, capability="permission",
                                               timeout=CHECK_TIMEOUT_SECONDS)
    except (Unsupported, RealToolRefused, subprocess.TimeoutExpired) as error:
        return False, f"failed - {error}"
    return (True, "ok") if result.ok else (False, f"failed - {result.failure_text()}")


def show_status(out: TextIO) -> int:
    user = resolve_target_user()
    path = resolve_sudoers_path()
    disabled, hibernate, failure = _current_values()
    print("macOS permission status:", file=out)
    print(f"User: {user}", file=out)
    print(f"Sudoers path: {path}", file=out)
    print(f"Sudoers rule: {describe_rule_state(path, user)}", file=out)
    if disabled is None:
        print(f"Privileged pmset usability: unknown (pmset -g failed: {failure})", file=out)
    else:
        print(f"Privileged pmset usability: {_privileged_line(['-a', 'disablesleep', str(disabled)])[1]}",
              file=out)
    for tool in ("caffeinate", "pmset", "powermetrics", "ioreg", "system_profiler"):
        print(f"{tool}: {describe_tool(tool)}", file=out)
    print(f"SleepDisabled: {disabled if disabled is not None else f'unavailable ({failure})'}", file=out)
    print(f"hibernatemode: {hibernate if hibernate is not None else 'unavailable'}", file=out)
    return 0


def run_check(out: TextIO) -> int:
    """Non-destructive: caffeinate acquire/release, pmset -g, same-value writes, one powermetrics."""
    failures = 0
    print("macOS permission check:", file=out)
    try:
        MacPowerRequests().apply(ProtectionRequest(prevent_system_sleep=True)).release()
        print("caffeinate -i acquire/release: ok", file=out)
    except (OSError, Unsupported, RealToolRefused) as error:
        failures += 1
        print(f"caffeinate -i acquire/release: failed - {error}", file=out)
    disabled, hibernate, failure = _current_values()
    if disabled is None:
        failures += 1
        print(f"pmset -g: failed - {failure}", file=out)
    else:
        print("pmset -g: ok", file=out)
        ok, text = _privileged_line(["-a", "disablesleep", str(disabled)])
        failures += 0 if ok else 1
        print(f"privileged pmset -a disablesleep {disabled}: {text}", file=out)
    if hibernate in (0, 3, 25):
        ok, text = _privileged_line(["-a", "hibernatemode", str(hibernate)])
        failures += 0 if ok else 1
        print(f"privileged pmset -a hibernatemode {hibernate}: {text}", file=out)
    else:
        print(f"privileged pmset -a hibernatemode: skipped (current value {hibernate} is not 0, 3 or 25)", file=out)
    ok, text = _privileged_line(ALLOWED_POWERMETRICS.split(), "powermetrics")
    failures += 0 if ok else 1
    print(f"privileged powermetrics {ALLOWED_POWERMETRICS}: {text}", file=out)
    return 1 if failures else 0


def _validate(content: str) -> str | None:
    """None when ``visudo -cf`` accepts the text, else why not (missing visudo refuses)."""
    with tempfile.TemporaryDirectory(prefix="lidguard-sudoers-") as folder:
        candidate = Path(folder) / "lidguard"
        write_atomic(candidate, content, mode=0o440)
        try:
            result = run_tool("visudo", ["-cf", str(candidate)], capability="permission", timeout=30)
        except Unsupported:
            return "visudo was not found; refusing to install an unvalidated sudoers file"
        except subprocess.TimeoutExpired:
            return "visudo -cf did not finish within 30 s"
        return None if result.ok else f"visudo rejected the generated rule: {result.failure_text()}"


def install_rule(path: Path, user: str, *, out: TextIO, err: TextIO) -> int:
    content = render_sudoers(user)
    problem = _validate(content)
    if problem is not None:
        print(f"Failed to install LidGuard sudoers rule {path}: {problem}", file=err)
        return 1
    if running_as_root():
        try:
            existing = path.read_text(encoding="utf-8") if path.exists() else None
            if existing is not None and not _is_managed(existing):
                print(f"Refusing to overwrite unmanaged sudoers file: {path}", file=err)
                return 1
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            write_atomic(path, content, mode=0o440)
        except OSError as error:
            print(f"Failed to install LidGuard sudoers rule {path}: {error}", file=err)
            return 1
    else:
        temp_path = Path(tempfile.gettempdir()) / f"lidguard-sudoers-{uuid.uuid4()}"
        try:
            write_atomic(temp_path, content, mode=0o440)
            exit_code, stderr = _run_sudo_script(_SUDO_INSTALL_SCRIPT, "lidguard-sudoers-install",
                                                 [str(temp_path), str(path), *MANAGED_MARKERS])
        finally:
            temp_path.unlink(missing_ok=True)
        if exit_code == UNMANAGED_EXIT_CODE:
            print(f"Refusing to overwrite unmanaged sudoers file: {path}", file=err)
            return 1
        if exit_code != 0:
            print(f"Failed to install LidGuard sudoers rule {path} (sudo exit code {exit_code}): {stderr}", file=err)
            return 1
    print(f"Installed LidGuard sudoers rule for user {user}: {path}", file=out)
    return 0


def remove_rule(path: Path, *, out: TextIO, err: TextIO) -> int:
    stderr = ""
    if running_as_root():
        try:
            existing = path.read_text(encoding="utf-8") if path.exists() else None
        except OSError as error:
            print(f"Failed to remove LidGuard sudoers rule {path}: {error}", file=err)
            return 1
        exit_code = (NOT_FOUND_EXIT_CODE if existing is None
                     else UNMANAGED_EXIT_CODE if not _is_managed(existing) else 0)
        if exit_code == 0:
            path.unlink()
    else:
        exit_code, stderr = _run_sudo_script(_SUDO_REMOVE_SCRIPT, "lidguard-sudoers-remove",
                                             [str(path), *MANAGED_MARKERS])
    if exit_code == NOT_FOUND_EXIT_CODE:
        print(f"LidGuard sudoers rule is not installed: {path}", file=out)
        return 0
    if exit_code == UNMANAGED_EXIT_CODE:
        print(f"Refusing to remove unmanaged sudoers file: {path}", file=err)
        return 1
    if exit_code != 0:
        print(f"Failed to remove LidGuard sudoers rule {path} (sudo exit code {exit_code}): {stderr}", file=err)
        return 1
    print(f"Removed LidGuard sudoers rule: {path}", file=out)
    return 0


def _run_sudo_script(script: str, script_name: str, arguments: list[str]) -> tuple[int, str]:
    """``sudo /bin/sh -c '<script>' <name> args...`` (may prompt once on the terminal; 2 min)."""
    try:
        result = run_tool("sudo", [TOOL_PATHS["sh"], "-c", script, script_name, *arguments],
                          capability="permission", timeout=SUDO_TIMEOUT_SECONDS, interactive=True)
    except Unsupported:
        return 127, "sudo was not found; run this command as root instead"
    except subprocess.TimeoutExpired:
        return 124, f"sudo did not finish within {SUDO_TIMEOUT_SECONDS:.0f} s"
    return result.exit_code, result.stderr.strip()


def run_macos_permission(subcommand: str, *, out: TextIO, err: TextIO) -> int:
    try:
        if subcommand == "status":
            return show_status(out)
        if subcommand == "check":
            return run_check(out)
        if subcommand == "install":
            return install_rule(resolve_sudoers_path(), resolve_target_user(), out=out, err=err)
        if subcommand == "remove":
            return remove_rule(resolve_sudoers_path(), out=out, err=err)
    except (RealToolRefused, Unsupported) as error:
        print(f"macos-permission {subcommand}: {error}", file=err)
        return 1
    print("Usage: lidguard macos-permission status|check|install|remove", file=err)
    return 2
