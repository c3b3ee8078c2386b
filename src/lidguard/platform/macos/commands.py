"""The one runner for every macOS command-line tool lidguard uses, and the safety rule for tests.

Tools are resolved by name: on macOS the fixed system path first (REFERENCE 1.5: ``/usr/bin/pmset``,
``/usr/sbin/ioreg``, ...; the sudoers rule names those exact paths), else ``PATH``. On any other OS
only ``PATH``, which is how ``LIDGUARD_PLATFORM=macos`` runs on Linux with stand-in scripts.

Safety: in test mode (``LIDGUARD_TEST_MODE=1`` or inside pytest) a tool is run only when its resolved
path lies inside ``LIDGUARD_MACOS_STANDIN_DIR``; the fixed system paths are never considered then.
A developer running the suite on a real Mac can therefore never reach the real ``pmset`` or ``sudo``.

Privileged commands go through ``sudo -n <absolute tool path> args...`` (never a password prompt);
a refusal that means "no sudoers rule" gets the ``lidguard macos-permission install`` hint.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from ... import switches
from ..errors import Unsupported

__all__ = [
    "PERMISSION_HINT",
    "STANDIN_DIR_VARIABLE",
    "TEST_ROOT_VARIABLE",
    "TOOL_PATHS",
    "CommandResult",
    "RealToolRefused",
    "ToolMissing",
    "describe_tool",
    "privileged_argv",
    "resolve_tool",
    "run_privileged",
    "run_tool",
    "running_as_root",
    "running_under_tests",
    "start_tool",
]

STANDIN_DIR_VARIABLE = "LIDGUARD_MACOS_STANDIN_DIR"
TEST_ROOT_VARIABLE = "LIDGUARD_MACOS_TEST_ROOT"
# REFERENCE 1.5: the paths the macOS resolver prefers (and the sudoers rule allows).
TOOL_PATHS = {
    "afplay": "/usr/bin/afplay",
    "caffeinate": "/usr/bin/caffeinate",
    "id": "/usr/bin/id",
    "install": "/usr/bin/install",
    "ioreg": "/usr/sbin/ioreg",
    "osascript": "/usr/bin/osascript",
    "pmset": "/usr/bin/pmset",
    "powermetrics": "/usr/bin/powermetrics",
    "ps": "/bin/ps",
    "rm": "/bin/rm",
    "sh": "/bin/sh",
    "sudo": "/usr/bin/sudo",
    "system_profiler": "/usr/sbin/system_profiler",
    "visudo": "/usr/sbin/visudo",
    "whoami": "/usr/bin/whoami",
}
PERMISSION_HINT = "Run `lidguard macos-permission install` to install LidGuard's managed sudoers rule."
# sudo(8) messages meaning "no rule lets this run without a password".
_SUDO_REFUSALS = ("a password is required", "a terminal is required", "not allowed", "sorry")
DEFAULT_TIMEOUT_SECONDS = 10.0


class RealToolRefused(RuntimeError):
    """Test mode and the tool is not a stand-in: lidguard's tests never run a real macOS tool."""


