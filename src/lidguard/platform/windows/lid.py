"""Windows lid switch state from the GUID_LIDSWITCH_STATE_CHANGE power-setting notification.

``PowerSettingRegisterNotification(GUID_LIDSWITCH_STATE_CHANGE, DEVICE_NOTIFY_CALLBACK, ...)`` calls
back (PBT_POWERSETTINGCHANGE) with a DWORD: 0 = closed, 1 = opened (REFERENCE 8.1, seed 001). There
is no API to ask for the state, so it is Unknown until the first callback (Windows sends one with
the current state soon after registering). The callback runs on a system thread: the state is
kept under a lock. Registration happens on the first read (or ``start``); ``close`` unregisters.
"""

from __future__ import annotations

import threading

from ..api import LidState
from .winapi import GUID_LIDSWITCH_STATE_CHANGE, WindowsApi, WindowsApiError

__all__ = ["WindowsLidStateReader", "lid_state_from_broadcast"]


def lid_state_from_broadcast(value: int) -> LidState:
    """0 -> Closed, 1 -> Open, anything else -> Unknown."""
    if value == 0:
        return LidState.CLOSED
    if value == 1:
        return LidState.OPEN
    return LidState.UNKNOWN


class WindowsLidStateReader:
    def __init__(self, api: WindowsApi) -> None:
        self._api = api
        self._lock = threading.Lock()
        self._state = LidState.UNKNOWN
        self._registration: int | None = None
        self._failure: str | None = None

    def start(self) -> None:
        """Registers for lid notifications once; a failure is remembered for ``describe``."""
        with self._lock:
            if self._registration is not None or self._failure is not None:
                return
            try:
                self._registration = self._api.power_setting_register_notification(
                    GUID_LIDSWITCH_STATE_CHANGE, self._on_broadcast)
            except WindowsApiError as error:
                self._failure = str(error)

    def _on_broadcast(self, value: int) -> None:
        state = lid_state_from_broadcast(value)
        with self._lock:
            self._state = state

    def read_lid_state(self) -> LidState:
        self.start()
        with self._lock:
            return self._state

    def describe(self) -> str:
        self.start()
        if self._failure is not None:
            return f"unavailable: lid notifications could not be registered ({self._failure}); the lid reads Unknown"
        return f"available (GUID_LIDSWITCH_STATE_CHANGE notifications; now {self.read_lid_state().value})"

    def close(self) -> None:
        with self._lock:
            registration, self._registration = self._registration, None
            self._state = LidState.UNKNOWN
        if registration is not None:
            try:
                self._api.power_setting_unregister_notification(registration)
            except WindowsApiError:
                pass  # the registration ends with the process anyway
