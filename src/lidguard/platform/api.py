"""Capability Protocols every OS backend implements, plus the shared value types.

The runtime sees only these names. A backend that cannot offer a capability raises
``Unsupported(capability, reason)`` from the call that needs it; it never silently does nothing.

Capabilities (one module of the same name per OS folder):

    power     keep-awake protection (PowerRequests)
    lid       lid switch state (LidStateReader) and the lid-close policy (LidPolicy)
    display   visible display monitor count (DisplayReader)
    suspend   sleep / hibernate requests (Suspender)
    thermal   thermal-zone temperatures (ThermalReader)
    process   ancestry and exit watching (ProcessWatcher)
    sound     post-stop sound playback and the volume override (SoundPlayer)
    permission  the OS permission that lets logind/power calls work without a prompt (PermissionManager)
    brightness  the built-in display's brightness and whether the user is idle (BrightnessControl)

Platform extras (``describe_power_source``, ``power_source_changes``, ``native_module_statuses``) are
declared here too, so the CLI and ``doctor`` never probe a backend with ``getattr`` nor import an OS
package.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TextIO, runtime_checkable

from .errors import LidPolicyRefused, Unsupported
from .process_info import ProcessInfo

__all__ = [
    "BrightnessControl",
    "BrightnessLevel",
    "CAPABILITIES",
    "IdleReading",
    "DisplayConnector",
    "DisplayReader",
    "LidActionSnapshot",
    "LidPolicy",
    "LidState",
    "LidStateReader",
    "NativeModuleStatus",
    "PERMISSION_NEEDS_ROOT",
    "PERMISSION_SUBCOMMANDS",
    "PermissionManager",
    "Platform",
    "PowerSource",
    "PowerHandle",
    "PowerRequests",
    "PowerSourceChanges",
    "ProcessInfo",
    "ProcessWatcher",
    "ProtectionRequest",
    "SoundOutcome",
    "SoundPlayer",
    "SuspendMode",
    "SuspendBlocker",
    "SuspendBlockerChanges",
    "SuspendResult",
    "Suspender",
    "TemperatureMode",
    "ThermalReader",
    "LidPolicyRefused",
    "Unsupported",
    "aggregate_temperature",
    "play_sound",
]

CAPABILITIES = ("power", "lid_policy", "lid", "display", "suspend", "thermal", "process", "sound", "permission",
                "brightness")
PERMISSION_SUBCOMMANDS = ("status", "check", "install", "remove")
# In a permission description: the rule's folder is closed to this user (Debian's polkit rules.d is 0700),
# so whether it is installed is unknown; setup and uninstall then offer the sudo path anyway.
PERMISSION_NEEDS_ROOT = "cannot be checked without root"


class LidState(enum.StrEnum):
    UNKNOWN = "Unknown"
    OPEN = "Open"
    CLOSED = "Closed"


class SuspendMode(enum.StrEnum):
    SLEEP = "Sleep"
    HIBERNATE = "Hibernate"


class TemperatureMode(enum.StrEnum):
    LOW = "Low"
    AVERAGE = "Average"
    HIGH = "High"


@dataclass(frozen=True, slots=True)
class ProtectionRequest:
    """What keep-awake protection should block while at least one session works."""

    prevent_system_sleep: bool = True
    prevent_display_sleep: bool = False
    prevent_away_mode_sleep: bool = False
    reason: str = "LidGuard is keeping the system awake while an agent session is running."


@dataclass(frozen=True, slots=True)
class LidActionSnapshot:
    """The lid-close action before lidguard changed it (0 DoNothing, 1 Sleep, 2 Hibernate, 3 ShutDown)."""

    power_scheme_identifier: str
    alternating_current_action: int | None
    direct_current_action: int | None


@dataclass(frozen=True, slots=True)
class DisplayConnector:
    name: str
    internal: bool


@dataclass(frozen=True, slots=True)
class SuspendResult:
    succeeded: bool
    message: str


@dataclass(frozen=True, slots=True)
class SuspendBlocker:
    """Another program that blocks sleep (issue 34.3): a logind ``block`` inhibitor on ``sleep``
    (ListInhibitors), a macOS PreventSystemSleep/PreventUserIdleSystemSleep assertion, a Windows
    ``powercfg /requests`` SYSTEM request. ``what``: the kinds it blocks (logind ``sleep:idle``, the
    macOS assertion type, ``SYSTEM``); None where the OS does not say. ``agent``: the agent it belongs
    to, filled in by the runtime (``runtime/blockers.py``) when it is one lidguard knows."""

    who: str
    why: str
    pid: int | None = None
    uid: int | None = None
    what: str = "sleep"
    mode: str = "block"
    agent: str | None = None

    def kinds(self) -> frozenset[str]:
        return frozenset(part for part in self.what.split(":") if part)

    def to_wire(self) -> dict[str, Any]:
        return {"Who": self.who, "Why": self.why, "Pid": self.pid, "Uid": self.uid, "What": self.what,
                "Mode": self.mode, "Agent": self.agent}

    def describe(self) -> str:
        """``backup (nightly backup), pid 1234, uid 1001, agent Claude``: one line for status and logs."""
        parts = [f"{self.who or 'unknown program'}" + (f" ({self.why})" if self.why else "")]
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        if self.uid is not None:
            parts.append(f"uid {self.uid}")
        if self.agent:
            parts.append(f"agent {self.agent}")
        return ", ".join(parts)


class SuspendBlockerChanges(Protocol):
    """Notifications that the OS's sleep blockers may have changed (logind's BlockInhibited through
    PropertiesChanged). ``wait`` returns after a change and raises ``OSError`` when the listener broke;
    ``close`` is idempotent. Optional: ``Suspender.blocker_changes`` raises ``Unsupported`` where the
    backend has none, and the runtime polls ``list_blockers`` instead."""

    async def wait(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PowerSource:
    """Where the machine draws power from; None where the OS cannot tell that part."""

    on_ac: bool | None
    battery_percent: int | None = None
    battery_status: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"onAc": self.on_ac, "batteryPercent": self.battery_percent, "batteryStatus": self.battery_status}

    def describe(self) -> str:
        """``AC, battery 80%, Charging``; ``unknown`` when AC presence is unknown."""
        parts = ["AC" if self.on_ac else "battery" if self.on_ac is False else "unknown"]
        if self.battery_percent is not None:
            parts.append(f"battery {self.battery_percent}%")
        if self.battery_status:
            parts.append(self.battery_status)
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class NativeModuleStatus:
    """One compiled module a backend can use: active, or the pure-Python fallback and why."""

    name: str
    active: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "active": self.active, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class BrightnessLevel:
    """The built-in display's brightness in the device's own units (``0..maximum``) and which device
    it is (Linux ``backlight/intel_backlight``); set it back on the same device only."""

    device: str
    value: int
    maximum: int

    def percent(self) -> int:
        return round(self.value * 100 / self.maximum) if self.maximum > 0 else 0


@dataclass(frozen=True, slots=True)
class IdleReading:
    """Whether the user is idle now, and since when (UTC; None when the OS does not say)."""

    idle: bool
    since: datetime | None = None


class PowerHandle(Protocol):
    """An applied protection; ``release`` is idempotent."""

    description: str

    def release(self) -> None: ...


@runtime_checkable
class PowerRequests(Protocol):
    def apply(self, request: ProtectionRequest) -> PowerHandle: ...


class PowerSourceChanges(Protocol):
    """Notifications that the power source may have changed (an optional capability, see
    ``Platform.power_source_changes``). ``wait`` returns after a change (several changes that arrived
    together wake it once) and raises ``OSError`` when the listener broke; it is cancellable.
    ``close`` is idempotent and never raises."""

    async def wait(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class LidPolicy(Protocol):
    """The lid-close policy. ``read`` captures, ``set_do_nothing`` applies, ``restore`` undoes."""

    def read_lid_actions(self) -> LidActionSnapshot: ...

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None: ...

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None: ...

    def drop_runtime_hold(self) -> None:
        """Forget any hold owned by this process without writing policy (backup missing)."""
        ...


@runtime_checkable
class LidStateReader(Protocol):
    def read_lid_state(self) -> LidState: ...


@runtime_checkable
class DisplayReader(Protocol):
    def list_connected_displays(self) -> list[DisplayConnector]: ...


@runtime_checkable
class Suspender(Protocol):
    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        """``ignore_other_blockers`` (``SuspendIgnoresOtherBlockers``): ask the OS to suspend over other
        programs' sleep blockers (logind: suspend-ignore-inhibit); False: a backend that can see them
        refuses at once, naming them, instead of asking."""
        ...

    def list_blockers(self) -> list[SuspendBlocker]:
        """Other programs' sleep blockers now (lidguard's own left out); ``Unsupported`` where the OS
        cannot list them, ``OSError`` when listing failed now."""
        ...

    def blocker_changes(self) -> SuspendBlockerChanges:
        """A listener for blocker changes (see ``SuspendBlockerChanges``); ``Unsupported`` = poll."""
        ...


@runtime_checkable
class ThermalReader(Protocol):
    def read_temperatures_celsius(self) -> list[float]: ...


@runtime_checkable
class ProcessWatcher(Protocol):
    def read_ancestry(self, pid: int) -> list[ProcessInfo]: ...

    def is_alive(self, pid: int) -> bool: ...

    async def wait_for_exit(self, pid: int) -> None: ...

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        """CPU seconds used by ``pid``'s descendants (its tools); None when ``pid`` is gone."""
        ...


