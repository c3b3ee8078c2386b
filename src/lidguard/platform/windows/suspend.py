"""Immediate sleep / hibernate on Windows: SeShutdownPrivilege, then SetSuspendState.

``SetSuspendState(hibernate, FALSE, FALSE)`` needs SeShutdownPrivilege enabled in the process token
(OpenProcessToken, LookupPrivilegeValueW, AdjustTokenPrivileges; ERROR_NOT_ALL_ASSIGNED means the
user does not hold it). On Modern Standby (S0 low power idle) machines a Sleep request fails with
ERROR_NOT_SUPPORTED (seed 001): the display is turned off instead (SC_MONITORPOWER broadcast, as
the original tool does; with S0 the machine then enters standby on its own) and the result says
so, with guidance. Hibernate is unaffected by S0 (it fails only when hibernation is off).
"""

from __future__ import annotations

from ..api import SuspendBlocker, SuspendBlockerChanges, SuspendMode, SuspendResult, Unsupported
from .thermal import CommandRunner, run_command
from .winapi import ERROR_NOT_ALL_ASSIGNED, ERROR_NOT_SUPPORTED, WindowsApi, WindowsApiError

__all__ = ["MODERN_STANDBY_GUIDANCE", "WindowsSuspender"]

MODERN_STANDBY_GUIDANCE = (
    "This PC uses Modern Standby (S0 low power idle), where Windows does not accept a direct Sleep "
    "request; set SuspendMode to Hibernate (after `powercfg /hibernate on`) to power down on lid close."
)
PRIVILEGE_GUIDANCE = "The user account lacks SeShutdownPrivilege (Local Security Policy: Shut down the system)."


class WindowsSuspender:
    def __init__(self, api: WindowsApi, runner: CommandRunner = run_command) -> None:
        self._api = api
        self._runner = runner

    def list_blockers(self) -> list[SuspendBlocker]:
        """The SYSTEM section of ``powercfg /requests`` (``requests.py``)."""
        from .requests import read_system_requests

        return read_system_requests(self._api, self._runner)

    def blocker_changes(self) -> SuspendBlockerChanges:
        raise Unsupported("suspend_blocker_changes", "powercfg /requests is polled")

    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        """SetSuspendState is a forced sleep; other programs' requests are named in status only."""
        try:
            self._api.enable_shutdown_privilege()
        except WindowsApiError as error:
            hint = f" {PRIVILEGE_GUIDANCE}" if error.winerror == ERROR_NOT_ALL_ASSIGNED else ""
            return SuspendResult(False, f"Could not enable SeShutdownPrivilege: {error}.{hint}")
        hibernate = mode is SuspendMode.HIBERNATE
        try:
            self._api.set_suspend_state(hibernate=hibernate)
        except WindowsApiError as error:
            if error.winerror == ERROR_NOT_SUPPORTED and not hibernate:
                return self._modern_standby_fallback(error)
            return SuspendResult(False, f"SetSuspendState({mode.value}) failed: {error}")
        return SuspendResult(True, f"Requested {mode.value} with SetSuspendState.")

    def _modern_standby_fallback(self, error: WindowsApiError) -> SuspendResult:
        try:
            modern_standby = self._api.modern_standby_present()
        except WindowsApiError:
            modern_standby = False
        if not modern_standby:
            return SuspendResult(False, f"SetSuspendState(Sleep) failed: {error}. Sleep (S3) is not available here.")
        try:
            self._api.broadcast_monitor_off()
            done = "The display was turned off instead."
        except WindowsApiError as broadcast_error:
            done = f"Turning the display off failed too ({broadcast_error})."
        return SuspendResult(False, f"SetSuspendState(Sleep) failed: {error}. {done} {MODERN_STANDBY_GUIDANCE}")

    def describe(self) -> str:
        try:
            modern = self._api.modern_standby_present()
        except WindowsApiError as error:
            return f"available (SetSuspendState; power capabilities unreadable: {error})"
        note = "; Modern Standby: Sleep requests are refused, use Hibernate" if modern else ""
        return f"available (SeShutdownPrivilege + SetSuspendState{note})"
