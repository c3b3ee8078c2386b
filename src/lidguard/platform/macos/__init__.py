"""The macOS backend: command-line tools (caffeinate, pmset, ioreg, system_profiler, powermetrics,
sudo -n, ps, afplay, osascript, visudo) through one runner (``commands.py``), plus a cffi binding
(``_binding.py``) over CoreFoundation/IOKit/libproc/notify for IOHID temperatures, process ancestry
and power-source notifications (``power_events.py``).

Each capability lives in its own module (power, lid, display, suspend, thermal, process, sound,
permission, brightness), as on Linux. This package imports nothing at import time: ``ancestry/macos.py`` (hook
path, stdlib only) uses ``ps.py`` from here, and the capability modules load when the platform is
built. Every tool resolves on PATH off macOS, so ``LIDGUARD_PLATFORM=macos`` runs on Linux over
stand-in scripts (tests/macos); in test mode only stand-ins ever run (see ``commands.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..api import NativeModuleStatus, PowerSource, PowerSourceChanges

__all__ = ["MacOSPlatform"]


class _MacPermission:
    """The managed sudoers rule (``permission.py``), imported only when used."""

    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int:
        from .permission import run_macos_permission

        return run_macos_permission(subcommand, out=out, err=err)

    def describe(self) -> str:
        from .permission import describe_permission

        return describe_permission()


class MacOSPlatform:
    name = "macos"

    def __init__(self) -> None:
        from .brightness import MacBrightness
        from .display import MacDisplayReader
        from .lid import MacLidStateReader
        from .power import MacLidPolicy, MacPowerRequests
        from .process import MacProcessWatcher
        from .sound import MacSoundPlayer
        from .suspend import MacSuspender
        from .thermal import MacThermalReader

        self.power = MacPowerRequests()
        self.lid_policy = MacLidPolicy()
        self.lid = MacLidStateReader()
        self.display = MacDisplayReader()
        self.suspend = MacSuspender()
        self.thermal = MacThermalReader()
        self.process = MacProcessWatcher()
        self.sound = MacSoundPlayer()
        self.permission = _MacPermission()
        self.brightness = MacBrightness()

    @classmethod
    def from_environment(cls) -> MacOSPlatform:
        return cls()

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        """Each capability's source (command-line or native) or why it is unavailable."""
        from ..api import CAPABILITIES

        descriptions: dict[str, str] = {}
        for capability in CAPABILITIES if only is None else [name for name in CAPABILITIES if name in only]:
            try:
                descriptions[capability] = getattr(self, capability).describe()
            except Exception as error:  # doctor must describe even a broken capability
                descriptions[capability] = f"unavailable: {error}"
        return descriptions

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        from ..api import NativeModuleStatus
        from ._binding import binding_status

        active, reason = binding_status()
        return [NativeModuleStatus("macos", active, reason)]

    def power_source_changes(self) -> PowerSourceChanges:
        """IOPS notify(3) names on one descriptor (``power_events.py``); ``Unsupported`` (polled) when
        the binding is inactive, ``OSError`` when notify(3) refuses the registration."""
        from ..api import Unsupported
        from ._binding import BindingInactive, active_binding
        from .power_events import NotifyPowerSourceChanges

        try:
            binding = active_binding()
        except BindingInactive as error:
            raise Unsupported("power_source_changes", f"no IOPS notifications without the binding ({error})") from error
        return NotifyPowerSourceChanges(binding)

    def describe_power_source(self) -> PowerSource:
        import subprocess

        from ..api import PowerSource, Unsupported
        from .battery import parse_pmset_battery
        from .commands import RealToolRefused, run_tool

        try:
            result = run_tool("pmset", ["-g", "batt"], capability="power_source", timeout=5)
        except (RealToolRefused, subprocess.TimeoutExpired) as error:
            raise OSError(str(error)) from error
        if not result.ok:
            raise OSError(result.failure_text())
        source = parse_pmset_battery(result.stdout)
        if source == PowerSource(None):
            raise Unsupported("power_source", "pmset -g batt names no power source")
        return source

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Restores the hibernatemode a Hibernate request changed (the backup is left for this step)."""
        from ..paths import LidGuardPaths
        from .suspend import restore_pending_power_state

        backup = LidGuardPaths(data_dir, data_dir).power_state_backup_file
        if restore_pending_power_state(backup):
            return [f"Restored the macOS hibernatemode from {backup}."]
        return []

    def close(self) -> None:
        for component in (self.lid_policy, self.power, self.suspend):
            component.close()