@runtime_checkable
class SoundPlayer(Protocol):
    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        """Plays to completion; returns warnings (volume override problems)."""
        ...


@dataclass(frozen=True)
class SoundOutcome:
    """What one playback did: the volume-override warnings (also those of a failed attempt, which
    backends attach to their error as ``warnings``) and the failure text when it did not play."""

    played: bool
    warnings: tuple[str, ...] = ()
    failure: str | None = None


def play_sound(player: SoundPlayer, sound: str, volume_percent: int | None) -> SoundOutcome:
    """The one way a configured sound is played (the suspend flow and the preview commands); never
    raises: a sound is never a reason to stop a suspend or to crash a command."""
    try:
        warnings = player.play(sound, volume_percent=volume_percent)
    except Exception as error:  # every backend error becomes a reported failure
        attached = getattr(error, "warnings", None)
        return SoundOutcome(False, tuple(str(item) for item in attached) if isinstance(attached, list) else (),
                            str(error) or type(error).__name__)
    return SoundOutcome(True, tuple(str(item) for item in warnings or ()))


@runtime_checkable
class PermissionManager(Protocol):
    """The OS permission lidguard needs for sleep/lid/suspend calls without a password prompt
    (Linux: a polkit rule). Subcommands are ``PERMISSION_SUBCOMMANDS``; ``run`` prints to ``out``/``err``
    and returns the exit code; ``describe`` is one line for ``doctor`` and never asks for a password."""

    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int: ...

    def describe(self) -> str: ...


