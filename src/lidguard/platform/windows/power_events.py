"""Power-source change notifications on Windows: power setting notifications of powrprof.

``PowerSettingRegisterNotification(GUID_ACDC_POWER_SOURCE, DEVICE_NOTIFY_CALLBACK, ...)`` (AC,
battery or UPS) and the same for ``GUID_BATTERY_PERCENTAGE_REMAINING`` (the battery floor reacts)
call back on a system thread, through ``winapi.py``. The callback only writes one byte into a
socket pair (non-blocking: when the buffer is full a wake is pending anyway); the event loop waits
on the other end (``anyio.wait_readable``; on Windows the loop can wait on sockets only). Windows
calls back once with the current value right after registering: one early read, harmless.

``close`` unregisters both and closes the pair; a callback racing with it finds the pair closed
(under a lock) and does nothing.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading

import anyio

from .winapi import GUID_ACDC_POWER_SOURCE, GUID_BATTERY_PERCENTAGE_REMAINING, WindowsApi, WindowsApiError

__all__ = ["MAX_RECEIVES_PER_WAKE", "POWER_SETTINGS", "PowerSettingChanges"]

POWER_SETTINGS = (GUID_ACDC_POWER_SOURCE, GUID_BATTERY_PERCENTAGE_REMAINING)
MAX_RECEIVES_PER_WAKE = 16
RECEIVE_BYTES = 4096


class PowerSettingChanges:
    """``wait()`` returns after a power-source or battery-percentage notification; ``close()`` is
    idempotent and never raises. Registers at once; ``WindowsApiError`` (an ``OSError``) when refused."""

    def __init__(self, api: WindowsApi) -> None:
        self._api = api
        self._lock = threading.Lock()
        self._receive, self._send = socket.socketpair()
        self._registrations: list[int] = []
        self._closed = False
        try:
            self._receive.setblocking(False)
            self._send.setblocking(False)
            for setting in POWER_SETTINGS:
                self._registrations.append(api.power_setting_register_notification(setting, self._on_notification))
        except BaseException:
            self.close()
            raise

    def _on_notification(self, _value: int) -> None:
        """A system thread: one byte into the pair; never raises into Windows."""
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(OSError):  # BlockingIOError: the buffer is full, a wake is pending
                self._send.send(b"\x01")

    async def wait(self) -> None:
        while True:
            if self._closed:
                raise OSError(errno.EBADF, "the power-source change listener is closed")
            if self._drain():
                return
            await anyio.wait_readable(self._receive)

    def _drain(self) -> bool:
        changed = False
        for _ in range(MAX_RECEIVES_PER_WAKE):
            try:
                data = self._receive.recv(RECEIVE_BYTES)
            except (BlockingIOError, InterruptedError):
                return changed
            if not data:
                raise OSError(errno.EPIPE, "the power-setting notification pair closed")
            changed = True
        return changed

    def close(self) -> None:
        registrations, self._registrations = self._registrations, []
        for registration in registrations:
            with contextlib.suppress(WindowsApiError):  # a registration ends with the process anyway
                self._api.power_setting_unregister_notification(registration)
        with self._lock:
            self._closed = True
            self._send.close()
            self._receive.close()
