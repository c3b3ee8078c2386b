"""A platform whose every capability is unsupported (macOS and Windows backends are not built yet)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from .api import (
    BrightnessLevel,
    DisplayConnector,
    IdleReading,
    LidActionSnapshot,
    LidState,
    NativeModuleStatus,
    PowerHandle,
    PowerSource,
    PowerSourceChanges,
    ProcessInfo,
    ProtectionRequest,
    SuspendBlocker,
    SuspendBlockerChanges,
    SuspendMode,
    SuspendResult,
    Unsupported,
)

_REASONS = {
    "macos": "the macOS backend is not part of this build yet",
    "windows": "the Windows backend is not part of this build yet",
    "unsupported": "this operating system has no lidguard backend",
}


class _UnsupportedCapability:
    def __init__(self, capability: str, reason: str) -> None:
        self._capability = capability
        self._reason = reason

    def _fail(self) -> Unsupported:
        return Unsupported(self._capability, self._reason)


class _Power(_UnsupportedCapability):
    def apply(self, request: ProtectionRequest) -> PowerHandle:
        raise self._fail()


class _LidPolicy(_UnsupportedCapability):
    def read_lid_actions(self) -> LidActionSnapshot:
        raise self._fail()

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        raise self._fail()

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        raise self._fail()

    def drop_runtime_hold(self) -> None:
        return None  # nothing can be held on a platform that never applied a policy


class _Lid(_UnsupportedCapability):
    def read_lid_state(self) -> LidState:
        return LidState.UNKNOWN


class _Display(_UnsupportedCapability):
    def list_connected_displays(self) -> list[DisplayConnector]:
        raise self._fail()


class _Suspend(_UnsupportedCapability):
    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        raise self._fail()

    def list_blockers(self) -> list[SuspendBlocker]:
        raise self._fail()

    def blocker_changes(self) -> SuspendBlockerChanges:
        raise self._fail()


class _Thermal(_UnsupportedCapability):
    def read_temperatures_celsius(self) -> list[float]:
        raise self._fail()


class _Process(_UnsupportedCapability):
    def read_ancestry(self, pid: int) -> list[ProcessInfo]:
        raise self._fail()

    def is_alive(self, pid: int) -> bool:
        raise self._fail()

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        raise self._fail()

    async def wait_for_exit(self, pid: int) -> None:
        raise self._fail()


class _Sound(_UnsupportedCapability):
    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        raise self._fail()


class _Permission(_UnsupportedCapability):
    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int:
        raise self._fail()

    def describe(self) -> str:
        return f"unsupported: {self._reason}"


class UnsupportedBrightness(_UnsupportedCapability):
    """No display dimming (also what a backend uses until its own ``brightness.py`` exists)."""

    def read_brightness(self) -> BrightnessLevel:
        raise self._fail()

    def set_brightness(self, level: BrightnessLevel) -> None:
        raise self._fail()

    def read_idle(self) -> IdleReading:
        raise self._fail()

    def describe(self) -> str:
        return f"unsupported: {self._reason}"


class UnsupportedPlatform:
    def __init__(self, name: str) -> None:
        self.name = name
        reason = _REASONS.get(name, _REASONS["unsupported"])
        self._reason = reason
        self.power = _Power("power", reason)
        self.lid_policy = _LidPolicy("lid_policy", reason)
        self.lid = _Lid("lid", reason)
        self.display = _Display("display", reason)
        self.suspend = _Suspend("suspend", reason)
        self.thermal = _Thermal("thermal", reason)
        self.process = _Process("process", reason)
        self.sound = _Sound("sound", reason)
        self.permission = _Permission("permission", reason)
        self.brightness = UnsupportedBrightness("brightness", reason)

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        from .api import CAPABILITIES

        return {capability: f"unsupported: {self._reason}" for capability in CAPABILITIES
                if only is None or capability in only}

    def describe_power_source(self) -> PowerSource:
        raise Unsupported("power_source", self._reason)

    def power_source_changes(self) -> PowerSourceChanges:
        raise Unsupported("power_source_changes", self._reason)

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        return []

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Nothing beyond the lid policy is changed on this platform, so nothing to restore."""
        return []

    def close(self) -> None:
        return None
