"""The Linux backend: systemd-logind over D-Bus for power, sysfs/procfs readers for the machine.

Each capability lives in its own module (power, lid, display, suspend, thermal, process, sound);
this class only assembles them and reports what is available for ``lidguard doctor``.
Readers honour ``LIDGUARD_SYSFS_ROOT``; logind is reached through ``DBUS_SYSTEM_BUS_ADDRESS``.
"""

from __future__ import annotations

from typing import Any

from ..api import CAPABILITIES
from .display import LinuxDisplayReader
from .lid import LinuxLidStateReader
from .power import LinuxLidPolicy, LinuxPowerRequests
from .process import LinuxProcessWatcher
from .sound import LinuxSoundPlayer
from .suspend import LinuxSuspender
from .thermal import LinuxThermalReader

__all__ = ["LinuxPlatform", "read_logind_lid_closed"]


def read_logind_lid_closed() -> bool | None:
    """logind's ``LidClosed`` property, or None when logind cannot tell (confirms /proc/acpi)."""
    from ._binding import LogindConnection, LogindError

    try:
        with LogindConnection() as connection:
            return connection.read_bool_property("LidClosed")
    except LogindError:
        return None


class LinuxPlatform:
    name = "linux"

    def __init__(self) -> None:
        self.power = LinuxPowerRequests()
        self.lid_policy = LinuxLidPolicy()
        self.lid = LinuxLidStateReader(logind_lid_closed=read_logind_lid_closed)
        self.display = LinuxDisplayReader()
        self.suspend = LinuxSuspender()
        self.thermal = LinuxThermalReader()
        self.process = LinuxProcessWatcher()
        self.sound = LinuxSoundPlayer()

    @classmethod
    def from_environment(cls) -> LinuxPlatform:
        return cls()

    def describe_capabilities(self) -> dict[str, str]:
        descriptions: dict[str, str] = {}
        for capability in CAPABILITIES:
            component = getattr(self, capability)
            try:
                descriptions[capability] = component.describe()
            except Exception as error:  # doctor must describe even a broken capability
                descriptions[capability] = f"unsupported: {error}"
        return descriptions

    def native_module_statuses(self) -> list[dict[str, Any]]:
        from ._binding import binding_status

        active, reason = binding_status()
        thermal_active = self.thermal.uses_native_sampler
        return [
            {"name": "logind", "active": active, "reason": reason},
            {"name": "thermal", "active": thermal_active,
             "reason": "compiled module active" if thermal_active else self.thermal.describe()},
        ]

    def describe_power_source(self) -> dict[str, Any]:
        from .battery import read_power_supplies, summarize_power_source

        return summarize_power_source(read_power_supplies())

    def close(self) -> None:
        for component in (self.lid_policy, self.power, self.suspend):
            close = getattr(component, "close", None)
            if close is not None:
                close()
