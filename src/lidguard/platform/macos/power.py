"""Keep-awake protection and the lid-close policy on macOS: ``caffeinate`` and ``pmset disablesleep``.

Idle protection is one ``caffeinate -i [-d] -w <runtime pid>`` helper (caffeinate(8): ``-i`` prevents
idle system sleep on AC and battery, ``-d`` display sleep, ``-w`` releases the assertion when that
process exits). ``-s`` is never used (it only works on AC; away mode is Windows-only, seed 001).
The assertion lives as long as the helper: release terminates it, and ``-w`` ties it to the runtime,
so a killed runtime cannot leave one behind.

The lid policy (ChangeLidAction) is ``pmset -a disablesleep 1`` through ``sudo -n``; the original
``SleepDisabled`` value is what the pending lid-action backup records (REFERENCE 8.3: a fixed scheme
identifier, action 0 DoNothing <=> SleepDisabled 1, else 1 Sleep). ``pmset -g`` prints
``SleepDisabled N`` under "System-wide power settings" (or "sleep prevented by SleepDisabled").
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading

from ..api import LidActionSnapshot, ProtectionRequest
from ..errors import LidPolicyRefused
from .commands import describe_tool, run_privileged, run_tool, start_tool

__all__ = [
    "MACOS_LID_SCHEME_IDENTIFIER",
    "CaffeinateHandle",
    "MacLidPolicy",
    "MacPowerRequests",
    "build_caffeinate_arguments",
    "parse_pmset_setting",
    "parse_sleep_disabled",
    "read_pmset_settings",
]

# Fake power-scheme identifier recorded in the pending lid-action backup (REFERENCE 8.3).
MACOS_LID_SCHEME_IDENTIFIER = "eb120717-8275-41c2-9400-162dc42ef4ca"
LID_ACTION_DO_NOTHING = 0
MAC_LID_HINT = "the lid-close action needs `lidguard macos-permission install`"
LID_ACTION_SLEEP = 1
HELPER_PROBE_SECONDS = 0.25
HELPER_RELEASE_WAIT_SECONDS = 2.0
PMSET_TIMEOUT_SECONDS = 10.0
_SETTING_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s+(-?\d+)\b", re.MULTILINE)


def build_caffeinate_arguments(request: ProtectionRequest, runtime_pid: int) -> list[str]:
    """``-i`` for PreventSystemSleep, ``-d`` for PreventDisplaySleep, then ``-w <pid>``; [] for nothing."""
    flags = []
    if request.prevent_system_sleep:
        flags.append("-i")
    if request.prevent_display_sleep:
        flags.append("-d")
    return [*flags, "-w", str(runtime_pid)] if flags else []


def parse_pmset_setting(text: str, name: str) -> int | None:
    """The integer after ``name`` on its own line of ``pmset -g`` output (first match), or None."""
    for match in _SETTING_LINE.finditer(text):
        if match.group(1) == name:
            return int(match.group(2))
    return None


def parse_sleep_disabled(text: str) -> int:
    """``SleepDisabled N``; 1 when "sleep prevented by SleepDisabled" shows; absent -> 0."""
    value = parse_pmset_setting(text, "SleepDisabled")
    if value is not None:
        return 1 if value else 0
    return 1 if "sleep prevented by sleepdisabled" in text.lower() else 0


def read_pmset_settings(capability: str) -> str:
    """``pmset -g`` output; raises OSError with the failure text."""
    result = run_tool("pmset", ["-g"], capability=capability, timeout=PMSET_TIMEOUT_SECONDS)
    if not result.ok:
        raise OSError(result.failure_text())
    return result.stdout


# The caffeinate helpers this process holds: left out of the foreign blockers (``assertions.py``).
OWN_HELPER_PIDS: set[int] = set()


class CaffeinateHandle:
    """One running ``caffeinate``; ``release`` (idempotent) terminates it, kills it after 2 s."""

    def __init__(self, description: str, process: subprocess.Popen[bytes] | None) -> None:
        self.description = description
        self._process = process
        self._lock = threading.Lock()
        if process is not None:
            OWN_HELPER_PIDS.add(process.pid)

    @property
    def held(self) -> bool:
        return self._process is not None

    def release(self) -> None:
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        OWN_HELPER_PIDS.discard(process.pid)
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)
        if process.stderr is not None:
            process.stderr.close()


class MacPowerRequests:
    """PowerRequests: one caffeinate helper per applied protection."""

    def __init__(self, runtime_pid: int | None = None) -> None:
        self._runtime_pid = runtime_pid
        self._handles: list[CaffeinateHandle] = []
        self._lock = threading.Lock()

    def apply(self, request: ProtectionRequest) -> CaffeinateHandle:
        pid = self._runtime_pid or os.getpid()
        arguments = build_caffeinate_arguments(request, pid)
        if not arguments:
            return CaffeinateHandle("nothing to prevent (no sleep or display protection requested)", None)
        process = start_tool("caffeinate", arguments, capability="power")
        try:
            exit_code = process.wait(timeout=HELPER_PROBE_SECONDS)
        except subprocess.TimeoutExpired:
            handle = CaffeinateHandle(f"caffeinate pid {process.pid} ({' '.join(arguments)})", process)
            with self._lock:
                self._handles = [known for known in self._handles if known.held] + [handle]
            return handle
        stderr = process.stderr.read().decode("utf-8", "replace").strip() if process.stderr else ""
        if process.stderr is not None:
            process.stderr.close()
        raise OSError(f"caffeinate exited with code {exit_code}: {stderr or 'no error output'}")

    def describe(self) -> str:
        line = describe_tool("caffeinate")
        if line.startswith("available"):
            return f"available (command-line: caffeinate -i [-d] -w <runtime pid>, {line[len('available ('):-1]})"
        return f"unavailable: caffeinate {line}"

    def close(self) -> None:
        with self._lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.release()


class MacLidPolicy:
    """LidPolicy over ``SleepDisabled``: Do Nothing on lid close means ``pmset -a disablesleep 1``."""

    def read_lid_actions(self) -> LidActionSnapshot:
        disabled = parse_sleep_disabled(read_pmset_settings("lid_policy"))
        action = LID_ACTION_DO_NOTHING if disabled else LID_ACTION_SLEEP
        return LidActionSnapshot(MACOS_LID_SCHEME_IDENTIFIER, action, action)

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        self._write_sleep_disabled(1)

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        """Writes the original SleepDisabled back, unless it already has that value (then no sudo
        is needed: e.g. the change itself was refused, or another tool restored it)."""
        actions = (snapshot.alternating_current_action, snapshot.direct_current_action)
        original = 1 if LID_ACTION_DO_NOTHING in actions else 0
        try:
            current: int | None = parse_sleep_disabled(read_pmset_settings("lid_policy"))
        except OSError:
            current = None
        if current != original:
            self._write_sleep_disabled(original)

    def drop_runtime_hold(self) -> None:
        """Nothing is held by the process: SleepDisabled stays as it is when the backup is gone."""

    def describe(self) -> str:
        pmset, sudo = describe_tool("pmset"), describe_tool("sudo")
        if not pmset.startswith("available"):
            return f"unavailable: pmset {pmset}"
        if not sudo.startswith("available"):
            return f"unavailable: sudo {sudo} (pmset -a disablesleep needs root)"
        return ("available (command-line: sudo -n pmset -a disablesleep 1; "
                "`lidguard macos-permission status` shows whether the sudoers rule is installed)")

    def close(self) -> None:
        """Nothing to release: the runtime's protection restores SleepDisabled from the backup."""

    @staticmethod
    def _write_sleep_disabled(value: int) -> None:
        result = run_privileged("pmset", ["-a", "disablesleep", str(value)], capability="lid_policy",
                                timeout=PMSET_TIMEOUT_SECONDS)
        if result.sudo_refused and value == 1:
            raise LidPolicyRefused(MAC_LID_HINT, result.failure_text())
        if not result.ok:
            raise OSError(result.failure_text())

