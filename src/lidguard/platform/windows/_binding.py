"""The only importer of ``lidguard._native._windows``: Win32 calls over ``native/windows_cdef.h``.

Dumb on purpose (no policy, no retries, no logging): :class:`CffiWindowsApi` implements
:class:`~lidguard.platform.windows.winapi.WindowsApi`, one method per call (or per batched job),
plain values in and out. A failure becomes ``WindowsApiError`` through :func:`_raise_last_error`,
which reads the thread's last error as cffi saved it right after the call (``ffi.getwinerror``),
the same way trio's Windows layer does.

The DLLs are opened lazily on Windows only; importing this module anywhere imports no Windows-only
module. :func:`load_windows_api` says why the binding is unavailable (another OS, generated module
missing or stale, ``LIDGUARD_NO_EXTENSIONS=1``, or a test process: tests never reach live power
policy, so the live binding refuses to load under ``LIDGUARD_TEST_MODE=1``/pytest).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from .winapi import (
    ERROR_NOT_ALL_ASSIGNED,
    ERROR_PIPE_BUSY,
    WindowsApi,
    WindowsApiError,
)

__all__ = ["EXPECTED_ABI_VERSION", "CffiWindowsApi", "binding_status", "load_windows_api"]

# Must equal LIDGUARD_WINDOWS_ABI_VERSION in native/windows_cdef.h.
EXPECTED_ABI_VERSION = 3
_INVALID_HANDLE_VALUE = 2**64 - 1 if sys.maxsize > 2**32 else 2**32 - 1

# winnt.h / processthreadsapi.h / winbase.h access rights and flags.
_SYNCHRONIZE = 0x00100000
_PROCESS_QUERY_INFORMATION = 0x0400
_PROCESS_VM_READ = 0x0010
_PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
_PROCESS_TERMINATE = 0x0001
_TOKEN_QUERY = 0x0008
_TOKEN_ADJUST_PRIVILEGES = 0x0020
_SE_PRIVILEGE_ENABLED = 0x00000002
_TOKEN_USER_CLASS = 1  # TOKEN_INFORMATION_CLASS TokenUser
_TH32CS_SNAPPROCESS = 0x00000002
_POWER_REQUEST_CONTEXT_VERSION = 0
_POWER_REQUEST_CONTEXT_SIMPLE_STRING = 0x1
_DEVICE_NOTIFY_CALLBACK = 2
_PBT_POWERSETTINGCHANGE = 0x8013
_QDC_ONLY_ACTIVE_PATHS = 0x00000002
_ERROR_INSUFFICIENT_BUFFER = 122
_HWND_BROADCAST = 0xFFFF
_WM_SYSCOMMAND = 0x0112
_SC_MONITORPOWER = 0xF170
_PIPE_ACCESS_DUPLEX = 0x00000003
_FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000
_PIPE_TYPE_BYTE = 0x0
_PIPE_READMODE_BYTE = 0x0
_PIPE_WAIT = 0x0
_PIPE_REJECT_REMOTE_CLIENTS = 0x00000008
_PIPE_UNLIMITED_INSTANCES = 255
_GENERIC_READ = 0x80000000
_GENERIC_WRITE = 0x40000000
_OPEN_EXISTING = 3
_SDDL_REVISION_1 = 1
_CLSCTX_ALL = 0x17
_COINIT_MULTITHREADED = 0x0
_RPC_E_CHANGED_MODE = -2147417850
# x64/ARM64 layouts (winternl.h; offsets as documented for PEB.ProcessParameters and
# RTL_USER_PROCESS_PARAMETERS.CommandLine on 64-bit Windows).
_PEB_PROCESS_PARAMETERS_OFFSET = 0x20
_PARAMETERS_COMMAND_LINE_OFFSET = 0x70
# mmdeviceapi.h / endpointvolume.h identifiers.
_CLSID_MM_DEVICE_ENUMERATOR = "bcde0395-e52f-467c-8e3d-c4579291692e"
_IID_IMM_DEVICE_ENUMERATOR = "a95664d2-9614-4f35-a746-de8db63617e6"
_IID_IAUDIO_ENDPOINT_VOLUME = "5cdf2c82-841e-4546-9722-0cf74078229a"
_E_RENDER = 0
_E_CONSOLE = 0


def running_under_tests() -> bool:
    from ... import switches

    return bool(os.environ.get("PYTEST_CURRENT_TEST")) or switches.in_test_mode()


@functools.cache
def _load_module() -> tuple[Any | None, str]:
    if sys.platform != "win32":
        return None, f"the Win32 API exists only on Windows (this is {sys.platform})"
    from ..._native import extensions_disabled

    if extensions_disabled():
        return None, "disabled by LIDGUARD_NO_EXTENSIONS"
    if running_under_tests():
        return None, "refused under test (tests never change live power policy)"
    from ..._native import RequiredExtensionError, extensions_required

    try:
        module = importlib.import_module("lidguard._native._windows")
    except ImportError as error:
        if extensions_required():  # release wheels: a missing module is a build error, not a fallback
            raise RequiredExtensionError("_windows", f"not built or not importable ({error})") from error
        return None, f"cffi module lidguard._native._windows not built ({error})"
    try:
        found = module.ffi.integer_const("LIDGUARD_WINDOWS_ABI_VERSION")
    except (AttributeError, module.ffi.error):
        found = None
    if found != EXPECTED_ABI_VERSION:
        if extensions_required():
            raise RequiredExtensionError("_windows", f"stale build (ABI {found}, expected {EXPECTED_ABI_VERSION})")
        return None, f"stale cffi module (ABI {found}, expected {EXPECTED_ABI_VERSION}); rebuild lidguard"
    return module.ffi, "kernel32/powrprof/advapi32/user32/ntdll/ole32 via cffi"


def binding_status() -> tuple[bool, str]:
    ffi, reason = _load_module()
    return ffi is not None, reason


def load_windows_api() -> tuple[WindowsApi | None, str]:
    """(the live binding, reason) or (None, why not)."""
    ffi, reason = _load_module()
    if ffi is None:
        return None, reason
    return CffiWindowsApi(ffi), reason


class CffiWindowsApi:
    """WindowsApi over the generated cffi module (Windows only)."""

    def __init__(self, ffi: Any) -> None:
        self._ffi = ffi
        self._kernel32 = ffi.dlopen("kernel32.dll")
        self._powrprof = ffi.dlopen("powrprof.dll")
        self._advapi32 = ffi.dlopen("advapi32.dll")
        self._user32 = ffi.dlopen("user32.dll")
        self._ntdll = ffi.dlopen("ntdll.dll")
        self._ole32 = ffi.dlopen("ole32.dll")
        self._callbacks: dict[int, tuple[Any, Any]] = {}  # registration -> (cffi callback, parameters)

    # -- helpers ------------------------------------------------------------------------------------
    def _raise_last_error(self, function: str) -> None:
        code, message = self._ffi.getwinerror()
        raise WindowsApiError(function, code, message)

    def _check_bool(self, result: Any, function: str) -> None:
        if not result:
            self._raise_last_error(function)

    def _check_handle(self, handle: Any, function: str) -> int:
        value = int(self._ffi.cast("uintptr_t", handle))
        if value in (0, _INVALID_HANDLE_VALUE):
            self._raise_last_error(function)
        return value

    def _handle(self, value: int) -> Any:
        return self._ffi.cast("HANDLE", value)

    def _guid(self, text: str) -> Any:
        parsed = uuid.UUID(text)
        guid = self._ffi.new("GUID *")
        guid.Data1, guid.Data2, guid.Data3 = parsed.fields[0], parsed.fields[1], parsed.fields[2]
        for index, byte in enumerate(parsed.bytes[8:]):
            guid.Data4[index] = byte
        return guid

    def _guid_text(self, guid: Any) -> str:
        tail = bytes(guid.Data4[index] for index in range(8))
        return str(uuid.UUID(fields=(guid.Data1, guid.Data2, guid.Data3, tail[0], tail[1],
                                     int.from_bytes(tail[2:], "big"))))

    def _check_code(self, code: int, function: str) -> None:
        if code != 0:
            raise WindowsApiError(function, int(code))

    # -- power requests ---------------------------------------------------------------------------
    def power_create_request(self, reason: str) -> int:
        context = self._ffi.new("REASON_CONTEXT *")
        text = self._ffi.new("WCHAR[]", reason)
        context.Version = _POWER_REQUEST_CONTEXT_VERSION
        context.Flags = _POWER_REQUEST_CONTEXT_SIMPLE_STRING
        context.Reason.SimpleReasonString = text
        return self._check_handle(self._kernel32.PowerCreateRequest(context), "PowerCreateRequest")

    def power_set_request(self, handle: int, request_type: int) -> None:
        self._check_bool(self._kernel32.PowerSetRequest(self._handle(handle), request_type), "PowerSetRequest")

    def power_clear_request(self, handle: int, request_type: int) -> None:
        self._check_bool(self._kernel32.PowerClearRequest(self._handle(handle), request_type), "PowerClearRequest")

    def close_handle(self, handle: int) -> None:
        self._check_bool(self._kernel32.CloseHandle(self._handle(handle)), "CloseHandle")

    # -- schemes ------------------------------------------------------------------------------------
    def power_get_active_scheme(self) -> str:
        pointer = self._ffi.new("GUID **")
        self._check_code(self._powrprof.PowerGetActiveScheme(self._ffi.NULL, pointer), "PowerGetActiveScheme")
        try:
            return self._guid_text(pointer[0])
        finally:
            self._kernel32.LocalFree(pointer[0])

    def power_read_value_index(self, scheme: str, subgroup: str, setting: str, *, ac: bool) -> int:
        value = self._ffi.new("DWORD *")
        name = "PowerReadACValueIndex" if ac else "PowerReadDCValueIndex"
        code = getattr(self._powrprof, name)(self._ffi.NULL, self._guid(scheme), self._guid(subgroup),
                                             self._guid(setting), value)
        self._check_code(code, name)
        return int(value[0])

    def power_write_value_index(self, scheme: str, subgroup: str, setting: str, value: int, *, ac: bool) -> None:
        name = "PowerWriteACValueIndex" if ac else "PowerWriteDCValueIndex"
        code = getattr(self._powrprof, name)(self._ffi.NULL, self._guid(scheme), self._guid(subgroup),
                                             self._guid(setting), value)
        self._check_code(code, name)

    def power_set_active_scheme(self, scheme: str) -> None:
        self._check_code(self._powrprof.PowerSetActiveScheme(self._ffi.NULL, self._guid(scheme)),
                         "PowerSetActiveScheme")

    def power_setting_register_notification(self, setting: str, callback: Callable[[int], None]) -> int:
        ffi = self._ffi

        def on_notification(_context: Any, message_type: int, data: Any) -> int:
            if message_type == _PBT_POWERSETTINGCHANGE and data != ffi.NULL:
                broadcast = ffi.cast("POWERBROADCAST_SETTING *", data)
                if broadcast.DataLength >= 4:
                    callback(int(ffi.cast("DWORD *", broadcast.Data)[0]))
            return 0

        routine = ffi.callback("DEVICE_NOTIFY_CALLBACK_ROUTINE", on_notification, onerror=lambda *_: 0)
        parameters = ffi.new("DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS *")
        parameters.Callback = routine
        parameters.Context = ffi.NULL
        registration = ffi.new("HPOWERNOTIFY *")
        code = self._powrprof.PowerSettingRegisterNotification(self._guid(setting), _DEVICE_NOTIFY_CALLBACK,
                                                               parameters, registration)
        self._check_code(code, "PowerSettingRegisterNotification")
        key = int(ffi.cast("uintptr_t", registration[0]))
        self._callbacks[key] = (routine, parameters)  # both must outlive the registration
        return key

    def power_setting_unregister_notification(self, registration: int) -> None:
        code = self._powrprof.PowerSettingUnregisterNotification(self._ffi.cast("HPOWERNOTIFY", registration))
        self._callbacks.pop(registration, None)
        self._check_code(code, "PowerSettingUnregisterNotification")

    # -- suspend ------------------------------------------------------------------------------------
    def enable_shutdown_privilege(self) -> None:
        ffi = self._ffi
        token = ffi.new("HANDLE *")
        self._check_bool(self._advapi32.OpenProcessToken(self._kernel32.GetCurrentProcess(),
                                                         _TOKEN_ADJUST_PRIVILEGES | _TOKEN_QUERY, token),
                         "OpenProcessToken")
        try:
            privileges = ffi.new("TOKEN_PRIVILEGES *")
            self._check_bool(self._advapi32.LookupPrivilegeValueW(ffi.NULL, "SeShutdownPrivilege",
                                                                  ffi.addressof(privileges.Privileges[0], "Luid")),
                             "LookupPrivilegeValueW")
            privileges.PrivilegeCount = 1
            privileges.Privileges[0].Attributes = _SE_PRIVILEGE_ENABLED
            self._check_bool(self._advapi32.AdjustTokenPrivileges(token[0], 0, privileges, 0, ffi.NULL, ffi.NULL),
                             "AdjustTokenPrivileges")
            # AdjustTokenPrivileges succeeds without the privilege and reports ERROR_NOT_ALL_ASSIGNED.
            code, _ = ffi.getwinerror()
            if code == ERROR_NOT_ALL_ASSIGNED:
                raise WindowsApiError("AdjustTokenPrivileges", code)
        finally:
            self._kernel32.CloseHandle(token[0])

    def set_suspend_state(self, *, hibernate: bool) -> None:
        self._check_bool(self._powrprof.SetSuspendState(1 if hibernate else 0, 0, 0), "SetSuspendState")

    def modern_standby_present(self) -> bool:
        capabilities = self._ffi.new("SYSTEM_POWER_CAPABILITIES *")
        self._check_bool(self._powrprof.GetPwrCapabilities(capabilities), "GetPwrCapabilities")
        return bool(capabilities.AoAc)

    def get_system_power_status(self) -> tuple[int, int, int]:
        status = self._ffi.new("SYSTEM_POWER_STATUS *")
        self._check_bool(self._kernel32.GetSystemPowerStatus(status), "GetSystemPowerStatus")
        return status.ACLineStatus, status.BatteryFlag, status.BatteryLifePercent

    def idle_milliseconds(self) -> int:
        info = self._ffi.new("LASTINPUTINFO *")
        info.cbSize = self._ffi.sizeof("LASTINPUTINFO")
        self._check_bool(self._user32.GetLastInputInfo(info), "GetLastInputInfo")
        return (int(self._kernel32.GetTickCount()) - int(info.dwTime)) & 0xFFFFFFFF  # both wrap together

    def broadcast_monitor_off(self) -> None:
        self._check_bool(self._user32.SendNotifyMessageW(self._ffi.cast("HWND", _HWND_BROADCAST), _WM_SYSCOMMAND,
                                                         _SC_MONITORPOWER, 2), "SendNotifyMessageW")

    # -- displays -----------------------------------------------------------------------------------
    def get_system_metrics(self, index: int) -> int:
        return int(self._user32.GetSystemMetrics(index))

    def query_active_display_paths(self) -> list[tuple[int, bool]]:
        ffi = self._ffi
        for _attempt in range(3):  # the topology may change between the two calls
            path_count, mode_count = ffi.new("UINT *"), ffi.new("UINT *")
            self._check_code(self._user32.GetDisplayConfigBufferSizes(_QDC_ONLY_ACTIVE_PATHS, path_count,
                                                                      mode_count), "GetDisplayConfigBufferSizes")
            paths = ffi.new("DISPLAYCONFIG_PATH_INFO[]", max(path_count[0], 1))
            modes = ffi.new("DISPLAYCONFIG_MODE_INFO[]", max(mode_count[0], 1))
            code = self._user32.QueryDisplayConfig(_QDC_ONLY_ACTIVE_PATHS, path_count, paths, mode_count, modes,
                                                   ffi.NULL)
            if code == _ERROR_INSUFFICIENT_BUFFER:
                continue
            self._check_code(code, "QueryDisplayConfig")
            return [(int(paths[i].targetInfo.outputTechnology) & 0xFFFFFFFF, bool(paths[i].targetInfo.targetAvailable))
                    for i in range(path_count[0])]
        raise WindowsApiError("QueryDisplayConfig", _ERROR_INSUFFICIENT_BUFFER)

    # -- processes ----------------------------------------------------------------------------------
    def snapshot_processes(self) -> list[tuple[int, int, str]]:
        ffi = self._ffi
        snapshot = self._check_handle(self._kernel32.CreateToolhelp32Snapshot(_TH32CS_SNAPPROCESS, 0),
                                      "CreateToolhelp32Snapshot")
        try:
            entry = ffi.new("PROCESSENTRY32W *")
            entry.dwSize = ffi.sizeof("PROCESSENTRY32W")
            processes = []
            ok = self._kernel32.Process32FirstW(self._handle(snapshot), entry)
            while ok:
                processes.append((int(entry.th32ProcessID), int(entry.th32ParentProcessID),
                                  ffi.string(entry.szExeFile)))
                ok = self._kernel32.Process32NextW(self._handle(snapshot), entry)
            return processes
        finally:
            self._kernel32.CloseHandle(self._handle(snapshot))

    def read_command_lines(self, pids: Sequence[int]) -> dict[int, str]:
        lines: dict[int, str] = {}
        for pid in pids:
            line = self._read_command_line(pid)
            if line is not None:
                lines[pid] = line
        return lines

    def _read_command_line(self, pid: int) -> str | None:
        ffi, kernel32 = self._ffi, self._kernel32
        process = kernel32.OpenProcess(_PROCESS_QUERY_INFORMATION | _PROCESS_VM_READ, 0, pid)
        if process == ffi.NULL:
            return None
        try:
            info = ffi.new("PROCESS_BASIC_INFORMATION *")
            status = self._ntdll.NtQueryInformationProcess(process, 0, info, ffi.sizeof(info[0]), ffi.NULL)
            if status != 0 or info.PebBaseAddress == ffi.NULL:
                return None
            parameters = ffi.new("void **")
            if not self._read_memory(process, ffi.cast("char *", info.PebBaseAddress) + _PEB_PROCESS_PARAMETERS_OFFSET,
                                     parameters, ffi.sizeof("void *")):
                return None
            command = ffi.new("UNICODE_STRING *")
            if not self._read_memory(process, ffi.cast("char *", parameters[0]) + _PARAMETERS_COMMAND_LINE_OFFSET,
                                     command, ffi.sizeof("UNICODE_STRING")):
                return None
            characters = command.Length // 2
            text = ffi.new("WCHAR[]", characters + 1)
            if characters and not self._read_memory(process, command.Buffer, text, command.Length):
                return None
            return str(ffi.string(text, characters))
        finally:
            kernel32.CloseHandle(process)

    def _read_memory(self, process: Any, address: Any, buffer: Any, size: int) -> bool:
        return bool(self._kernel32.ReadProcessMemory(process, address, buffer, size, self._ffi.NULL))

    def open_process_for_wait(self, pid: int) -> int:
        handle = self._kernel32.OpenProcess(_SYNCHRONIZE | _PROCESS_QUERY_LIMITED_INFORMATION, 0, pid)
        return self._check_handle(handle, "OpenProcess")

    def wait_for_single_object(self, handle: int, timeout_ms: int) -> int:
        return int(self._kernel32.WaitForSingleObject(self._handle(handle), timeout_ms))

    def process_times(self, pid: int) -> tuple[int, int, int]:
        process = self._check_handle(self._kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, 0, pid),
                                     "OpenProcess")
        try:
            return self._handle_times(process)
        finally:
            self._kernel32.CloseHandle(self._handle(process))

    def _handle_times(self, process: int) -> tuple[int, int, int]:
        times = self._ffi.new("FILETIME[4]")  # creation, exit, kernel, user
        self._check_bool(self._kernel32.GetProcessTimes(self._handle(process), times, times + 1, times + 2,
                                                        times + 3), "GetProcessTimes")
        creation, _exit, kernel, user = ((int(time.dwHighDateTime) << 32) | int(time.dwLowDateTime)
                                         for time in times)
        return creation, kernel, user

    def open_process_for_watchdog(self, pid: int) -> int:
        access = _SYNCHRONIZE | _PROCESS_QUERY_LIMITED_INFORMATION | _PROCESS_TERMINATE
        return self._check_handle(self._kernel32.OpenProcess(access, 0, pid), "OpenProcess")

    def process_creation_time(self, handle: int) -> int:
        return self._handle_times(handle)[0]

    def terminate_process(self, handle: int, exit_code: int) -> None:
        self._check_bool(self._kernel32.TerminateProcess(self._handle(handle), exit_code), "TerminateProcess")

    # -- users --------------------------------------------------------------------------------------
    def current_user_sid(self) -> str:
        return self._token_user_sid(self._kernel32.GetCurrentProcess(), close=False)

    def process_user_sid(self, pid: int) -> str:
        process = self._check_handle(self._kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, 0, pid),
                                     "OpenProcess")
        return self._token_user_sid(self._handle(process), close=True)

    def _token_user_sid(self, process: Any, *, close: bool) -> str:
        ffi = self._ffi
        token = ffi.new("HANDLE *")
        try:
            self._check_bool(self._advapi32.OpenProcessToken(process, _TOKEN_QUERY, token), "OpenProcessToken")
            try:
                size = ffi.new("DWORD *")
                self._advapi32.GetTokenInformation(token[0], _TOKEN_USER_CLASS, ffi.NULL, 0, size)
                buffer = ffi.new("char[]", max(size[0], ffi.sizeof("TOKEN_USER")))
                self._check_bool(self._advapi32.GetTokenInformation(token[0], _TOKEN_USER_CLASS, buffer, len(buffer),
                                                                    size), "GetTokenInformation")
                text = ffi.new("WCHAR **")
                self._check_bool(self._advapi32.ConvertSidToStringSidW(ffi.cast("TOKEN_USER *", buffer).User.Sid,
                                                                       text), "ConvertSidToStringSidW")
                try:
                    return str(ffi.string(text[0]))
                finally:
                    self._kernel32.LocalFree(text[0])
            finally:
                self._kernel32.CloseHandle(token[0])
        finally:
            if close:
                self._kernel32.CloseHandle(process)

    # -- sound --------------------------------------------------------------------------------------
    def play_sound(self, sound: str, *, alias: bool) -> None:
        winsound: Any = importlib.import_module("winsound")  # Windows-only stdlib module, loaded when used

        flags = (winsound.SND_ALIAS if alias else winsound.SND_FILENAME) | winsound.SND_NODEFAULT
        try:
            winsound.PlaySound(sound, flags)  # synchronous: returns when the sound has played
        except RuntimeError as error:
            raise WindowsApiError("PlaySound", 0, str(error)) from error

    def _with_endpoint_volume(self, action: Callable[[Any], Any]) -> Any:
        ffi, ole32 = self._ffi, self._ole32
        initialized = ole32.CoInitializeEx(ffi.NULL, _COINIT_MULTITHREADED)
        if initialized < 0 and initialized != _RPC_E_CHANGED_MODE:
            raise WindowsApiError("CoInitializeEx", initialized & 0xFFFFFFFF)
        try:
            enumerator = ffi.new("void **")
            self._check_hresult(ole32.CoCreateInstance(self._guid(_CLSID_MM_DEVICE_ENUMERATOR), ffi.NULL, _CLSCTX_ALL,
                                                       self._guid(_IID_IMM_DEVICE_ENUMERATOR), enumerator),
                                "CoCreateInstance")
            devices = ffi.cast("IMMDeviceEnumerator *", enumerator[0])
            try:
                device = ffi.new("IMMDevice **")
                self._check_hresult(devices.lpVtbl.GetDefaultAudioEndpoint(devices, _E_RENDER, _E_CONSOLE, device),
                                    "IMMDeviceEnumerator::GetDefaultAudioEndpoint")
                try:
                    volume = ffi.new("void **")
                    self._check_hresult(device[0].lpVtbl.Activate(device[0], self._guid(_IID_IAUDIO_ENDPOINT_VOLUME),
                                                                  _CLSCTX_ALL, ffi.NULL, volume),
                                        "IMMDevice::Activate")
                    endpoint = ffi.cast("IAudioEndpointVolume *", volume[0])
                    try:
                        return action(endpoint)
                    finally:
                        endpoint.lpVtbl.Release(endpoint)
                finally:
                    device[0].lpVtbl.Release(device[0])
            finally:
                devices.lpVtbl.Release(devices)
        finally:
            if initialized >= 0:
                ole32.CoUninitialize()

    def _check_hresult(self, result: int, function: str) -> None:
        if result < 0:
            raise WindowsApiError(function, result & 0xFFFFFFFF)

    def get_endpoint_volume(self) -> tuple[float, bool]:
        ffi = self._ffi

        def read(endpoint: Any) -> tuple[float, bool]:
            level, muted = ffi.new("float *"), ffi.new("BOOL *")
            self._check_hresult(endpoint.lpVtbl.GetMasterVolumeLevelScalar(endpoint, level),
                                "IAudioEndpointVolume::GetMasterVolumeLevelScalar")
            self._check_hresult(endpoint.lpVtbl.GetMute(endpoint, muted), "IAudioEndpointVolume::GetMute")
            return float(level[0]), bool(muted[0])

        result: tuple[float, bool] = self._with_endpoint_volume(read)
        return result

    def set_endpoint_volume(self, scalar: float) -> None:
        self._with_endpoint_volume(lambda endpoint: self._check_hresult(
            endpoint.lpVtbl.SetMasterVolumeLevelScalar(endpoint, scalar, self._ffi.NULL),
            "IAudioEndpointVolume::SetMasterVolumeLevelScalar"))

    def set_endpoint_mute(self, muted: bool) -> None:
        self._with_endpoint_volume(lambda endpoint: self._check_hresult(
            endpoint.lpVtbl.SetMute(endpoint, 1 if muted else 0, self._ffi.NULL), "IAudioEndpointVolume::SetMute"))

    # -- named pipes --------------------------------------------------------------------------------
    def create_named_pipe(self, name: str, sddl: str, *, buffer_size: int, first_instance: bool) -> int:
        ffi = self._ffi
        descriptor = ffi.new("PSECURITY_DESCRIPTOR *")
        self._check_bool(self._advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl, _SDDL_REVISION_1, descriptor, ffi.NULL), "ConvertStringSecurityDescriptorToSecurityDescriptorW")
        try:
            attributes = ffi.new("SECURITY_ATTRIBUTES *")
            attributes.nLength = ffi.sizeof("SECURITY_ATTRIBUTES")
            attributes.lpSecurityDescriptor = descriptor[0]
            attributes.bInheritHandle = 0
            handle = self._kernel32.CreateNamedPipeW(
                name, _PIPE_ACCESS_DUPLEX | (_FILE_FLAG_FIRST_PIPE_INSTANCE if first_instance else 0),
                _PIPE_TYPE_BYTE | _PIPE_READMODE_BYTE | _PIPE_WAIT | _PIPE_REJECT_REMOTE_CLIENTS,
                _PIPE_UNLIMITED_INSTANCES, buffer_size, buffer_size, 0, attributes)
            return self._check_handle(handle, "CreateNamedPipeW")
        finally:
            self._kernel32.LocalFree(descriptor[0])

    def connect_named_pipe(self, handle: int) -> None:
        if not self._kernel32.ConnectNamedPipe(self._handle(handle), self._ffi.NULL):
            code, message = self._ffi.getwinerror()
            if code != 535:  # ERROR_PIPE_CONNECTED: the client came between create and connect
                raise WindowsApiError("ConnectNamedPipe", code, message)

    def disconnect_named_pipe(self, handle: int) -> None:
        self._check_bool(self._kernel32.DisconnectNamedPipe(self._handle(handle)), "DisconnectNamedPipe")

    def open_named_pipe(self, name: str, timeout_ms: int) -> int:
        handle = self._kernel32.CreateFileW(name, _GENERIC_READ | _GENERIC_WRITE, 0, self._ffi.NULL, _OPEN_EXISTING,
                                            0, self._ffi.NULL)
        value = int(self._ffi.cast("uintptr_t", handle))
        if value in (0, _INVALID_HANDLE_VALUE):
            code, message = self._ffi.getwinerror()
            if code != ERROR_PIPE_BUSY or not self._kernel32.WaitNamedPipeW(name, timeout_ms):
                raise WindowsApiError("CreateFileW", code, message)
            return self._check_handle(self._kernel32.CreateFileW(name, _GENERIC_READ | _GENERIC_WRITE, 0,
                                                                 self._ffi.NULL, _OPEN_EXISTING, 0, self._ffi.NULL),
                                      "CreateFileW")
        return value

    def read_file(self, handle: int, size: int) -> bytes:
        buffer = self._ffi.new("char[]", size)
        count = self._ffi.new("DWORD *")
        if not self._kernel32.ReadFile(self._handle(handle), buffer, size, count, self._ffi.NULL):
            code, message = self._ffi.getwinerror()
            if code in (109, 232):  # ERROR_BROKEN_PIPE / ERROR_NO_DATA: the other end closed (EOF)
                return b""
            raise WindowsApiError("ReadFile", code, message)
        return bytes(self._ffi.buffer(buffer, count[0]))

    def write_file(self, handle: int, data: bytes) -> None:
        count = self._ffi.new("DWORD *")
        view = memoryview(data)
        while view:
            self._check_bool(self._kernel32.WriteFile(self._handle(handle), self._ffi.from_buffer(view), len(view),
                                                      count, self._ffi.NULL), "WriteFile")
            view = view[count[0]:]
        self._kernel32.FlushFileBuffers(self._handle(handle))

    def pipe_server_process_id(self, handle: int) -> int:
        pid = self._ffi.new("ULONG *")
        self._check_bool(self._kernel32.GetNamedPipeServerProcessId(self._handle(handle), pid),
                         "GetNamedPipeServerProcessId")
        return int(pid[0])

    def pipe_client_process_id(self, handle: int) -> int:
        pid = self._ffi.new("ULONG *")
        self._check_bool(self._kernel32.GetNamedPipeClientProcessId(self._handle(handle), pid),
                         "GetNamedPipeClientProcessId")
        return int(pid[0])
