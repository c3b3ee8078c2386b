"""Immediate sleep / hibernate on Linux: logind ``Suspend``/``Hibernate``, or ``systemctl`` as fallback.

With the binding active: ``CanSuspend``/``CanHibernate`` first (org.freedesktop.login1(5); "no" or
"na" means the request cannot succeed), then ``Suspend(false)``/``Hibernate(false)`` - non-interactive,
so polkit answers at once instead of waiting for an agent. Otherwise ``systemctl suspend|hibernate``
(systemctl(1)) with a 30 s timeout, reporting the exit code and stderr on failure (REFERENCE 8.2).

Safety: under pytest nothing here reaches the real machine - the binding refuses without a private
``DBUS_SYSTEM_BUS_ADDRESS``, and ``systemctl`` is refused unless ``LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS=1``
says the test put a fake ``systemctl`` first on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..api import SuspendBlocker, SuspendBlockerChanges, SuspendMode, SuspendResult, Unsupported
from ._binding import (
    LogindConnection,
    LogindError,
    LogindUnavailable,
    RealSystemBusRefused,
    binding_status,
    running_under_tests,
)

__all__ = ["PERMISSION_HINT", "SYSTEMCTL_TIMEOUT_SECONDS", "LinuxSuspender"]

SYSTEMCTL_TIMEOUT_SECONDS = 30.0
PERMISSION_HINT = (
    "Run `lidguard linux-permission install` to allow this user to suspend and hibernate through polkit."
)
# Answers of CanSuspend/CanHibernate that mean the request cannot succeed at all.
_CANNOT_ANSWERS = ("no", "na")
# D-Bus errors that a polkit rule (linux-permission install) resolves.
_PERMISSION_ERRORS = frozenset(
    {"org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"}
)
_LOGIND_METHODS = {
    SuspendMode.SLEEP: ("CanSuspend", "Suspend", "suspend"),
    SuspendMode.HIBERNATE: ("CanHibernate", "Hibernate", "hibernate"),
}


class LinuxSuspender:
    """Suspender. Raises ``Unsupported("suspend", ...)`` when neither logind nor systemctl is usable.

    Other programs' sleep blockers (``blockers.py``, ListInhibitors): the runtime does not request
    while one is listed unless ``SuspendIgnoresOtherBlockers`` is on (``runtime/blockers.py``); then
    the request goes to logind as it is - root passes (CAP_SYS_BOOT), a user needs
    ``login1.suspend-ignore-inhibit``, which the polkit rule of ``linux-permission install`` grants
    while that setting is on.
    """

    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        active, reason = binding_status()
        if active:
            return self._suspend_with_logind(mode)
        return self._suspend_with_systemctl(mode, binding_reason=reason)

    def list_blockers(self) -> list[SuspendBlocker]:
        active, reason = binding_status()
        if not active:
            raise Unsupported("suspend_blockers", f"the logind binding is inactive ({reason})")
        from .blockers import list_sleep_blockers

        return list_sleep_blockers()

    def blocker_changes(self) -> SuspendBlockerChanges:
        from .blockers import BlockInhibitedChanges

        return BlockInhibitedChanges()

    def describe(self) -> str:
        active, reason = binding_status()
        if active:
            return f"logind Suspend/Hibernate over D-Bus ({reason})"
        systemctl = shutil.which("systemctl")
        if systemctl is None:
            return f"unavailable: logind binding inactive ({reason}) and systemctl not found"
        return f"{systemctl} suspend|hibernate (logind binding inactive: {reason})"

    def close(self) -> None:
        """Nothing is held between requests."""

    def _suspend_with_logind(self, mode: SuspendMode) -> SuspendResult:
        can_method, action_method, _ = _LOGIND_METHODS[mode]
        try:
            with LogindConnection() as connection:
                can_answer = (
                    connection.can_suspend() if mode is SuspendMode.SLEEP else connection.can_hibernate()
                )
                if can_answer in _CANNOT_ANSWERS:
                    return SuspendResult(
                        False, f"logind {can_method} answered {can_answer!r}: {mode} is not available here."
                    )
                if mode is SuspendMode.SLEEP:
                    connection.suspend(interactive=False)
                else:
                    connection.hibernate(interactive=False)
        except LogindUnavailable as error:
            from .power import _not_reachable

            raise Unsupported("suspend", _not_reachable(error)) from error
        except LogindError as error:
            message = f"logind {action_method} failed: {error.name}: {error.message}"
            if error.name in _PERMISSION_ERRORS:
                message += f". {PERMISSION_HINT}"
            return SuspendResult(False, message)
        return SuspendResult(
            True, f"Requested {mode} through logind {action_method} ({can_method}: {can_answer})."
        )

    def _suspend_with_systemctl(self, mode: SuspendMode, *, binding_reason: str) -> SuspendResult:
        _, _, verb = _LOGIND_METHODS[mode]
        if running_under_tests():
            found = shutil.which("systemctl") or ""
            real = os.path.realpath(found).startswith(("/usr/", "/bin/", "/sbin/", "/lib/"))
            from ... import switches

            if not switches.allow_systemctl_in_tests() or real:
                raise RealSystemBusRefused(
                    f"refusing to run `systemctl {verb}` under test; put a fake systemctl first on PATH "
                    "and set LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS=1"
                )
        systemctl = shutil.which("systemctl")
        if systemctl is None:
            raise Unsupported(
                "suspend", f"systemctl was not found and the logind binding is inactive ({binding_reason})"
            )
        try:
            completed = subprocess.run(
                [systemctl, verb],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=SYSTEMCTL_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return SuspendResult(
                False, f"systemctl {verb} timed out after {SYSTEMCTL_TIMEOUT_SECONDS:.0f} s."
            )
        if completed.returncode == 0:
            return SuspendResult(True, f"Requested {mode} with systemctl {verb}.")
        stderr = completed.stderr.strip() or "no error output"
        return SuspendResult(
            False, f"systemctl {verb} failed with exit code {completed.returncode}: {stderr}"
        )