class ToolMissing(Unsupported):
    """The tool was not found (an ``Unsupported`` of the capability that needed it)."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def sudo_refused(self) -> bool:
        """``sudo -n`` refused to run the command without a password (no sudoers rule)."""
        detail = self.stderr.strip() or self.stdout.strip()
        return bool(self.argv) and os.path.basename(self.argv[0]) == "sudo" and _is_sudo_refusal(detail)

    def failure_text(self) -> str:
        """``<tool> ... failed with exit code N: <stderr>`` (+ the sudoers hint when sudo refused)."""
        detail = self.stderr.strip() or self.stdout.strip() or "no error output"
        text = f"`{' '.join(_short(self.argv))}` failed with exit code {self.exit_code}: {detail}"
        if self.argv and os.path.basename(self.argv[0]) == "sudo" and _is_sudo_refusal(detail):
            text += f" {PERMISSION_HINT}"
        return text


def _short(argv: tuple[str, ...]) -> list[str]:
    return [os.path.basename(part) if os.path.isabs(part) and index < 2 else part
            for index, part in enumerate(argv)]


def _is_sudo_refusal(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _SUDO_REFUSALS)


def running_under_tests() -> bool:
    return bool(os.environ.get("PYTEST_CURRENT_TEST")) or switches.in_test_mode()


def running_as_root() -> bool:
    """euid 0; in test mode ``LIDGUARD_MACOS_TEST_ROOT=0|1`` decides (the suite runs as root in CI
    containers but must exercise the ``sudo -n`` path a normal Mac user takes)."""
    if running_under_tests() and os.environ.get(TEST_ROOT_VARIABLE, "").strip() in ("0", "1"):
        return os.environ[TEST_ROOT_VARIABLE].strip() == "1"
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def _inside(path: str, folder: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, base]) == base


def resolve_tool(name: str) -> str | None:
    """The absolute path of ``name`` or None; raises :class:`RealToolRefused` in test mode for
    anything outside ``LIDGUARD_MACOS_STANDIN_DIR``."""
    if running_under_tests():
        standins = os.environ.get(STANDIN_DIR_VARIABLE, "").strip()
        found = shutil.which(name)
        if found is None:
            return None
        if not standins or not _inside(found, standins):
            raise RealToolRefused(
                f"refusing to run {found} under test; put a stand-in {name} in the folder named by "
                f"{STANDIN_DIR_VARIABLE} and first on PATH"
            )
        return os.path.abspath(found)
    fixed = TOOL_PATHS.get(name)
    if sys.platform == "darwin" and fixed and os.access(fixed, os.X_OK):
        return fixed
    found = shutil.which(name)
    return os.path.abspath(found) if found else None


def require_tool(name: str, capability: str) -> str:
    path = resolve_tool(name)
    if path is None:
        where = f"{TOOL_PATHS[name]} or PATH" if name in TOOL_PATHS else "PATH"
        raise ToolMissing(capability, f"{name} was not found ({where})")
    return path


def describe_tool(name: str) -> str:
    """``available (<path>)`` / ``missing`` / ``refused (...)`` for status and doctor lines."""
    try:
        path = resolve_tool(name)
    except RealToolRefused as error:
        return f"refused ({error})"
    return f"available ({path})" if path else "missing"


def run_tool(name: str, arguments: list[str], *, capability: str,
             timeout: float = DEFAULT_TIMEOUT_SECONDS, interactive: bool = False) -> CommandResult:
    """Runs ``name arguments...`` to completion. Raises ``ToolMissing``, ``RealToolRefused``, or
    ``subprocess.TimeoutExpired``; a non-zero exit is a result, not an exception. ``interactive``
    keeps the caller's stdin (sudo may ask for the password on the terminal)."""
    return _run([require_tool(name, capability), *arguments], timeout=timeout, interactive=interactive)


def privileged_argv(name: str, arguments: list[str], *, capability: str) -> list[str]:
    """``[tool, args...]`` as root, else ``[sudo, -n, tool, args...]`` (REFERENCE 1.5)."""
    tool = require_tool(name, capability)
    if running_as_root():
        return [tool, *arguments]
    return [require_tool("sudo", capability), "-n", tool, *arguments]


def run_privileged(name: str, arguments: list[str], *, capability: str,
                   timeout: float = DEFAULT_TIMEOUT_SECONDS) -> CommandResult:
    """An allowlisted command through ``sudo -n``: a missing rule fails at once with the hint."""
    return _run(privileged_argv(name, arguments, capability=capability), timeout=timeout)


def _run(argv: list[str], *, timeout: float, interactive: bool = False) -> CommandResult:
    # LC_ALL=C: pmset/ioreg/powermetrics print English keywords that the parsers read.
    environment = {**os.environ, "LC_ALL": "C"}
    try:
        completed = subprocess.run(
            argv,
            stdin=None if interactive else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
            env=environment,
        )
    except OSError as error:
        return CommandResult(tuple(argv), 127, "", f"could not start: {error}")
    return CommandResult(tuple(argv), completed.returncode, completed.stdout, completed.stderr)


def start_tool(name: str, arguments: list[str], *, capability: str) -> subprocess.Popen[bytes]:
    """Starts a long-running tool (``caffeinate``) in its own session, output discarded but stderr."""
    argv = [require_tool(name, capability), *arguments]
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
