"""An in-memory platform that tests drive, in one process or across processes.

In-process tests change ``FakePlatform.machine`` directly and read ``FakePlatform.actions``.
Across processes the simulated machine is the JSON file named by ``LIDGUARD_FAKE_STATE`` (re-read on
every question) and every action is appended as one JSON line to ``LIDGUARD_FAKE_ACTIONS``::

    {"lid": "open"|"closed"|"unknown", "displays": [{"name": "eDP-1", "internal": true}],
     "temperaturesCelsius": [45.0], "suspendSucceeds": true, "hibernateSucceeds": true,
     "refuseWhileBlocked": true, "lidPolicyRefusal": "the lid-close action needs ...",
     "powerSource": {"onAc": true, "batteryPercent": 80, "batteryStatus": "Charging"},
     "soundWarnings": ["..."], "soundFailure": "..."},
     "brightness": {"device": "backlight/fake", "value": 80, "maximum": 100} | null,
     "idle": false, "idleSinceUtc": "2026-01-01T00:00:00Z", "brightnessFailure": "..."}

Every key is optional; no file means all defaults (lid open, one internal display, no temperature,
suspend and hibernate succeed, no power source: ``describe_power_source`` raises ``Unsupported``,
sounds play without warnings, a built-in backlight at 80 of 100, the user active). A brightness set by
lidguard stays in this process's memory (recorded as ``brightness-set``) until the state file names
another value; ``brightness: null`` means no backlight (``Unsupported``); ``brightnessFailure`` makes
reading and setting it raise ``OSError``. ``soundWarnings`` are returned by every playback (as a backend's
volume-override warnings); ``soundFailure`` makes playback raise with those warnings attached.
Like a strict OS (logind refusing while any block inhibitor on sleep is held, macOS ``disablesleep 1``
keeping ``sleepnow`` from sleeping), a request is refused while this platform's own keep-awake or
lid policy is held (``refuseWhileBlocked``); each request records what blocked it (``blockedBy``).
``lidPolicyRefusal`` makes the lid-policy change raise ``LidPolicyRefused`` with that hint (as a
missing sudoers rule, polkit grant or power-setting access would; recorded as ``lid-policy-refused``).
The fake permission manager changes nothing: each subcommand is recorded as ``permission-<name>``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .api import (
    CAPABILITIES,
    PERMISSION_SUBCOMMANDS,
    BrightnessLevel,
    DisplayConnector,
    IdleReading,
    LidActionSnapshot,
    LidPolicyRefused,
    LidState,
    NativeModuleStatus,
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

FAKE_SCHEME_IDENTIFIER = "00000000-0000-4000-8000-00000000fa4e"
_LID_VALUES = {"open": LidState.OPEN, "closed": LidState.CLOSED, "unknown": LidState.UNKNOWN}


@dataclass
class FakeMachine:
    lid: LidState = LidState.OPEN
    displays: list[DisplayConnector] = field(default_factory=lambda: [DisplayConnector("eDP-1", True)])
    temperatures_celsius: list[float] = field(default_factory=list)
    suspend_succeeds: bool = True
    hibernate_succeeds: bool = True
    lid_ac_action: int = 1
    lid_dc_action: int = 1
    power_source: PowerSource | None = None
    refuse_while_blocked: bool = True
    lid_policy_refusal: str | None = None  # set: the lid change is refused (LidPolicyRefused, this hint)
    sound_warnings: list[str] = field(default_factory=list)
    sound_failure: str | None = None
    brightness: BrightnessLevel | None = field(default_factory=lambda: BrightnessLevel("backlight/fake", 80, 100))
    brightness_failure: str | None = None
    idle: bool = False
    idle_since: datetime | None = None
    # Other programs' sleep blockers (issue 34.3): ``"otherBlockers": [{"who": "backup", "why": "...",
    # "pid": 1234, "uid": 1001, "what": "sleep"}]``; a suspend is refused while one is held unless asked
    # to ignore them (``SuspendIgnoresOtherBlockers``).
    other_blockers: list[SuspendBlocker] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what LIDGUARD_FAKE_STATE got wrong, for status

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FakeMachine:
        machine = cls()
        lid = str(data.get("lid", "open")).lower()
        machine.lid = _LID_VALUES.get(lid, LidState.UNKNOWN)
        displays = data.get("displays")
        if isinstance(displays, list) and all(isinstance(item, dict) for item in displays):
            machine.displays = [
                DisplayConnector(str(item.get("name", "")), bool(item.get("internal", False)))
                for item in displays
            ]
        elif "displays" in data:
            machine.problems.append('"displays" must be a list of objects like [{"name": "eDP-1", "internal": true}] '
                                    '(an empty list: no display); the default built-in display is used')
        temperatures = data.get("temperaturesCelsius", [])
        if isinstance(temperatures, list) and all(type(value) in (int, float) for value in temperatures):
            machine.temperatures_celsius = [float(value) for value in temperatures]
        else:
            machine.problems.append('"temperaturesCelsius" must be a list of numbers like [45.5, 50]; none is used')
        if str(data.get("lid", "open")).lower() not in _LID_VALUES:
            machine.problems.append('"lid" must be "open", "closed" or "unknown"; it reads as unknown')
        if "powerSource" in data and not isinstance(data["powerSource"], dict):
            machine.problems.append('"powerSource" must be an object like {"onAc": false, "batteryPercent": 80}')
        machine.suspend_succeeds = bool(data.get("suspendSucceeds", True))
        machine.hibernate_succeeds = bool(data.get("hibernateSucceeds", True))
        machine.refuse_while_blocked = bool(data.get("refuseWhileBlocked", True))
        refusal = data.get("lidPolicyRefusal")
        machine.lid_policy_refusal = str(refusal) if refusal else None
        warnings = data.get("soundWarnings", [])
        machine.sound_warnings = [str(item) for item in warnings] if isinstance(warnings, list) else []
        failure = data.get("soundFailure")
        machine.sound_failure = str(failure) if failure else None
        if "brightness" in data:
            machine.brightness = _brightness_from_json(data["brightness"])
        brightness_failure = data.get("brightnessFailure")
        machine.brightness_failure = str(brightness_failure) if brightness_failure else None
        machine.idle = data.get("idle") is True
        machine.idle_since = _utc_from_json(data.get("idleSinceUtc"))
        blockers = data.get("otherBlockers", [])
        if isinstance(blockers, list) and all(isinstance(item, dict) for item in blockers):
            machine.other_blockers = [_blocker_from_json(item) for item in blockers]
        else:
            machine.problems.append('"otherBlockers" must be a list of objects like [{"who": "backup", '
                                    '"why": "nightly", "pid": 1234, "uid": 1001}]; none is used')
        source = data.get("powerSource")
        if isinstance(source, dict):
            machine.power_source = PowerSource(source.get("onAc"), source.get("batteryPercent"),
                                               source.get("batteryStatus"))
        return machine


def _blocker_from_json(item: dict[str, Any]) -> SuspendBlocker:
    def number(value: Any) -> int | None:
        return value if type(value) is int else None

    return SuspendBlocker(str(item.get("who", "")), str(item.get("why", "")), number(item.get("pid")),
                          number(item.get("uid")), str(item.get("what", "sleep")), str(item.get("mode", "block")))


def _brightness_from_json(level: Any) -> BrightnessLevel | None:
    """``{"device", "value", "maximum"}``; anything else is no backlight."""
    if not isinstance(level, dict):
        return None
    value, maximum = level.get("value"), level.get("maximum")
    if type(value) is not int or type(maximum) is not int:
        return None
    return BrightnessLevel(str(level.get("device", "backlight/fake")), value, maximum)


def _utc_from_json(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


class FakeSoundError(RuntimeError):
    """Playback failed; ``warnings`` as a real backend attaches its volume-override warnings."""

    def __init__(self, message: str, warnings: list[str]) -> None:
        super().__init__(message)
        self.warnings = list(warnings)


class _Recorder:
    """Keeps every action in memory and appends it to the actions file when one is named."""

    def __init__(self, actions_path: Path | None) -> None:
        self.actions: list[dict[str, Any]] = []
        self._actions_path = actions_path
        self._lock = threading.Lock()
        self.lost = 0

    def record(self, action: str, **details: Any) -> None:
        entry = {"action": action, "pid": os.getpid(), "at": time.time(), **details}
        with self._lock:
            self.actions.append(entry)
            if self._actions_path is not None:
                line = json.dumps(entry, sort_keys=True) + "\n"
                from ..fileio_open import open_append

                try:  # a regular file only: never through a symlink, never waiting on a FIFO
                    fd = open_append(self._actions_path)
                except OSError:
                    self.lost += 1  # kept in memory; the named file is left as it is
                    return
                try:
                    os.write(fd, line.encode())
                finally:
                    os.close(fd)


class FakePowerHandle:
    def __init__(self, recorder: _Recorder, request: ProtectionRequest,
                 held: set[FakePowerHandle] | None = None) -> None:
        self._recorder = recorder
        self._request = request
        self._released = False
        self._held = held if held is not None else set()
        self.description = "fake power request"
        if request.prevent_system_sleep:
            self._held.add(self)

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        self._held.discard(self)
        self._recorder.record("protection-released", **_request_fields(self._request))


def _request_fields(request: ProtectionRequest) -> dict[str, Any]:
    return {
        "preventSystemSleep": request.prevent_system_sleep,
        "preventDisplaySleep": request.prevent_display_sleep,
        "preventAwayModeSleep": request.prevent_away_mode_sleep,
        "reason": request.reason,
    }


class FakePlatform:
    name = "fake"

    def __init__(self, machine: FakeMachine | None = None, *, state_path: Path | None = None,
                 actions_path: Path | None = None) -> None:
        self._machine = machine or FakeMachine()
        self._state_path = state_path
        self._recorder = _Recorder(actions_path)
        self._keep_awake: set[FakePowerHandle] = set()  # unreleased requests that prevent system sleep
        self.lid_policy_held = False
        self.power = self
        self.lid_policy = _FakeLidPolicy(self)
        self.lid = self
        self.display = self
        self.suspend = _FakeSuspender(self)
        self.thermal = self
        self.process = _FakeProcess()
        self.sound = self
        self.permission = _FakePermission(self)
        self.brightness = _FakeBrightness(self)

    @classmethod
    def from_environment(cls) -> FakePlatform:
        from .. import switches

        state = switches.fake_state_file()
        actions = switches.fake_actions_file()
        return cls(state_path=Path(state) if state else None, actions_path=Path(actions) if actions else None)

    # -- the simulated machine ------------------------------------------------------------------
    @property
    def machine(self) -> FakeMachine:
        if self._state_path is not None:
            problem = None
            try:
                data = json.loads(self._state_path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                data = {}
            except (OSError, ValueError) as error:
                data, problem = {}, f"not readable as JSON ({error}); the default machine is used"
            if not isinstance(data, dict):
                data, problem = {}, 'must be one JSON object like {"lid": "closed", "displays": []}'
            fresh = FakeMachine.from_json(data)
            if problem is not None:
                fresh.problems.insert(0, problem)
            fresh.lid_ac_action = self._machine.lid_ac_action
            fresh.lid_dc_action = self._machine.lid_dc_action
            self._machine = fresh
        return self._machine

    @property
    def actions(self) -> list[dict[str, Any]]:
        return self._recorder.actions

    def record(self, action: str, **details: Any) -> None:
        self._recorder.record(action, **details)

    # -- power ----------------------------------------------------------------------------------
    def apply(self, request: ProtectionRequest) -> FakePowerHandle:
        self._recorder.record("protection-applied", **_request_fields(request))
        return FakePowerHandle(self._recorder, request, self._keep_awake)

    def own_sleep_blockers(self) -> list[str]:
        """What this platform itself holds that a strict OS would refuse a sleep request for."""
        return (["keep-awake"] if self._keep_awake else []) + (["lid policy"] if self.lid_policy_held else [])

    # -- lid, display, thermal ------------------------------------------------------------------
    def read_lid_state(self) -> LidState:
        return self.machine.lid

    def list_connected_displays(self) -> list[DisplayConnector]:
        return list(self.machine.displays)

    def read_temperatures_celsius(self) -> list[float]:
        return list(self.machine.temperatures_celsius)

    # -- sound ----------------------------------------------------------------------------------
    def play(self, sound: str, *, volume_percent: int | None) -> list[str]:
        machine = self.machine
        if machine.sound_failure is not None:
            self._recorder.record("sound-failed", sound=sound, volumePercent=volume_percent)
            raise FakeSoundError(machine.sound_failure, machine.sound_warnings)
        self._recorder.record("sound-played", sound=sound, volumePercent=volume_percent)
        return list(machine.sound_warnings)

    def describe_capabilities(self, only: tuple[str, ...] | None = None) -> dict[str, str]:
        return {capability: "available (fake platform)" for capability in CAPABILITIES
                if only is None or capability in only}

    def describe_power_source(self) -> PowerSource:
        source = self.machine.power_source
        if source is None:
            raise Unsupported("power_source", "the simulated machine has no powerSource")
        return source

    def power_source_changes(self) -> PowerSourceChanges:
        """No change notifications: the runtime polls ``describe_power_source`` (tests drive a listener
        by replacing this method)."""
        raise Unsupported("power_source_changes", "the fake platform sends no power-source notifications")

    def native_module_statuses(self) -> list[NativeModuleStatus]:
        return []

    def restore_pending_state(self, data_dir: Path) -> list[str]:
        """Nothing beyond the lid policy is changed on this platform, so nothing to restore."""
        return []

    def close(self) -> None:
        return None


class _FakeBrightness:
    def __init__(self, platform: FakePlatform) -> None:
        self._platform = platform
        self._set: tuple[BrightnessLevel, BrightnessLevel] | None = None  # (state-file level then, level set)

    def _level(self) -> BrightnessLevel:
        machine = self._platform.machine
        if machine.brightness_failure is not None:
            raise OSError(machine.brightness_failure)
        if machine.brightness is None:
            raise Unsupported("brightness", "the simulated machine has no backlight")
        return machine.brightness

    def read_brightness(self) -> BrightnessLevel:
        level = self._level()
        if self._set is not None and self._set[0] == level:
            return self._set[1]  # what this process set, while the state file still names the same level
        return level

    def set_brightness(self, level: BrightnessLevel) -> None:
        current = self._level()
        if level.device != current.device or not 0 <= level.value <= current.maximum:
            raise OSError(f"fake backlight refuses {level}")
        self._set = (current, replace(current, value=level.value))
        self._platform.record("brightness-set", device=level.device, value=level.value)

    def read_idle(self) -> IdleReading:
        machine = self._platform.machine
        return IdleReading(machine.idle, machine.idle_since)

    def describe(self) -> str:
        return "available (fake platform)"


class _FakePermission:
    def __init__(self, platform: FakePlatform) -> None:
        self._platform = platform

    def run(self, subcommand: str, *, out: TextIO, err: TextIO) -> int:
        if subcommand not in PERMISSION_SUBCOMMANDS:
            print(f"Usage: lidguard <os>-permission {'|'.join(PERMISSION_SUBCOMMANDS)}", file=err)
            return 2
        self._platform.record(f"permission-{subcommand}")
        print(f"Fake platform: permission {subcommand} changes nothing.", file=out)
        return 0

    def describe(self) -> str:
        return "available (fake platform)"


class _FakeSuspender:
    def __init__(self, platform: FakePlatform) -> None:
        self._platform = platform

    def list_blockers(self) -> list[SuspendBlocker]:
        return [blocker for blocker in self._platform.machine.other_blockers if "sleep" in blocker.kinds()]

    def blocker_changes(self) -> SuspendBlockerChanges:
        raise Unsupported("suspend_blocker_changes", "the fake platform is polled")

    def suspend(self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        machine = self._platform.machine
        succeeds = machine.hibernate_succeeds if mode is SuspendMode.HIBERNATE else machine.suspend_succeeds
        action = "hibernate-requested" if mode is SuspendMode.HIBERNATE else "suspend-requested"
        others = self.list_blockers()
        if others and not ignore_other_blockers:
            self._platform.record(action, succeeded=False, blockedBy=[blocker.who for blocker in others])
            return SuspendResult(False, f"Fake {mode.value.lower()} refused: blocked by "
                                        f"{'; '.join(blocker.describe() for blocker in others)}.")
        blockers = self._platform.own_sleep_blockers()
        if blockers and machine.refuse_while_blocked:
            self._platform.record(action, succeeded=False, blockedBy=blockers)
            return SuspendResult(False, f"Fake {mode.value.lower()} refused: blocked by {' and '.join(blockers)} "
                                        "held by lidguard itself.")
        self._platform.record(action, succeeded=succeeds, blockedBy=blockers,
                              **({"ignoredOtherBlockers": [blocker.who for blocker in others]} if others else {}))
        if succeeds:
            return SuspendResult(True, f"Fake {mode.value.lower()} requested.")
        return SuspendResult(False, f"Fake {mode.value.lower()} failed as the simulated machine says.")


class _FakeLidPolicy:
    hold_ends_with_process = True  # nothing outlives the process: the lid backup is not fsynced

    def __init__(self, platform: FakePlatform) -> None:
        self._platform = platform

    def read_lid_actions(self) -> LidActionSnapshot:
        machine = self._platform.machine
        return LidActionSnapshot(FAKE_SCHEME_IDENTIFIER, machine.lid_ac_action, machine.lid_dc_action)

    def set_do_nothing(self, snapshot: LidActionSnapshot) -> None:
        machine = self._platform.machine
        if machine.lid_policy_refusal:
            self._platform.record("lid-policy-refused", hint=machine.lid_policy_refusal)
            raise LidPolicyRefused(machine.lid_policy_refusal, "the fake platform refuses the lid-policy change")
        machine.lid_ac_action = 0
        machine.lid_dc_action = 0
        self._platform.lid_policy_held = True
        self._platform.record("lid-policy-changed", powerSchemeIdentifier=snapshot.power_scheme_identifier)

    def restore_lid_actions(self, snapshot: LidActionSnapshot) -> None:
        machine = self._platform.machine
        if snapshot.alternating_current_action is not None:
            machine.lid_ac_action = snapshot.alternating_current_action
        if snapshot.direct_current_action is not None:
            machine.lid_dc_action = snapshot.direct_current_action
        self._platform.lid_policy_held = False
        self._platform.record(
            "lid-policy-restored",
            powerSchemeIdentifier=snapshot.power_scheme_identifier,
            alternatingCurrentAction=snapshot.alternating_current_action,
            directCurrentAction=snapshot.direct_current_action,
        )

    def drop_runtime_hold(self) -> None:
        self._platform.lid_policy_held = False
        self._platform.record("lid-policy-hold-dropped")


class _FakeProcess:
    """Real process facts through portable calls; exit watching polls (the fake is not for laptops)."""

    def read_ancestry(self, pid: int) -> list[ProcessInfo]:
        from .. import proctree

        return proctree.read_ancestry(pid)

    def is_alive(self, pid: int) -> bool:
        from .. import proctree

        return proctree.is_process_alive(pid)

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        from .. import proctree

        return proctree.descendant_cpu_seconds(pid)

    async def wait_for_exit(self, pid: int) -> None:
        """A pidfd where the OS has one (no wake-ups at all: a mock-clock test sleeping for simulated hours
        woke a 0.2 s poll 5 times per simulated second), else a poll."""
        import os

        import anyio

        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None and pid > 0:
            try:
                pidfd = pidfd_open(pid)
            except ProcessLookupError:
                return
            except OSError:
                pass  # seccomp, a thread id, no descriptors left: poll
            else:
                try:
                    await anyio.wait_readable(pidfd)
                finally:
                    os.close(pidfd)
                return
        while self.is_alive(pid):
            await anyio.sleep(0.2)
