"""Power policy (seed 004, issue 19): protect only on a power source the user accepts.

``PowerPolicy`` AcOrBattery (default) protects on AC and on battery at or above ``BatteryFloorPercent``
(30-100 %, default 30); AcOnly protects on AC only. Otherwise this component holds protection back
(``holds_back_protection``): the keep-awake request and the lid policy are released (the lid policy
restored from its backup) while the sessions stay tracked, and the reply says why
(``ProtectionHeldBack``). Back on AC or above the floor protection returns. The change itself never
schedules a suspend: the session state does not move.

Unknown power fails closed, like a battery below the floor (issue 32): a battery that gives no
percentage, a source that cannot say whether it is on AC and gives none, a failed read (the reason
says which). AC with an unreadable percentage is fine; a source that cannot say whether it is on AC
but reads at or above the floor counts as battery (AcOnly holds back). A machine that lists no
battery or adapter at all (``Unsupported``: a desktop or a VM) runs on mains.

The power source is read at once when a session starts wanting protection, then again at once on
every change notification of the platform (``Platform.power_source_changes``: kernel power_supply
uevents on Linux, the IOPS notify(3) names on macOS, power setting notifications on Windows) and at
the latest every ``POLL_SECONDS`` (a slow poll, also the only source where the platform has no
notifications or its listener fails; a failure is logged once per runtime and the listener is not
reopened; event-driven reads are at least ``EVENT_GAP_SECONDS`` apart). The listener is opened only
while a session wants protection and closed when none does; nothing is read then.
The decision is the pure ``decide`` below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ...platform.api import PowerSource, PowerSourceChanges, Unsupported
from ...settings.model import PowerPolicy, Settings
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["COMMAND", "EVENT_GAP_SECONDS", "POLL_SECONDS", "PowerDecision", "PowerPolicyComponent", "decide"]

COMMAND = "power-policy"
POLL_SECONDS = 60.0
EVENT_GAP_SECONDS = 1.0  # at most one event-driven read a second: a burst of uevents (docking) is one read


@dataclass(frozen=True, slots=True)
class PowerDecision:
    allowed: bool
    reason: str = ""  # why protection is held back (empty when allowed)


def decide(*, policy: PowerPolicy, floor_percent: int, source: PowerSource | Exception) -> PowerDecision:
    """Whether protection may be applied on ``source`` (a reading, or the error reading it raised)."""
    if isinstance(source, Unsupported):
        return PowerDecision(True)  # no battery or adapter listed at all: mains
    if isinstance(source, Exception):  # nothing known: held back like a low battery
        return PowerDecision(False, f"The power source could not be read ({type(source).__name__}): protection "
                                    f"is held back as on a battery below the floor of {floor_percent} % until a "
                                    "reading shows AC or a battery above the floor.")
    if source.on_ac is True:
        return PowerDecision(True)  # AC: whatever the percentage says, or if it cannot be read
    note = " (the power source is unknown)" if source.on_ac is None else ""
    if policy is PowerPolicy.AC_ONLY:
        return PowerDecision(False, f"On battery{note} and the power policy is AcOnly: protection is held back "
                                    "until AC returns.")
    percent = source.battery_percent
    if percent is None:
        return PowerDecision(False, f"On battery{note} with an unknown charge (no percentage could be read): "
                                    f"protection is held back as below the battery floor of {floor_percent} % "
                                    "until AC returns or the battery reads above the floor.")
    if percent < floor_percent:
        return PowerDecision(False, f"On battery at {percent} %{note}, below the battery floor of {floor_percent} %: "
                                    "protection is held back until AC returns or the battery is above the floor.")
    return PowerDecision(True)


class PowerPolicyComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._held: str | None = None
        self._source: PowerSource | Exception | None = None  # the last reading
        self._scope: anyio.CancelScope | None = None
        self._events_off = False  # Unsupported, or failed once: poll only for the rest of this runtime

    def holds_back_protection(self) -> str | None:
        return self._held

    def state_changed(self) -> None:
        self._sync()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        if (old.power_policy, old.battery_floor_percent) != (new.power_policy, new.battery_floor_percent):
            self._decide()  # the caller reconciles protection afterwards
        self._sync()

    def _sync(self) -> None:
        runtime = self._runtime
        wanted = runtime.running and not runtime.stopping and runtime.state.protection_wanted
        if wanted and self._scope is None:
            self._scope = runtime.spawn(self._watch)
        elif not wanted and self._scope is not None:
            self._scope.cancel()
            self._scope = None

    def _decide(self) -> bool:
        """Gate held. Applies the last reading to the current settings; True when the hold changed."""
        if self._source is None:
            return False
        settings = self._runtime.settings
        decision = decide(policy=settings.power_policy, floor_percent=settings.battery_floor_percent,
                          source=self._source)
        held = None if decision.allowed else decision.reason
        if held == self._held:
            return False
        was_held, self._held = self._held, held
        if held is not None:
            self._runtime.log("power-policy-protection-held-back", COMMAND, held, succeeded=False)
        elif was_held is not None:
            self._runtime.log("power-policy-protection-returned", COMMAND,
                              "Protection returns: the power source meets the power policy again.")
        return True

    async def _read(self) -> PowerSource | Exception:
        runtime = self._runtime
        try:
            return await runtime.call_platform(runtime.platform.describe_power_source)
        except Exception as error:  # Unsupported, OSError or a reader bug: decide() knows what each means
            if not isinstance(error, (Unsupported, OSError, ValueError)):
                runtime.exception_log.record("power-source-read-failed", error)
            return error

    def _events_failed(self, error: Exception) -> None:
        self._events_off = True
        if not isinstance(error, Unsupported):
            self._runtime.log("power-source-events-unavailable", COMMAND,
                              f"Power-source change notifications failed ({error}); the power source is read "
                              f"every {POLL_SECONDS:.0f} s instead.", succeeded=False)

    def _open_changes(self) -> PowerSourceChanges | None:
        if self._events_off:
            return None
        try:
            return self._runtime.platform.power_source_changes()
        except Exception as error:  # Unsupported, OSError (refused) or a backend bug: poll instead
            if not isinstance(error, (Unsupported, OSError)):
                self._runtime.exception_log.record("power-source-events-failed", error)
            self._events_failed(error)
            return None

    async def _wait_for_change(self, changes: PowerSourceChanges | None) -> PowerSourceChanges | None:
        """Until a notification or the slow poll; returns the listener to keep (None after a failure)."""
        if changes is None:
            await anyio.sleep(POLL_SECONDS)
            return None
        failure: Exception | None = None
        with anyio.move_on_after(POLL_SECONDS) as poll:
            await anyio.sleep(EVENT_GAP_SECONDS)  # what arrives meanwhile waits in the listener: one wake
            try:
                await changes.wait()
            except Exception as error:  # the listener broke: close it and poll from now on
                failure = error
        if failure is None:
            return changes
        changes.close()
        if not isinstance(failure, OSError):
            self._runtime.exception_log.record("power-source-events-failed", failure)
        self._events_failed(failure)
        with anyio.CancelScope(deadline=poll.deadline):
            await anyio.sleep_forever()  # the rest of this poll interval
        return None

    async def _watch(self, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        changes = self._open_changes()
        try:
            while True:
                source = await self._read()
                async with runtime.gate:
                    self._source = source
                    changed = self._decide()
                    if changed:
                        runtime.state_changed()
                if changed:
                    await runtime.protection.reconcile()
                changes = await self._wait_for_change(changes)
        finally:
            if changes is not None:
                changes.close()
            if self._scope is scope:
                self._scope = None
