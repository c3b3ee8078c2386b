"""``WindowsPlatform``: assembles the Windows capabilities over one :class:`WindowsApi`.

``from_environment`` uses the live cffi binding (Windows only, never under test); when it is
unavailable - on Linux, with ``LIDGUARD_PLATFORM=windows`` - every capability says why in
``describe_capabilities`` and its calls raise ``Unsupported``. Tests pass a recording fake binding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from ..api import CAPABILITIES, NativeModuleStatus, PowerSource, PowerSourceChanges, Unsupported
from .brightness import WindowsBrightness
from .display import WindowsDisplayReader
from .lid import WindowsLidStateReader
from .power import WindowsLidPolicy, WindowsPowerRequests
from .process import WindowsProcessWatcher
from .sound import WindowsSoundPlayer
from .suspend import WindowsSuspender
from .thermal import CommandRunner, WindowsThermalReader, run_command
from .winapi import WindowsApi, WindowsApiError

__all__ = ["WindowsPlatform"]

# What each capability uses, for `doctor` when the binding is unavailable.
_USES = {
    "power": "PowerCreateRequest/PowerSetRequest",
    "lid_policy": "LIDACTION via PowerRead/WriteAC/DCValueIndex",
    "lid": "PowerSettingRegisterNotification(GUID_LIDSWITCH_STATE_CHANGE)",
    "display": "GetSystemMetrics(SM_CMONITORS) + QueryDisplayConfig",
    "suspend": "SeShutdownPrivilege + SetSuspendState",
    "process": "Toolhelp snapshot + NtQueryInformationProcess, SYNCHRONIZE handles, GetProcessTimes",
    "sound": "PlaySound + IAudioEndpointVolume",
    "permission": "no setup needed",
    "brightness": "WMI WmiMonitorBrightness/WmiSetBrightness + GetLastInputInfo",
}
_AC_OFFLINE, _AC_ONLINE = 0, 1
_BATTERY_CHARGING, _NO_SYSTEM_BATTERY, _UNKNOWN = 8, 128, 255


class _MissingApi:
    """Stands in for the binding where it cannot load: every call raises ``Unsupported``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, name: str) -> Any:
        def unavailable(*_args: Any, **_kwargs: Any) -> NoReturn:
            raise Unsupported("windows", f"the Windows API binding is unavailable: {self.reason}")

        return unavailable


class _WindowsPermission:
    """Windows needs no permission setup: standard users hold SeShutdownPrivilege and may change
    their power scheme's LIDACTION; a group policy that forbids either shows up as the call's error."""

    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int:
        print("Windows needs no permission setup for lidguard; nothing to do.", file=out)
        return 0

    def describe(self) -> str:
        return "available (no setup needed: SeShutdownPrivilege is enabled per request)"


class WindowsPlatform:
    name = "windows"

    def __init__(self, api: WindowsApi | None, *, binding_reason: str = "",
                 command_runner: CommandRunner = run_command) -> None:
        self.binding_reason = binding_reason
        self.api_available = api is not None
        self.api: WindowsApi = api if api is not None else cast(WindowsApi, _MissingApi(binding_reason))
        self.power = WindowsPowerRequests(self.api)
        self.lid_policy = WindowsLidPolicy(self.api)
        self.lid = WindowsLidStateReader(self.api)
        self.display = WindowsDisplayReader(self.api)
        self.suspend = WindowsSuspender(self.api, command_runner)
        self.thermal = WindowsThermalReader(command_runner)
        self.process = WindowsProcessWatcher(self.api)
        self.sound = WindowsSoundPlayer(self.api)
        self.permission = _WindowsPermission()
        self.brightness = WindowsBrightness(self.api, command_runner)

    @classmethod
    def from_environment(cls) -> WindowsPlatform:
        from ._binding import load_windows_api

        api, reason = load_windows_api()
        return cls(api, binding_reason=reason)

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        descriptions: dict[str, str] = {}
        for capability in CAPABILITIES if only is None else [name for name in CAPABILITIES if name in only]:
            if not self.api_available and capability not in ("thermal", "permission"):
                descriptions[capability] = (f"unsupported: the Windows API binding is unavailable "
                                            f"({self.binding_reason}); would use {_USES[capability]}")
                continue
            try:
                descriptions[capability] = getattr(self, capability).describe()
            except Exception as error:  # doctor must describe even a broken capability
                descriptions[capability] = f"unavailable: {error}"
        return descriptions

    def power_source_changes(self) -> PowerSourceChanges:
        """Power setting notifications (``power_events.py``); ``Unsupported`` (polled) without the
        binding, ``WindowsApiError`` (an ``OSError``) when the registration is refused."""
        if not self.api_available:
            raise Unsupported("power_source_changes",
                              f"the Windows API binding is unavailable ({self.binding_reason}); polled")
        from .power_events import PowerSettingChanges

        return PowerSettingChanges(self.api)

    def describe_power_source(self) -> PowerSource:
        try:
            ac_line, flags, percent = self.api.get_system_power_status()
        except WindowsApiError as error:
            raise OSError(str(error)) from error
        on_ac = True if ac_line == _AC_ONLINE else False if ac_line == _AC_OFFLINE else None
        has_battery = flags not in (_NO_SYSTEM_BATTERY, _UNKNOWN) and percent != _UNKNOWN
        status: str | None = None
        if has_battery:
            status = ("Charging" if flags & _BATTERY_CHARGING else "Discharging" if on_ac is False
                      else "Full" if percent >= 100 else "Not charging")
        source = PowerSource(on_ac, percent if has_battery else None, status)
        if source == PowerSource(None):
            raise Unsupported("power_source", "GetSystemPowerStatus reports neither AC nor a battery")
        return source

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        return [NativeModuleStatus("windows", self.api_available, self.binding_reason)]

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Nothing beyond the lid policy is changed on this platform, so nothing to restore."""
        return []

    def close(self) -> None:
        self.lid.close()
        self.power.close()
