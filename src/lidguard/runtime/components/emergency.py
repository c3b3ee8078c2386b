"""Emergency Hibernation (seed 001, REFERENCE 9.5): a thermal monitor while protection is held.

The monitor task lives while protection is wanted and the setting is on, and also while a suspend
waits for another program's sleep blocker (``blocked_suspend.py``: a documented deviation from seed 001,
issue 34.3); every 10 s (first tick
after 10 s) it acts only when protection is applied and the lid is closed with no visible display
once internal panels are excluded, reads the thermal zones (Low/Average/High) off the gate and
compares with the threshold clamped to 70-110 Celsius. Unavailable temperatures never trigger.

On a trigger: re-validate under the gate, cancel the pending suspend (and with it any ask-before-
sleep wait), send the PreSuspend webhook (reason EmergencyHibernation) and wait for it at most 5 s
(a slow or failing receiver never blocks longer), then hold protection back (``holds_back_protection``):
lidguard's own keep-awake and lid policy (restored from the backup) are released right before the
request, because a strict OS refuses while any block on sleep is held, the caller's own included
(logind BlockedByInhibitorLock, macOS ``disablesleep 1``). Then Hibernate, ignoring the suspend mode,
delay, sound and volume; when Hibernate fails, Sleep at once; every result goes to suspend-history.
After an accepted request protection stays released until the lid opens (or a display appears);
when both are refused it is re-applied at once for the sessions still running, and logged. The
decisions are the pure functions below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ...platform.api import SuspendMode, SuspendResult, TemperatureMode, Unsupported, aggregate_temperature
from ...settings.model import EMERGENCY_TEMPERATURE_MAX, EMERGENCY_TEMPERATURE_MIN, Settings
from ..eligibility import Eligibility
from ..logs import SuspendHistoryEntry
from . import ComponentBase, webhooks

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["COMMAND", "POLL_SECONDS", "EmergencyComponent", "TickDecision", "clamp_threshold", "decide_tick",
           "monitor_wanted"]

POLL_SECONDS = 10.0
COMMAND = "emergency-hibernation-monitor"
REASON = "EmergencyHibernation"
HOLD_REASON = "Emergency Hibernation released protection (until the lid opens)"


# -- pure decisions ---------------------------------------------------------------------------------------
def clamp_threshold(celsius: int) -> int:
    return min(EMERGENCY_TEMPERATURE_MAX, max(EMERGENCY_TEMPERATURE_MIN, celsius))


def monitor_wanted(*, enabled: bool, protection_wanted: bool, stopping: bool) -> bool:
    """The monitor task runs while protection is wanted (and so applied) and the setting is on."""
    return enabled and protection_wanted and not stopping


@dataclass(frozen=True, slots=True)
class TickDecision:
    trigger: bool
    observed: int | None
    threshold: int


def decide_tick(*, protection_applied: bool, eligibility: Eligibility, observed: int | None,
                threshold_setting: int) -> TickDecision:
    """Hibernate when protection is applied, the lid closed with no display and the reading reaches
    the clamped threshold; no reading (unavailable) never triggers."""
    threshold = clamp_threshold(threshold_setting)
    trigger = protection_applied and eligibility.eligible and observed is not None and observed >= threshold
    return TickDecision(trigger, observed, threshold)


# -- the component --------------------------------------------------------------------------------------
class EmergencyComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._scope: anyio.CancelScope | None = None
        self._working = 0  # a hibernation request or its webhook in flight
        self._holding: str | None = None  # protection released for (and after) the request
        self._hold_scope: anyio.CancelScope | None = None

    def holds_back_protection(self) -> str | None:
        return self._holding

    def state_changed(self) -> None:
        self._sync()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        if not new.emergency_hibernation_on_high_temperature and self._hold_scope is not None:
            self._hold_scope.cancel()  # turning the feature off gives protection back (the caller reconciles)
            self._holding = None
        self._sync()

    def busy(self) -> bool:
        return self._working > 0

    @property
    def monitoring(self) -> bool:
        return self._scope is not None

    def _sync(self) -> None:
        runtime = self._runtime
        wanted = runtime.running and monitor_wanted(
            enabled=runtime.settings.emergency_hibernation_on_high_temperature,
            protection_wanted=runtime.protection_wanted() or runtime.blocked.waiting, stopping=runtime.stopping)
        if wanted and self._scope is None:
            self._scope = runtime.spawn(self._monitor)
        elif not wanted and self._scope is not None:
            self._scope.cancel()
            self._scope = None

    async def _monitor(self, scope: anyio.CancelScope) -> None:
        try:
            while True:
                await anyio.sleep(POLL_SECONDS)
                await self._tick()
        finally:
            if self._scope is scope:
                self._scope = None

    async def _read_temperature(self, mode: TemperatureMode) -> int | None:
        runtime = self._runtime
        try:
            values = await runtime.call_platform(runtime.platform.thermal.read_temperatures_celsius)
        except (Unsupported, OSError, ValueError, TimeoutError):
            return None
        except Exception as error:  # a sampler bug is "unavailable", never a trigger
            runtime.exception_log.record("thermal-read-failed", error)
            return None
        return aggregate_temperature(values, mode)

    def _guarding(self) -> bool:
        """Protection applied, or a suspend another program blocks (issue 34.3: the lid is closed and
        nothing keeps the machine from heating up in a bag but that other program)."""
        return self._runtime.protection.applied or self._runtime.blocked.waiting

    async def _tick(self) -> None:
        runtime = self._runtime
        if not self._guarding():
            return
        reading = await runtime.machine.fresh()
        if not reading.eligibility.eligible:
            return  # the lid is open or a display is on: no thermal read at all
        settings = runtime.settings
        mode = settings.emergency_hibernation_temperature_mode
        observed = await self._read_temperature(mode)
        decision = decide_tick(protection_applied=self._guarding(), eligibility=reading.eligibility,
                               observed=observed, threshold_setting=settings.emergency_hibernation_temperature_celsius)
        if decision.trigger:
            await self._hibernate(decision, mode)

    async def _hibernate(self, decision: TickDecision, mode: TemperatureMode) -> None:
        runtime = self._runtime
        observed, threshold = decision.observed, decision.threshold
        async with runtime.gate:
            if (runtime.stopping or not self._guarding()
                    or not runtime.settings.emergency_hibernation_on_high_temperature):
                runtime.log("emergency-hibernation-canceled", COMMAND,
                            "Canceled Emergency Hibernation because protection is no longer applied.")
                return
            self._working += 1
            runtime.suspend.cancel("Emergency Hibernation")
            runtime.blocked.end("Emergency Hibernation")
            runtime.log("emergency-hibernation-thermal-detected", COMMAND,
                        f"Observed {observed} Celsius ({mode.value}) at or above the Emergency Hibernation "
                        f"threshold of {threshold} Celsius.", succeeded=False)
            url = runtime.settings.pre_suspend_webhook_url
            runtime.state_changed()
        try:
            with anyio.CancelScope(shield=True):  # the monitor may be canceled now; the request must finish
                if url:
                    await self._send_webhook(url)
                await self._release_and_request(decision, mode)
        finally:
            self._working -= 1
            with anyio.CancelScope(shield=True):
                async with runtime.gate:
                    runtime.state_changed()
                await runtime.protection.reconcile()

    async def _send_webhook(self, url: str) -> None:
        """PreSuspend with reason EmergencyHibernation, awaited: answered, failed or 5 s passed."""
        runtime = self._runtime

        def failed(message: str) -> None:
            runtime.log("emergency-hibernation-webhook-failed", COMMAND, message, succeeded=False)

        await runtime.webhooks.send("PreSuspend", url, webhooks.pre_suspend_body(REASON), failed)

    async def _release_and_request(self, decision: TickDecision, mode: TemperatureMode) -> None:
        """Releases lidguard's own blockers (keep-awake right before Hibernate, then Sleep; the lid policy
        from its backup after them where its hold never blocks a request); protection stays away after
        an accepted request until the lid opens, and comes back at once for the running sessions when
        both were refused."""
        runtime = self._runtime
        async with runtime.gate:
            if runtime.stopping:
                return
            self._holding = HOLD_REASON
            runtime.state_changed()
        # The lid hold (Linux) goes only after the requests, as for the post-stop suspend: released first,
        # logind's own lid handling suspended the machine before the Hibernate (tests/reallogind).
        runtime.protection.keep_lid_for_suspend(True)
        try:
            await runtime.protection.reconcile()
            result = await self._request(SuspendMode.HIBERNATE, decision, mode)
            if not result.succeeded:
                result = await self._request(SuspendMode.SLEEP, decision, mode)
        finally:
            runtime.protection.keep_lid_for_suspend(False)
        if result.succeeded:
            async with runtime.gate:
                if self._holding and self._hold_scope is None and not runtime.stopping:
                    self._hold_scope = runtime.spawn(self._hold_until_the_lid_opens)
            return
        async with runtime.gate:
            self._holding = None
            runtime.log("emergency-hibernation-protection-reapplied", COMMAND,
                        "Hibernate and Sleep were both refused; re-applying protection for the "
                        f"{len(runtime.state.sessions)} session(s) still running.", succeeded=False)
            runtime.state_changed()

    async def _hold_until_the_lid_opens(self, scope: anyio.CancelScope) -> None:
        """After an accepted request protection stays released (re-applying it could undo the
        hibernation) until the lid opens or a display appears, checked every poll. A cancelled hold
        (the runtime exits, or the setting was turned off, which ends the hold itself) re-applies nothing."""
        runtime = self._runtime
        try:
            while runtime.state.protection_wanted:
                await anyio.sleep(POLL_SECONDS)
                reading = await runtime.machine.fresh()
                if not reading.eligibility.eligible:
                    break
            with anyio.CancelScope(shield=True):
                async with runtime.gate:
                    if self._holding and runtime.state.protection_wanted and not runtime.stopping:
                        runtime.log("emergency-hibernation-protection-returned", COMMAND,
                                    "Re-applying protection after Emergency Hibernation: the lid is open "
                                    "or a display is on.")
                    self._holding = None
                    runtime.state_changed()
                await runtime.protection.reconcile()
        finally:
            if self._hold_scope is scope:
                self._hold_scope = None

    async def _request(self, suspend_mode: SuspendMode, decision: TickDecision,
                       mode: TemperatureMode) -> SuspendResult:
        runtime = self._runtime
        prefix = "emergency-hibernation"
        if suspend_mode is not SuspendMode.HIBERNATE:
            prefix += "-sleep-fallback"
        runtime.log(f"{prefix}-requesting", COMMAND, f"Requesting {suspend_mode.value} because of high temperature.")
        result, blockers = await runtime.blocked.request(suspend_mode)
        event_name = f"{prefix}-{'requested' if result.succeeded else 'failed'}"
        async with runtime.gate:
            runtime.log(event_name, COMMAND, result.message, succeeded=result.succeeded)
            runtime.suspend_history.append(SuspendHistoryEntry(
                recorded_at=runtime.clock.now(), suspend_mode=suspend_mode.value, reason=REASON,
                succeeded=result.succeeded, message=result.message, event_name=event_name, command_name=COMMAND,
                active_session_count=len(runtime.state.sessions), suspend_trigger_session_count=0,
                observed_temperature_celsius=decision.observed,
                emergency_hibernation_temperature_celsius=decision.threshold,
                emergency_hibernation_temperature_mode=mode.value,
                blockers=tuple(blocker.to_wire() for blocker in blockers),
            ), keep=runtime.settings.suspend_history_entry_count)
        return result
