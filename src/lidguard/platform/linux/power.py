"""Keep-awake protection and the lid-close policy on Linux: systemd-logind block inhibitors.

An inhibitor is an fd returned by ``org.freedesktop.login1.Manager.Inhibit`` (org.freedesktop.login1(5));
logind drops it when every copy of the fd is closed, so it dies with the runtime. Two ways to hold one:

- the cffi binding (``_binding.LogindConnection.inhibit``), when :func:`_binding.binding_status` is active;
- otherwise a helper ``systemd-inhibit --what=... --mode=block -- sh -c 'echo held; read _'``
  (systemd-inhibit(1)), released by closing its stdin; the stdin pipe also closes when the runtime dies,
  so the helper never outlives it (shared/spec/REFERENCE.md 8.2). systemd-inhibit runs the command only
  once logind granted the inhibitor, so "held" on its stdout is the proof; a helper that exits first
  failed, and one that says nothing within ``HELPER_CONFIRM_SECONDS`` is ended and counts as failed.

Lid protection is a *separate* ``handle-lid-switch`` inhibitor: logind's default
``LidSwitchIgnoreInhibited=yes`` (logind.conf(5)) makes lid-close handling ignore a plain ``sleep``
inhibitor, so ``sleep`` alone does not stop suspend on lid close. No distribution config is edited.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from ..api import LidActionSnapshot, LidPolicyRefused, ProtectionRequest, Unsupported
from ._binding import (
    LogindConnection,
    LogindError,
    LogindUnavailable,
    binding_status,
    refuse_real_system_bus_under_pytest,
)

__all__ = [
    "LID_SWITCH_WHY",
    "LINUX_LID_SCHEME_IDENTIFIER",
    "InhibitorHandle",
    "InhibitorHelperError",
    "LinuxLidPolicy",
    "LinuxPowerRequests",
    "acquire_inhibitor",
    "build_inhibit_what",
    "describe_inhibitor_path",
]

INHIBITOR_WHO = "lidguard"
INHIBITOR_MODE = "block"
DEFAULT_POWER_WHY = "LidGuard is keeping the system awake while an agent session is running."
LID_SWITCH_WHY = "LidGuard is temporarily inhibiting lid-close handling while an agent session is running."
# Fake power-scheme identifier recorded in the pending lid-action backup (REFERENCE 8.2).
LINUX_LID_SCHEME_IDENTIFIER = "1d4c92cb-9a9a-4d20-b89c-111ea5270e91"
LID_ACTION_DO_NOTHING = 0
LID_ACTION_SLEEP = 1
# How long systemd-inhibit may take to get the inhibitor and run its command. It used to be "still running
# after 0.25 s means held": on a loaded machine a helper that was about to fail (no logind) was still
# starting then, and protection was reported while none was held.
HELPER_CONFIRM_SECONDS = 15.0
HELPER_CONFIRMATION = b"held"
HELPER_RELEASE_WAIT_SECONDS = 2.0


class InhibitorHelperError(LogindError):
    """The ``systemd-inhibit`` helper exited before it confirmed the inhibitor (or never confirmed it:
    ``exit_code`` None); carries its exit code and stderr."""

    def __init__(self, exit_code: int | None, stderr: str) -> None:
        detail = stderr.strip() or "no error output"
        outcome = (f"exited with code {exit_code}" if exit_code is not None
                   else f"did not confirm the inhibitor within {HELPER_CONFIRM_SECONDS:.0f} s and was ended")
        super().__init__("lidguard.Error.SystemdInhibitFailed", f"systemd-inhibit {outcome}: {detail}")
        self.exit_code = exit_code
        self.stderr = stderr


def build_inhibit_what(request: ProtectionRequest) -> str:
    """The ``what`` of Inhibit: ``sleep`` for PreventSystemSleep; ``idle`` for PreventSystemSleep or
    PreventDisplaySleep; joined with ':'; "" when there is nothing to block. Away mode is Windows-only."""
    kinds = []
    if request.prevent_system_sleep:
        kinds.append("sleep")
    if request.prevent_system_sleep or request.prevent_display_sleep:
        kinds.append("idle")
    return ":".join(kinds)


class InhibitorHandle:
    """One held inhibitor (or nothing); ``release`` is idempotent and thread-safe."""

    def __init__(self, description: str, release_inhibitor: Callable[[], None] | None) -> None:
        self.description = description
        self._release_inhibitor = release_inhibitor
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self._release_inhibitor is not None

    def release(self) -> None:
        with self._lock:
            release_inhibitor, self._release_inhibitor = self._release_inhibitor, None
        if release_inhibitor is not None:
            release_inhibitor()

    def __repr__(self) -> str:
        return f"InhibitorHandle({self.description!r}, held={self.held})"


def describe_inhibitor_path() -> str:
    """Which way inhibitors are taken on this machine, and why (for ``describe``/``doctor``)."""
    active, reason = binding_status()
    if active:
        return f"logind Inhibit over D-Bus ({reason})"
    helper = shutil.which("systemd-inhibit")
    if helper is None:
        return f"unavailable: logind binding inactive ({reason}) and systemd-inhibit not found"
    return f"systemd-inhibit helper {helper} (logind binding inactive: {reason})"


def acquire_inhibitor(what: str, why: str, *, capability: str = "power") -> InhibitorHandle:
    """A block inhibitor for ``what`` held by this process until ``release``.

    Raises ``Unsupported(capability, ...)`` when logind or systemd-inhibit is missing, and
    :class:`LogindError` (e.g. AccessDenied from polkit) when logind refuses.
    """
    active, reason = binding_status()
    if active:
        return _acquire_with_binding(what, why, capability)
    return _acquire_with_helper(what, why, capability, binding_reason=reason)


def _acquire_with_binding(what: str, why: str, capability: str) -> InhibitorHandle:
    try:
        with LogindConnection() as connection:
            fd = connection.inhibit(what, INHIBITOR_WHO, why, INHIBITOR_MODE)
            library_name = connection.library_name
    except LogindUnavailable as error:
        raise Unsupported(capability, _not_reachable(error)) from error
    # The inhibitor outlives the D-Bus connection (as in real logind); only the fd matters now.
    return InhibitorHandle(
        f"logind inhibitor {what} (fd {fd}, {library_name} via cffi)", lambda: os.close(fd)
    )


def _acquire_with_helper(what: str, why: str, capability: str, *, binding_reason: str) -> InhibitorHandle:
    refuse_real_system_bus_under_pytest("start systemd-inhibit")
    helper = shutil.which("systemd-inhibit")
    if helper is None:
        raise Unsupported(
            capability, f"systemd-inhibit was not found and the logind binding is inactive ({binding_reason})"
        )
    shell = shutil.which("sh") or "/bin/sh"
    command = [
        helper,
        f"--what={what}",
        f"--who={INHIBITOR_WHO}",
        f"--why={why}",
        f"--mode={INHIBITOR_MODE}",
        "--",
        shell,
        "-c",
        f"echo {HELPER_CONFIRMATION.decode()}; read _",
    ]
    # stdin is a pipe whose only writer is this process (Popen pipes are close-on-exec): closing it, or
    # this process dying, makes `read` see EOF, sh exits and systemd-inhibit drops the inhibitor.
    # A new session gives the helper its own process group for the kill fallback in release.
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    if _helper_confirmed(process):
        if process.stdout is not None:
            process.stdout.close()  # sh writes nothing more
        return InhibitorHandle(
            f"systemd-inhibit helper pid {process.pid} ({what})", lambda: _stop_helper(process)
        )
    exit_code = process.poll()
    if exit_code is None:  # neither held nor failed in time: end it, it holds nothing we can count on
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)
    ended = process.poll() is not None  # else its stderr may never end: do not read it
    stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr and ended else ""
    _close_pipes(process)
    raise InhibitorHelperError(exit_code, stderr)


def _helper_confirmed(process: subprocess.Popen[bytes]) -> bool:
    """True once the helper's command printed the confirmation (the inhibitor is held); False when its
    output ended first (systemd-inhibit failed and exited) or after ``HELPER_CONFIRM_SECONDS``."""
    pipe = process.stdout
    if pipe is None:
        return False
    output = b""
    deadline = time.monotonic() + HELPER_CONFIRM_SECONDS
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        while HELPER_CONFIRMATION not in output:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return False
            chunk = os.read(pipe.fileno(), 64)
            if not chunk:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)  # it ended: collect the exit code
                return False
            output += chunk
    return True


def _stop_helper(process: subprocess.Popen[bytes]) -> None:
    """Close stdin (sh exits, systemd-inhibit follows); after 2 s kill the helper's process group."""
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=HELPER_RELEASE_WAIT_SECONDS)
    _close_pipes(process)


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _acquire_each_kind(kinds: list[str], why: str) -> InhibitorHandle:
    """One inhibitor per kind, released together; all or nothing (a refusal releases the others).

    Why not one ``sleep:idle`` inhibitor: logind checks a ``what`` naming more than one kind against
    ``org.freedesktop.login1.inhibit-handle-lid-switch`` (logind 252's method_inhibit picks the
    per-kind action only when ``what`` is exactly one kind; tests/reallogind), so a user granted
    inhibit-block-sleep and inhibit-block-idle but not the lid switch lost keep-awake with it."""
    handles: list[InhibitorHandle] = []
    try:
        for kind in kinds:
            handles.append(acquire_inhibitor(kind, why))
    except BaseException:
        for handle in handles:
            handle.release()
        raise
    if len(handles) == 1:
        return handles[0]

    def release_all() -> None:
        errors = []
        for handle in handles:
            try:
                handle.release()
            except Exception as error:  # release the others first
                errors.append(error)
        if errors:
            raise errors[0]

    return InhibitorHandle(" + ".join(handle.description for handle in handles), release_all)


