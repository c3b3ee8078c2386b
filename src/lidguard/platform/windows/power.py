"""Keep-awake protection and the lid-close policy on Windows.

Protection is one power request object (``PowerCreateRequest`` with a REASON_CONTEXT simple string =
the PowerRequest reason) on which ``PowerSetRequest`` sets SystemRequired (PreventSystemSleep),
AwayModeRequired (PreventAwayModeSleep) and DisplayRequired (PreventDisplaySleep); release clears
each one and closes the handle (REFERENCE 8.1; learn.microsoft.com "PowerSetRequest"). A changed
request gets a new object before the old one is released (make-before-break, by the runtime's
``ProtectionCoordinator``). The requests die with the process, and sleep idle timeouts are never
touched, so a crashed runtime cannot leave the machine's idle policy changed.

The lid-close policy is the LIDACTION power setting (subgroup 4f971e89-..., setting 5ca83367-...;
0 Do Nothing, 1 Sleep, 2 Hibernate, 3 Shut Down) of the active scheme: read AC and DC together,
write 0 to both, re-apply the scheme with ``PowerSetActiveScheme``; restore writes the backed-up
values to the scheme captured at backup time. The backup itself (once only, restore only from the
JSON) is the runtime's job (``runtime/protection.py``): this module never decides what to restore.
"""

from __future__ import annotations

import threading

from ..api import LidActionSnapshot, LidPolicyRefused, ProtectionRequest
from .winapi import (
    ERROR_ACCESS_DENIED,
    LIDACTION_SETTING,
    LIDACTION_SUBGROUP,
    POWER_REQUEST_AWAY_MODE_REQUIRED,
    POWER_REQUEST_DISPLAY_REQUIRED,
    POWER_REQUEST_SYSTEM_REQUIRED,
    WindowsApi,
    WindowsApiError,
)

__all__ = ["LID_ACTION_DO_NOTHING", "PowerRequestHandle", "WindowsLidPolicy", "WindowsPowerRequests",
           "request_types_for"]

LID_ACTION_DO_NOTHING = 0
WINDOWS_LID_HINT = ("the lid-close action (LIDACTION of the power scheme) cannot be changed: access is denied "
                    "(a group policy or an administrator locks the power settings)")
DEFAULT_REASON = "LidGuard is keeping the system awake while an agent session is running."
_REQUEST_NAMES = {
    POWER_REQUEST_SYSTEM_REQUIRED: "SystemRequired",
    POWER_REQUEST_AWAY_MODE_REQUIRED: "AwayModeRequired",
    POWER_REQUEST_DISPLAY_REQUIRED: "DisplayRequired",
}


def request_types_for(request: ProtectionRequest) -> list[int]:
    """The POWER_REQUEST_TYPE values to set, in the order they are set."""
    kinds = []
    if request.prevent_system_sleep:
        kinds.append(POWER_REQUEST_SYSTEM_REQUIRED)
    if request.prevent_away_mode_sleep:
        kinds.append(POWER_REQUEST_AWAY_MODE_REQUIRED)
    if request.prevent_display_sleep:
        kinds.append(POWER_REQUEST_DISPLAY_REQUIRED)
    return kinds


