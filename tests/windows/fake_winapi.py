"""A recording fake of :class:`lidguard.platform.windows.winapi.WindowsApi`.

Every call is appended to ``calls`` as ``(name, *arguments)``. ``fail(name, code)`` makes the next
call(s) of that name raise ``WindowsApiError`` with a real Win32 error code (ERROR_ACCESS_DENIED=5,
ERROR_INVALID_HANDLE=6, ERROR_NOT_SUPPORTED=50, ...). The simulated machine (power scheme values,
open power requests, lid notification callback, displays, processes, volume, pipes) is plain state.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lidguard.platform.windows.winapi import (
    ERROR_ACCESS_DENIED,
    ERROR_FILE_NOT_FOUND,
    ERROR_INVALID_HANDLE,
    ERROR_INVALID_PARAMETER,
    GUID_LIDSWITCH_STATE_CHANGE,
    LIDACTION_SETTING,
    LIDACTION_SUBGROUP,
    WAIT_OBJECT_0,
    WAIT_TIMEOUT,
    WindowsApiError,
)

BALANCED = "381b4222-f694-41f0-9685-ff5bb260df2e"
USER_SID = "S-1-5-21-1004336348-1177238915-682003330-1001"


class FakeWindowsApi:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self._failures: dict[str, list[int]] = {}
        self._handles = itertools.count(0x100, 4)
        self._lock = threading.Lock()
        # power requests: handle -> set of request types; closed handles
        self.requests: dict[int, set[int]] = {}
        self.reasons: dict[int, str] = {}
        self.closed: list[int] = []
        # power schemes: (scheme, ac) -> LIDACTION value
        self.active_scheme = BALANCED
        self.lid_values: dict[tuple[str, bool], int] = {(BALANCED, True): 1, (BALANCED, False): 1}
        # lid notifications
        self.notification_callbacks: dict[int, Callable[[int], None]] = {}
        self.notification_settings: dict[int, str] = {}
        # machine
        self.monitors = 1
        self.display_paths: list[tuple[int, bool]] = [(11, True)]
        self.modern_standby = False
        self.power_status = (1, 8, 80)
        self.idle_ms = 0  # GetLastInputInfo: milliseconds since the last input
        self.suspends: list[bool] = []
        self.processes: list[tuple[int, int, str]] = []
        self.command_lines: dict[int, str] = {}
        self.alive: set[int] = set()
        # GetProcessTimes: pid -> (creation, kernel, user) in 100 ns units; a pid missing here cannot be
        # opened (ERROR_INVALID_PARAMETER: gone); one in times_denied gives ERROR_ACCESS_DENIED
        self.times: dict[int, tuple[int, int, int]] = {}
        self.times_denied: set[int] = set()
        self.on_process_times: Callable[[int], None] | None = None
        self.process_sids: dict[int, str] = {}
        self.wait_handles: dict[int, int] = {}
        self.terminated: list[int] = []
        self.on_terminate: Callable[[int], None] | None = None
        self.volume = (0.4, True)
        self.sounds: list[tuple[str, bool]] = []
        # pipes: name -> queue of server-side handles waiting for a client
        self.pipe_listeners: dict[str, queue.Queue[int]] = {}
        self.pipe_peers: dict[int, int] = {}
        self.pipe_buffers: dict[int, queue.Queue[bytes]] = {}
        self.pipe_owner_pid: dict[int, int] = {}
        self.connected: dict[int, threading.Event] = {}

    # -- plumbing -----------------------------------------------------------------------------------
    def fail(self, name: str, code: int, *, times: int = 1) -> None:
        self._failures.setdefault(name, []).extend([code] * times)

    def _call(self, name: str, *arguments: Any) -> None:
        with self._lock:
            self.calls.append((name, *arguments))
            pending = self._failures.get(name)
            code = pending.pop(0) if pending else None
        if code is not None:
            raise WindowsApiError(name, code)

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]

    def _new_handle(self) -> int:
        return next(self._handles)

    # -- power requests -----------------------------------------------------------------------------
    def power_create_request(self, reason: str) -> int:
        self._call("PowerCreateRequest", reason)
        handle = self._new_handle()
        self.requests[handle] = set()
        self.reasons[handle] = reason
        return handle

    def power_set_request(self, handle: int, request_type: int) -> None:
        self._call("PowerSetRequest", handle, request_type)
        if handle not in self.requests:
            raise WindowsApiError("PowerSetRequest", ERROR_INVALID_HANDLE)
        self.requests[handle].add(request_type)

    def power_clear_request(self, handle: int, request_type: int) -> None:
        self._call("PowerClearRequest", handle, request_type)
        if handle not in self.requests:
            raise WindowsApiError("PowerClearRequest", ERROR_INVALID_HANDLE)
        self.requests[handle].discard(request_type)

    def close_handle(self, handle: int) -> None:
        self._call("CloseHandle", handle)
        self.requests.pop(handle, None)
        self.closed.append(handle)

    def active_requests(self) -> list[set[int]]:
        return [kinds for kinds in self.requests.values() if kinds]

    # -- schemes ------------------------------------------------------------------------------------
    def power_get_active_scheme(self) -> str:
        self._call("PowerGetActiveScheme")
        return self.active_scheme

    def power_read_value_index(self, scheme: str, subgroup: str, setting: str, *, ac: bool) -> int:
        self._call("PowerReadACValueIndex" if ac else "PowerReadDCValueIndex", scheme, subgroup, setting)
        assert (subgroup, setting) == (LIDACTION_SUBGROUP, LIDACTION_SETTING)
        return self.lid_values.get((scheme, ac), 1)

    def power_write_value_index(self, scheme: str, subgroup: str, setting: str, value: int, *, ac: bool) -> None:
        self._call("PowerWriteACValueIndex" if ac else "PowerWriteDCValueIndex", scheme, value)
        assert (subgroup, setting) == (LIDACTION_SUBGROUP, LIDACTION_SETTING)
        self.lid_values[(scheme, ac)] = value

    def power_set_active_scheme(self, scheme: str) -> None:
        self._call("PowerSetActiveScheme", scheme)
        self.active_scheme = scheme

    def power_setting_register_notification(self, setting: str, callback: Callable[[int], None]) -> int:
        self._call("PowerSettingRegisterNotification", setting)
        registration = self._new_handle()
        with self._lock:
            self.notification_callbacks[registration] = callback
            self.notification_settings[registration] = setting
        return registration

    def power_setting_unregister_notification(self, registration: int) -> None:
        self._call("PowerSettingUnregisterNotification", registration)
        with self._lock:
            self.notification_callbacks.pop(registration)
            self.notification_settings.pop(registration)

    def broadcast_lid(self, value: int) -> None:
        """What Windows does on a lid change: call every lid callback with the DWORD."""
        self.broadcast_setting(GUID_LIDSWITCH_STATE_CHANGE, value)

    def broadcast_setting(self, setting: str, value: int) -> None:
        """PBT_POWERSETTINGCHANGE for ``setting``: every callback registered for it, with the DWORD
        (call it from another thread to be Windows: callbacks run on a system thread)."""
        with self._lock:
            callbacks = [callback for registration, callback in self.notification_callbacks.items()
                         if self.notification_settings[registration] == setting]
        for callback in callbacks:
            callback(value)

    # -- suspend and power status -------------------------------------------------------------------
    def enable_shutdown_privilege(self) -> None:
        self._call("AdjustTokenPrivileges", "SeShutdownPrivilege")

    def set_suspend_state(self, *, hibernate: bool) -> None:
        self._call("SetSuspendState", hibernate)
        self.suspends.append(hibernate)

    def modern_standby_present(self) -> bool:
        self._call("GetPwrCapabilities")
        return self.modern_standby

    def idle_milliseconds(self) -> int:
        self._call("GetLastInputInfo")
        return self.idle_ms

    def get_system_power_status(self) -> tuple[int, int, int]:
        self._call("GetSystemPowerStatus")
        return self.power_status

    def broadcast_monitor_off(self) -> None:
        self._call("SendNotifyMessageW", "SC_MONITORPOWER", 2)

    # -- displays -----------------------------------------------------------------------------------
    def get_system_metrics(self, index: int) -> int:
        self._call("GetSystemMetrics", index)
        return self.monitors

    def query_active_display_paths(self) -> list[tuple[int, bool]]:
        self._call("QueryDisplayConfig")
        return list(self.display_paths)

    # -- processes ----------------------------------------------------------------------------------
    def snapshot_processes(self) -> list[tuple[int, int, str]]:
        self._call("CreateToolhelp32Snapshot")
        return list(self.processes)

    def read_command_lines(self, pids: Sequence[int]) -> dict[int, str]:
        self._call("NtQueryInformationProcess", tuple(pids))
        return {pid: self.command_lines[pid] for pid in pids if pid in self.command_lines}

    def open_process_for_wait(self, pid: int) -> int:
        self._call("OpenProcess", pid)
        if pid not in self.alive:
            raise WindowsApiError("OpenProcess", ERROR_INVALID_PARAMETER)
        handle = self._new_handle()
        self.wait_handles[handle] = pid
        return handle

    def process_times(self, pid: int) -> tuple[int, int, int]:
        self._call("GetProcessTimes", pid)
        if self.on_process_times is not None:
            self.on_process_times(pid)  # lets a test change the machine between two reads
        if pid in self.times_denied:
            raise WindowsApiError("OpenProcess", ERROR_ACCESS_DENIED)
        if pid not in self.times:
            raise WindowsApiError("OpenProcess", ERROR_INVALID_PARAMETER)
        return self.times[pid]

    def open_process_for_watchdog(self, pid: int) -> int:
        self._call("OpenProcess", pid, "watchdog")
        if pid not in self.alive:
            raise WindowsApiError("OpenProcess", ERROR_INVALID_PARAMETER)
        handle = self._new_handle()
        self.wait_handles[handle] = pid
        return handle

    def process_creation_time(self, handle: int) -> int:
        self._call("GetProcessTimes", handle)
        if handle not in self.wait_handles:
            raise WindowsApiError("GetProcessTimes", ERROR_INVALID_HANDLE)
        return self.times[self.wait_handles[handle]][0]

    def terminate_process(self, handle: int, exit_code: int) -> None:
        self._call("TerminateProcess", handle, exit_code)
        pid = self.wait_handles[handle]
        if pid not in self.alive:
            raise WindowsApiError("TerminateProcess", ERROR_ACCESS_DENIED)  # what an exited process gives
        self.alive.discard(pid)
        self.terminated.append(pid)
        if self.on_terminate is not None:
            self.on_terminate(pid)  # lets a test end the real process standing in for it

    def wait_for_single_object(self, handle: int, timeout_ms: int) -> int:
        self._call("WaitForSingleObject", handle, timeout_ms)
        pid = self.wait_handles[handle]
        if pid in self.alive:
            if timeout_ms:
                threading.Event().wait(min(timeout_ms, 20) / 1000)  # a short real wait keeps the loop cheap
            return WAIT_TIMEOUT if pid in self.alive else WAIT_OBJECT_0
        return WAIT_OBJECT_0

    # -- users --------------------------------------------------------------------------------------
    def current_user_sid(self) -> str:
        self._call("GetTokenInformation", "self")
        return USER_SID

    def process_user_sid(self, pid: int) -> str:
        self._call("GetTokenInformation", pid)
        return self.process_sids.get(pid, USER_SID)

    # -- sound --------------------------------------------------------------------------------------
    def play_sound(self, sound: str, *, alias: bool) -> None:
        self._call("PlaySound", sound, alias)
        self.sounds.append((sound, alias))

    def get_endpoint_volume(self) -> tuple[float, bool]:
        self._call("GetMasterVolumeLevelScalar")
        return self.volume

    def set_endpoint_volume(self, scalar: float) -> None:
        self._call("SetMasterVolumeLevelScalar", scalar)
        self.volume = (scalar, self.volume[1])

    def set_endpoint_mute(self, muted: bool) -> None:
        self._call("SetMute", muted)
        self.volume = (self.volume[0], muted)

    # -- named pipes (an in-memory duplex pipe; one queue of bytes per direction) -------------------
    def create_named_pipe(self, name: str, sddl: str, *, buffer_size: int, first_instance: bool) -> int:
        self._call("CreateNamedPipeW", name, sddl, first_instance)
        handle = self._new_handle()
        self.pipe_buffers[handle] = queue.Queue()
        self.connected[handle] = threading.Event()
        self.pipe_listeners.setdefault(name, queue.Queue()).put(handle)
        return handle

    def connect_named_pipe(self, handle: int) -> None:
        self._call("ConnectNamedPipe", handle)
        self.connected[handle].wait(30)

    def disconnect_named_pipe(self, handle: int) -> None:
        self._call("DisconnectNamedPipe", handle)
        peer = self.pipe_peers.pop(handle, None)
        if peer is not None:
            self.pipe_buffers[peer].put(b"")

    def open_named_pipe(self, name: str, timeout_ms: int) -> int:
        self._call("CreateFileW", name)
        try:
            # setdefault: a client that comes before the first instance waits for it (WaitNamedPipe).
            server = self.pipe_listeners.setdefault(name, queue.Queue()).get(timeout=timeout_ms / 1000)
        except queue.Empty:
            raise WindowsApiError("CreateFileW", ERROR_FILE_NOT_FOUND) from None
        client = self._new_handle()
        self.pipe_buffers[client] = queue.Queue()
        self.pipe_peers[server], self.pipe_peers[client] = client, server
        self.pipe_owner_pid[client] = 4242
        self.connected[server].set()
        return client

    def read_file(self, handle: int, size: int) -> bytes:
        self._call("ReadFile", handle)
        return self.pipe_buffers[handle].get(timeout=30)

    def write_file(self, handle: int, data: bytes) -> None:
        self._call("WriteFile", handle, data)
        self.pipe_buffers[self.pipe_peers[handle]].put(data)

    def pipe_server_process_id(self, handle: int) -> int:
        self._call("GetNamedPipeServerProcessId", handle)
        return 1111

    def pipe_client_process_id(self, handle: int) -> int:
        self._call("GetNamedPipeClientProcessId", handle)
        return self.pipe_owner_pid[self.pipe_peers[handle]]
