"""The Windows API surface lidguard uses, as a typed Protocol, plus its constants and error type.

``_binding.CffiWindowsApi`` implements :class:`WindowsApi` over ``native/windows_cdef.h`` (cffi ABI
mode, on Windows only); tests implement it with a recording fake, so every backend module runs on
Linux. Each method is one Win32 call (or one batched job such as a whole process snapshot) with
plain Python values in and out; a failing call raises :class:`WindowsApiError` carrying the Win32
error code from ``GetLastError`` (or the code the function returned). No policy lives behind it.

Stdlib only: the named-pipe client on the hook path imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

__all__ = [
    "ERROR_ACCESS_DENIED",
    "ERROR_FILE_NOT_FOUND",
    "ERROR_INVALID_HANDLE",
    "ERROR_INVALID_PARAMETER",
    "ERROR_NOT_ALL_ASSIGNED",
    "ERROR_NOT_SUPPORTED",
    "ERROR_PIPE_BUSY",
    "GUID_ACDC_POWER_SOURCE",
    "GUID_BATTERY_PERCENTAGE_REMAINING",
    "GUID_LIDSWITCH_STATE_CHANGE",
    "LIDACTION_SETTING",
    "LIDACTION_SUBGROUP",
    "SM_CMONITORS",
    "WindowsApi",
    "WindowsApiError",
    "describe_error_code",
]

# winerror.h
ERROR_FILE_NOT_FOUND = 2
ERROR_ACCESS_DENIED = 5
ERROR_INVALID_HANDLE = 6
ERROR_INVALID_PARAMETER = 87
ERROR_NOT_SUPPORTED = 50
ERROR_SEM_TIMEOUT = 121
ERROR_PIPE_BUSY = 231
ERROR_NO_DATA = 232
ERROR_PIPE_CONNECTED = 535
ERROR_NOT_ALL_ASSIGNED = 1300

_ERROR_TEXT = {
    ERROR_FILE_NOT_FOUND: "The system cannot find the file specified.",
    ERROR_ACCESS_DENIED: "Access is denied.",
    ERROR_INVALID_HANDLE: "The handle is invalid.",
    ERROR_INVALID_PARAMETER: "The parameter is incorrect.",
    ERROR_NOT_SUPPORTED: "The request is not supported.",
    ERROR_SEM_TIMEOUT: "The semaphore timeout period has expired.",
    ERROR_PIPE_BUSY: "All pipe instances are busy.",
    ERROR_NO_DATA: "The pipe is being closed.",
    ERROR_NOT_ALL_ASSIGNED: "Not all privileges or groups referenced are assigned to the caller.",
}

# minwinbase.h POWER_REQUEST_TYPE
POWER_REQUEST_DISPLAY_REQUIRED = 0
POWER_REQUEST_SYSTEM_REQUIRED = 1
POWER_REQUEST_AWAY_MODE_REQUIRED = 2

# Lid-close action (seed 001 "Lid Close Policy"; powercfg /q: SUB_BUTTONS / LIDACTION).
LIDACTION_SUBGROUP = "4f971e89-eebd-4455-a8de-9e59040e7347"
LIDACTION_SETTING = "5ca83367-6e45-459f-a27b-476b1d01c936"
# winnt.h GUID_LIDSWITCH_STATE_CHANGE: data 0 = closed, 1 = opened (REFERENCE 8.1).
GUID_LIDSWITCH_STATE_CHANGE = "ba3e0f4d-b817-4094-a2d1-d56379e6a0f3"
# winnt.h power setting notifications of the power source: GUID_ACDC_POWER_SOURCE (data 0 = AC,
# 1 = battery, 2 = UPS) and GUID_BATTERY_PERCENTAGE_REMAINING (data 0-100).
GUID_ACDC_POWER_SOURCE = "5d3e9a59-e9d5-4b00-a6bd-ff34ff516548"
GUID_BATTERY_PERCENTAGE_REMAINING = "a7ad8041-b45a-4cae-87a3-eecbb468a9e1"

# winuser.h
SM_CMONITORS = 80

# wingdi.h DISPLAYCONFIG_VIDEO_OUTPUT_TECHNOLOGY values of built-in panels (REFERENCE 8.1).
OUTPUT_TECHNOLOGY_LVDS = 6
OUTPUT_TECHNOLOGY_DISPLAYPORT_EMBEDDED = 11
OUTPUT_TECHNOLOGY_UDI_EMBEDDED = 13
OUTPUT_TECHNOLOGY_INTERNAL = 0x80000000
INTERNAL_OUTPUT_TECHNOLOGIES = frozenset(
    {OUTPUT_TECHNOLOGY_LVDS, OUTPUT_TECHNOLOGY_DISPLAYPORT_EMBEDDED, OUTPUT_TECHNOLOGY_UDI_EMBEDDED,
     OUTPUT_TECHNOLOGY_INTERNAL}
)

# synchapi.h / winbase.h
WAIT_OBJECT_0 = 0
WAIT_TIMEOUT = 0x102
WAIT_FAILED = 0xFFFFFFFF


def describe_error_code(code: int) -> str:
    return _ERROR_TEXT.get(code, f"Windows error {code}.")


class WindowsApiError(OSError):
    """A Win32 call failed. ``winerror`` is the Windows error code, ``function`` the API name.

    ``OSError.winerror`` exists only on Windows, so it is set here explicitly (tests run on Linux).
    """

    def __init__(self, function: str, code: int, detail: str = "") -> None:
        text = f"{function} failed with Windows error {code}: {describe_error_code(code)}"
        super().__init__(text + (f" ({detail})" if detail else ""))
        self.function = function
        self.winerror = code


class WindowsApi(Protocol):
    """Exactly the Win32 calls lidguard makes; each names the API it wraps."""

    # kernel32: PowerCreateRequest (REASON_CONTEXT simple string), PowerSetRequest,
    # PowerClearRequest, CloseHandle.
    def power_create_request(self, reason: str) -> int: ...
    def power_set_request(self, handle: int, request_type: int) -> None: ...
    def power_clear_request(self, handle: int, request_type: int) -> None: ...
    def close_handle(self, handle: int) -> None: ...

    # powrprof: PowerGetActiveScheme, PowerRead/WriteAC/DCValueIndex, PowerSetActiveScheme (GUID text).
    def power_get_active_scheme(self) -> str: ...
    def power_read_value_index(self, scheme: str, subgroup: str, setting: str, *, ac: bool) -> int: ...
    def power_write_value_index(self, scheme: str, subgroup: str, setting: str, value: int, *, ac: bool) -> None: ...
    def power_set_active_scheme(self, scheme: str) -> None: ...

    # powrprof: PowerSettingRegisterNotification(DEVICE_NOTIFY_CALLBACK) with a cffi callback that
    # hands the setting's first DWORD of data to ``callback``; PowerSettingUnregisterNotification.
    def power_setting_register_notification(self, setting: str, callback: Callable[[int], None]) -> int: ...
    def power_setting_unregister_notification(self, registration: int) -> None: ...

    # advapi32: OpenProcessToken + LookupPrivilegeValueW + AdjustTokenPrivileges(SeShutdownPrivilege);
    # raises with ERROR_NOT_ALL_ASSIGNED when the token lacks the privilege.
    def enable_shutdown_privilege(self) -> None: ...
    # powrprof: SetSuspendState(hibernate, FALSE, FALSE); GetPwrCapabilities().AoAc.
    def set_suspend_state(self, *, hibernate: bool) -> None: ...
    def modern_standby_present(self) -> bool: ...
    # kernel32: GetSystemPowerStatus -> (ACLineStatus, BatteryFlag, BatteryLifePercent).
    def get_system_power_status(self) -> tuple[int, int, int]: ...
    # user32 GetLastInputInfo + kernel32 GetTickCount: milliseconds since this session's last input.
    def idle_milliseconds(self) -> int: ...
    # user32: SendNotifyMessageW(HWND_BROADCAST, WM_SYSCOMMAND, SC_MONITORPOWER, 2) (display off).
    def broadcast_monitor_off(self) -> None: ...

    # user32: GetSystemMetrics; QueryDisplayConfig(QDC_ONLY_ACTIVE_PATHS) -> [(outputTechnology,
    # targetAvailable)] per active path.
    def get_system_metrics(self, index: int) -> int: ...
    def query_active_display_paths(self) -> list[tuple[int, bool]]: ...

    # kernel32 CreateToolhelp32Snapshot + Process32FirstW/NextW -> [(pid, ppid, exe file name)];
    # ntdll NtQueryInformationProcess(ProcessBasicInformation) + ReadProcessMemory of the PEB's
    # ProcessParameters.CommandLine, for every pid in one call (pids it cannot read are left out).
    def snapshot_processes(self) -> list[tuple[int, int, str]]: ...
    def read_command_lines(self, pids: Sequence[int]) -> dict[int, str]: ...
    # kernel32 OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION), WaitForSingleObject.
    def open_process_for_wait(self, pid: int) -> int: ...
    def wait_for_single_object(self, handle: int, timeout_ms: int) -> int: ...
    # kernel32 OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION) + GetProcessTimes + CloseHandle ->
    # (creation time, kernel time, user time), FILETIME 100 ns units. ERROR_INVALID_PARAMETER: no such
    # process; ERROR_ACCESS_DENIED: another user's (or a protected) process.
    def process_times(self, pid: int) -> tuple[int, int, int]: ...
    # kernel32 OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_TERMINATE) (the
    # watchdog's handle on its runtime), GetProcessTimes on a handle (creation time, FILETIME units),
    # TerminateProcess.
    def open_process_for_watchdog(self, pid: int) -> int: ...
    def process_creation_time(self, handle: int) -> int: ...
    def terminate_process(self, handle: int, exit_code: int) -> None: ...

    # advapi32: the string SID of this process's user, and of another process's user.
    def current_user_sid(self) -> str: ...
    def process_user_sid(self, pid: int) -> str: ...

    # winsound.PlaySound (SND_ALIAS or SND_FILENAME, SND_SYNC); Core Audio default render endpoint
    # IAudioEndpointVolume master scalar (0.0-1.0) and mute, through ole32 COM.
    def play_sound(self, sound: str, *, alias: bool) -> None: ...
    def get_endpoint_volume(self) -> tuple[float, bool]: ...
    def set_endpoint_volume(self, scalar: float) -> None: ...
    def set_endpoint_mute(self, muted: bool) -> None: ...

    # kernel32 named pipes: CreateNamedPipeW with a DACL from SDDL (FILE_FLAG_FIRST_PIPE_INSTANCE on
    # request), ConnectNamedPipe, DisconnectNamedPipe, WaitNamedPipeW + CreateFileW, ReadFile,
    # WriteFile, FlushFileBuffers, GetNamedPipeServerProcessId / GetNamedPipeClientProcessId.
    def create_named_pipe(self, name: str, sddl: str, *, buffer_size: int, first_instance: bool) -> int: ...
    def connect_named_pipe(self, handle: int) -> None: ...
    def disconnect_named_pipe(self, handle: int) -> None: ...
    def open_named_pipe(self, name: str, timeout_ms: int) -> int: ...
    def read_file(self, handle: int, size: int) -> bytes: ...
    def write_file(self, handle: int, data: bytes) -> None: ...
    def pipe_server_process_id(self, handle: int) -> int: ...
    def pipe_client_process_id(self, handle: int) -> int: ...