class PowerRequestHandle:
    """One power request object with the types set on it; ``release`` is idempotent and thread-safe.

    Release clears every type and closes the handle even when one step fails (the first failure is
    raised afterwards, so the runtime logs it): closing the handle ends the request in any case.
    """

    def __init__(self, api: WindowsApi, handle: int | None, kinds: list[int], description: str) -> None:
        self._api = api
        self._handle = handle
        self._kinds = list(kinds)
        self._lock = threading.Lock()
        self.description = description

    @property
    def held(self) -> bool:
        return self._handle is not None

    def release(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return
        _clear_and_close(self._api, handle, self._kinds)


def _clear_and_close(api: WindowsApi, handle: int, kinds: list[int]) -> None:
    errors: list[WindowsApiError] = []
    for kind in kinds:
        try:
            api.power_clear_request(handle, kind)
        except WindowsApiError as error:
            errors.append(error)
    try:
        api.close_handle(handle)
    except WindowsApiError as error:
        errors.append(error)
    if errors:
        raise errors[0]


class WindowsPowerRequests:
    """PowerRequests over PowerCreateRequest/PowerSetRequest/PowerClearRequest."""

    def __init__(self, api: WindowsApi) -> None:
        self._api = api
        self._handles: list[PowerRequestHandle] = []
        self._lock = threading.Lock()

    def apply(self, request: ProtectionRequest) -> PowerRequestHandle:
        kinds = request_types_for(request)
        if not kinds:
            return PowerRequestHandle(self._api, None, [],
                                      "nothing to block (no sleep or display protection requested)")
        handle = self._api.power_create_request(request.reason.strip() or DEFAULT_REASON)
        done: list[int] = []
        try:
            for kind in kinds:
                self._api.power_set_request(handle, kind)
                done.append(kind)
        except WindowsApiError:
            try:
                _clear_and_close(self._api, handle, done)
            except WindowsApiError:
                pass  # the set failure is the one worth reporting
            raise
        names = "+".join(_REQUEST_NAMES[kind] for kind in kinds)
        power_handle = PowerRequestHandle(self._api, handle, kinds, f"power request {names} (handle {handle:#x})")
        with self._lock:
            self._handles = [known for known in self._handles if known.held] + [power_handle]
        return power_handle

    def describe(self) -> str:
        return "available (PowerCreateRequest + PowerSetRequest SystemRequired/AwayModeRequired/DisplayRequired)"

    def close(self) -> None:
        """Releases every request this object made (each release is idempotent)."""
        with self._lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            try:
                handle.release()
            except WindowsApiError:
                pass  # the process is closing: its handles close with it anyway


class WindowsLidPolicy:
    """LidPolicy over the LIDACTION setting of a power scheme (AC and DC values)."""

    def __init__(self, api: WindowsApi) -> None:
        self._api = api

    def read_lid_actions(self) -> LidActionSnapshot:
        scheme = self._api.power_get_active_scheme()
        ac = self._api.power_read_value_index(scheme, LIDACTION_SUBGROUP, LIDACTION_SETTING, ac=True)
        dc = self._api.power_read_value_index(scheme, LIDACTION_SUBGROUP, LIDACTION_SETTING, ac=False)
        return LidActionSnapshot(scheme, ac, dc)

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        """Raises ``LidPolicyRefused`` when Windows denies the first write (access denied: a group
        policy or an administrator locks the power scheme), when nothing has changed yet."""
        try:
            self._api.power_write_value_index(snapshot.power_scheme_identifier, LIDACTION_SUBGROUP,
                                              LIDACTION_SETTING, LID_ACTION_DO_NOTHING, ac=True)
        except WindowsApiError as error:
            if error.winerror == ERROR_ACCESS_DENIED:
                raise LidPolicyRefused(WINDOWS_LID_HINT, str(error)) from error
            raise
        self._write(snapshot.power_scheme_identifier, None, LID_ACTION_DO_NOTHING)

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        self._write(snapshot.power_scheme_identifier, snapshot.alternating_current_action,
                    snapshot.direct_current_action)

    def drop_runtime_hold(self) -> None:
        """Nothing is held by the process: the setting stays as written until a restore."""

    def describe(self) -> str:
        try:
            snapshot = self.read_lid_actions()
        except WindowsApiError as error:
            return f"unavailable: cannot read LIDACTION ({error})"
        return (f"available (LIDACTION of scheme {snapshot.power_scheme_identifier}: "
                f"AC {snapshot.alternating_current_action}, DC {snapshot.direct_current_action})")

    def _write(self, scheme: str, ac: int | None, dc: int | None) -> None:
        if ac is not None:
            self._api.power_write_value_index(scheme, LIDACTION_SUBGROUP, LIDACTION_SETTING, ac, ac=True)
        if dc is not None:
            self._api.power_write_value_index(scheme, LIDACTION_SUBGROUP, LIDACTION_SETTING, dc, ac=False)
        self._api.power_set_active_scheme(scheme)  # written values take effect when the scheme is applied
