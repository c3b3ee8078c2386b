"""The Linux backend: systemd-logind over D-Bus for power, sysfs/procfs readers for the machine.

Each capability lives in its own module (power, lid, display, suspend, thermal, process, sound,
permission, brightness); this class only assembles them and reports what is available for ``lidguard doctor``.
Readers honour ``LIDGUARD_SYSFS_ROOT``; logind is reached through ``DBUS_SYSTEM_BUS_ADDRESS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..api import CAPABILITIES, NativeModuleStatus, PowerSource, PowerSourceChanges, Unsupported
from .brightness import LinuxBrightness
from .display import LinuxDisplayReader
from .lid import LinuxLidStateReader
from .power import LinuxLidPolicy, LinuxPowerRequests
from .process import LinuxProcessWatcher
from .sound import LinuxSoundPlayer
from .suspend import LinuxSuspender
from .thermal import LinuxThermalReader

__all__ = ["LinuxPlatform", "probe_logind", "read_logind_lid_closed"]

# Capabilities that only work while logind answers on the system bus (systemd-inhibit and systemctl
# talk to logind too), and logind's CanSuspend answers that mean "never" (org.freedesktop.login1(5)).
_LOGIND_CAPABILITIES = ("power", "lid_policy", "suspend")
_CANNOT_SUSPEND = ("no", "na")


def read_logind_lid_closed() -> bool | None:
    """logind's ``LidClosed`` property, or None when logind cannot tell (confirms /proc/acpi)."""
    from ._binding import LogindConnection, LogindError

    try:
        with LogindConnection() as connection:
            return connection.read_bool_property("LidClosed")
    except LogindError:
        return None


def probe_logind() -> tuple[str | None, str | None]:
    """(logind's CanSuspend answer, None) when logind answers, else (None, why it cannot be reached).

    Read-only: one CanSuspend call (the binding, else ``busctl``); nothing is inhibited or suspended.
    """
    import subprocess

    from ._binding import LogindError, RealSystemBusRefused
    from .permission import query_logind_capability

    try:
        return query_logind_capability("CanSuspend"), None
    except (LogindError, Unsupported, OSError, subprocess.TimeoutExpired, RealSystemBusRefused) as error:
        from ._binding import unreachable_text

        return None, unreachable_text(error)


def _unreachable(failure: str) -> str:
    from ._binding import NO_LOGIND

    return failure if failure == NO_LOGIND else f"logind cannot be reached ({failure})"


def _bare(failure: str) -> str:
    """``NO_LOGIND`` without its own parentheses, for a sentence that puts it in some."""
    from ._binding import NO_LOGIND

    return "no logind here: a container, or an init without logind?" if failure == NO_LOGIND else failure


class _LinuxPermission:
    """The managed polkit rule (``permission.py``), imported only when used."""

    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int:
        from .permission import run_linux_permission

        return run_linux_permission(subcommand, out=out, err=err)

    def describe(self) -> str:
        from .permission import describe_permission

        return describe_permission()

    def moot_reason(self) -> str | None:
        """Why installing the rule would help nothing here (no logind answers), else None."""
        _answer, failure = probe_logind()
        return None if failure is None else f"systemd-logind cannot be reached here ({_bare(failure)})"


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
        self.permission = _LinuxPermission()
        self.brightness = LinuxBrightness()

    @classmethod
    def from_environment(cls) -> LinuxPlatform:
        return cls()

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        answer, failure = probe_logind()
        descriptions: dict[str, str] = {}
        for capability in CAPABILITIES if only is None else [name for name in CAPABILITIES if name in only]:
            component = getattr(self, capability)
            try:
                text = component.describe()
            except Exception as error:  # doctor must describe even a broken capability
                text = f"unsupported: {error}"
            if capability in _LOGIND_CAPABILITIES and not text.startswith(("unavailable", "unsupported")):
                if failure is not None:
                    text = f"unavailable: {_unreachable(failure)}"
                elif capability == "suspend" and answer in _CANNOT_SUSPEND:
                    text = f"unavailable: logind CanSuspend answered {answer!r} ({text})"
                elif capability == "suspend" and answer == "challenge":
                    text = (f"{text}; logind CanSuspend: challenge (asks for a password; "
                            "`lidguard linux-permission install` allows it)")
                elif capability == "suspend":
                    text = f"{text}; logind CanSuspend: {answer}"
            descriptions[capability] = text
        return descriptions

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        from ._binding import binding_status

        active, reason = binding_status()
        return [NativeModuleStatus("logind", active, reason)]

    def describe_power_source(self) -> PowerSource:
        from .battery import read_power_supplies, summarize_power_source

        summary = summarize_power_source(read_power_supplies())
        source = PowerSource(summary["onAc"], summary["batteryPercent"], summary["batteryStatus"])
        if source == PowerSource(None):
            raise Unsupported("power_source", "no AC adapter or battery is listed in /sys/class/power_supply")
        return source

    def power_source_changes(self) -> PowerSourceChanges:
        """Kernel ``power_supply`` uevents (``power_events.py``); ``OSError`` when netlink is refused."""
        from .power_events import UeventPowerSourceChanges

        return UeventPowerSourceChanges()

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Nothing beyond the lid policy is changed on this platform, so nothing to restore."""
        return []

    def close(self) -> None:
        for component in (self.lid_policy, self.power, self.suspend):
            close = getattr(component, "close", None)
            if close is not None:
                close()