class LinuxPowerRequests:
    """PowerRequests: a ``sleep`` and an ``idle`` (or only an ``idle``) block inhibitor per applied protection."""

    def __init__(self) -> None:
        self._handles: list[InhibitorHandle] = []
        self._lock = threading.Lock()

    def apply(self, request: ProtectionRequest) -> InhibitorHandle:
        what = build_inhibit_what(request)
        if not what:
            return InhibitorHandle("nothing to block (no sleep or display protection requested)", None)
        handle = _acquire_each_kind(what.split(":"), request.reason.strip() or DEFAULT_POWER_WHY)
        with self._lock:
            self._handles = [known for known in self._handles if known.held] + [handle]
        return handle

    def describe(self) -> str:
        return describe_inhibitor_path()

    def close(self) -> None:
        """Releases every protection this object applied (each handle's release is idempotent)."""
        with self._lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.release()


LINUX_LID_HINT = ("the lid-close action needs polkit's org.freedesktop.login1.inhibit-handle-lid-switch "
                  "permission for this user (an active local session has it by default; "
                  "`lidguard linux-permission install` grants it)")
_POLKIT_REFUSALS = ("org.freedesktop.DBus.Error.AccessDenied",
                    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")


def _polkit_refused(error: LogindError) -> bool:
    """logind (polkit) said no: a D-Bus AccessDenied or InteractiveAuthorizationRequired, or the
    systemd-inhibit helper's "Access denied" / "Interactive authentication required" line."""
    if error.name in _POLKIT_REFUSALS:
        return True
    if isinstance(error, InhibitorHelperError):
        text = error.message.lower()
        return "access denied" in text or "interactive authentication required" in text
    return False


class LinuxLidPolicy:
    """LidPolicy: "Do Nothing" on lid close means this process holds a ``handle-lid-switch`` inhibitor.

    Nothing is written anywhere: the "scheme" is a fixed identifier and the "action" read back is
    0 (DoNothing) while our inhibitor is held, else 1 (Sleep), for both AC and DC.
    """

    # A handle-lid-switch inhibitor never blocks a Suspend call: the runtime keeps it through its own
    # suspend request and releases it after (runtime/components/protection.py, keep_lid_for_suspend).
    hold_allows_suspend = True

    def __init__(self) -> None:
        self._hold: InhibitorHandle | None = None
        self._lock = threading.Lock()

    @property
    def holds_lid_switch(self) -> bool:
        hold = self._hold
        return hold is not None and hold.held

    def read_lid_actions(self) -> LidActionSnapshot:
        action = LID_ACTION_DO_NOTHING if self.holds_lid_switch else LID_ACTION_SLEEP
        return LidActionSnapshot(LINUX_LID_SCHEME_IDENTIFIER, action, action)

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        """Raises ``LidPolicyRefused`` when polkit refuses the inhibitor (nothing is held then)."""
        with self._lock:
            if self._hold is None or not self._hold.held:
                try:
                    self._hold = acquire_inhibitor("handle-lid-switch", LID_SWITCH_WHY, capability="lid_policy")
                except LogindError as error:
                    if _polkit_refused(error):
                        raise LidPolicyRefused(LINUX_LID_HINT, str(error)) from error
                    raise

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        self._release_hold()

    def drop_runtime_hold(self) -> None:
        self._release_hold()

    def describe(self) -> str:
        return f"handle-lid-switch inhibitor via {describe_inhibitor_path()}"

    def close(self) -> None:
        self._release_hold()

    def _release_hold(self) -> None:
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.release()


def _not_reachable(error: BaseException) -> str:
    from ._binding import NO_LOGIND, unreachable_text

    text = unreachable_text(error)
    return text if text == NO_LOGIND else f"systemd-logind is not reachable ({text})"