@runtime_checkable
class BrightnessControl(Protocol):
    """Reversible built-in display dimming (seed 004). ``read_brightness`` raises ``Unsupported`` when
    there is no built-in display backlight to control; ``set_brightness`` sets ``level.value`` on
    ``level.device`` (never another device); ``read_idle`` says whether the user is away. Each raises
    ``OSError`` (or ``Unsupported``) when the OS refuses now; ``describe`` is one line for ``doctor``."""

    def read_brightness(self) -> BrightnessLevel: ...

    def set_brightness(self, level: BrightnessLevel) -> None: ...

    def read_idle(self) -> IdleReading: ...

    def describe(self) -> str: ...


class Platform(Protocol):
    """One OS backend: a name plus one object per capability (read-only members, so plain
    attributes of any narrower type satisfy it)."""

    @property
    def name(self) -> str: ...
    @property
    def power(self) -> PowerRequests: ...
    @property
    def lid_policy(self) -> LidPolicy: ...
    @property
    def lid(self) -> LidStateReader: ...
    @property
    def display(self) -> DisplayReader: ...
    @property
    def suspend(self) -> Suspender: ...
    @property
    def thermal(self) -> ThermalReader: ...
    @property
    def process(self) -> ProcessWatcher: ...
    @property
    def sound(self) -> SoundPlayer: ...
    @property
    def permission(self) -> PermissionManager: ...
    @property
    def brightness(self) -> BrightnessControl: ...

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        """capability -> "available (...)", "unavailable: reason" (could work, does not now) or
        "unsupported: reason" (this backend cannot), for `lidguard doctor`. ``only``: just those
        capabilities (``status`` asks only "power": describing all runs ioreg, system_profiler and a
        sudo -n powermetrics on macOS)."""
        ...

    def describe_power_source(self) -> PowerSource:
        """AC/battery now; raises ``Unsupported`` when the OS cannot tell (``OSError`` on a read failure)."""
        ...

    def power_source_changes(self) -> PowerSourceChanges:
        """Opens a listener for power-source changes; ``Unsupported`` where the backend offers none,
        ``OSError`` when the OS refuses it now. The runtime opens it only while protection is wanted and
        closes it when not; it keeps its slow poll of ``describe_power_source`` beside it and alone on
        ``Unsupported`` or a failure.

        Linux: kernel ``power_supply`` uevents on a NETLINK_KOBJECT_UEVENT socket
        (``platform/linux/power_events.py``). macOS (IOPS notifications), Windows (power setting
        notifications), the fake and the unsupported platform: ``Unsupported`` for now, so they poll.
        """
        ...

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        """The backend's compiled modules (empty when it has none)."""
        ...

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Crash recovery beyond the lid policy (REFERENCE 1.1; macOS: the hibernatemode backup left by
        a Hibernate request). Runs only while no runtime holds the lock; returns one line per restored
        item, raises ``OSError`` when a backup exists but cannot be restored (it is kept)."""
        ...

    def close(self) -> None: ...


def aggregate_temperature(values: list[float], mode: TemperatureMode) -> int | None:
    """Low/Average/High over zone values, rounded half away from zero; None when no value."""
    usable = [value for value in values if value > 0]
    if not usable:
        return None
    if mode is TemperatureMode.LOW:
        chosen = min(usable)
    elif mode is TemperatureMode.HIGH:
        chosen = max(usable)
    else:
        chosen = sum(usable) / len(usable)
    return int(chosen + 0.5) if chosen >= 0 else -int(-chosen + 0.5)


def count_visible_displays(displays: list[DisplayConnector], *, exclude_internal: bool) -> int:
    return sum(1 for display in displays if not (exclude_internal and display.internal))
