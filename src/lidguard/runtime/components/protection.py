"""Holds keep-awake protection while anyone wants it, changing only what changed.

``reconcile()`` moves the applied protection to what is wanted now (``Runtime.protection_wanted``
and the current settings), or to nothing while a component holds it back (``held_back``: sessions
stay, protection and the lid policy are released). It runs off the gate under its own lock, shielded: the slow platform
calls (logind, powercfg, IOPMAssertion) never hold up other requests, and a cancelled runtime
never leaves half an apply behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ..gate import Gate
from ..protection import LID_ONLY, ProtectionCoordinator, ProtectionTarget, lid_hold_allows_suspend, protection_target
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["ProtectionComponent"]

_MAX_ROUNDS = 4  # the wanted state may move while a round runs; converge again, boundedly


class ProtectionComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._coordinator = ProtectionCoordinator(runtime.platform, runtime.paths.lid_backup_file,
                                                  self._log_failure)
        self._lock = Gate()
        self._target_of: object = None  # the settings ``_settings_target`` was built from
        self._settings_target: ProtectionTarget | None = None
        self._retry_lid = False
        self._lid_for_suspend = False

    @property
    def applied(self) -> bool:
        return self._coordinator.applied

    def _log_failure(self, event_name: str, message: str) -> None:
        self._runtime.log(event_name, "protection", message, succeeded=False)

    def lid_held_back(self) -> str | None:
        """Why the lid-close change is left alone while keep-awake is held (a refused permission, an
        unsettled backup), else None."""
        return self._coordinator.lid_held_back

    def retry_refused_lid(self) -> None:
        """A start or a settings change tries a refused lid change again at the next reconcile (the
        permission may be there now); other events never do (no sudo/polkit call per hook event)."""
        if self._coordinator.lid_held_back is not None:
            self._retry_lid = True

    def held_back(self) -> list[str]:
        """Why wanted protection is not applied now (empty: nothing holds it back)."""
        reasons = (component.holds_back_protection() for component in self._runtime.answering("holds_back_protection"))
        return [reason for reason in reasons if reason]

    def keep_lid_for_suspend(self, keep: bool) -> None:
        """While lidguard's own suspend request runs, keep a held lid change (keep-awake still goes),
        where the platform's lid hold does not block that request (``lid_hold_allows_suspend``).

        Why (issue 34, real logind 252 with HandleLidSwitch=suspend): releasing the handle-lid-switch
        inhibitor while the lid is closed makes logind suspend by itself; released before lidguard's
        request, that was a second suspend (or lidguard's request answered "already in progress").
        Released after it, logind's resume hold-off ignores the lid and exactly one suspend happens,
        after the PreSuspend webhook and the sound as before."""
        self._lid_for_suspend = keep and lid_hold_allows_suspend(self._runtime.platform)

    def _target(self) -> ProtectionTarget | None:
        runtime = self._runtime
        if not runtime.protection_wanted() or self.held_back():
            if self._lid_for_suspend and self._coordinator.current is not None \
                    and self._coordinator.current.change_lid_action:
                return LID_ONLY
            return None
        settings = runtime.settings
        if settings is not self._target_of:  # built once per settings object (asked on every event)
            self._target_of, self._settings_target = settings, protection_target(settings)
        return self._settings_target

    async def reconcile(self) -> Exception | None:
        """Converges to the wanted protection; returns the platform error when a change failed."""
        runtime = self._runtime
        if not self._retry_lid and not self._lock.locked() and self._target() == self._coordinator.current:
            return None  # nothing to change and nobody changing it (most events): no scope, no lock
        with anyio.CancelScope(shield=True):
            async with self._lock:
                held_back = self._coordinator.lid_held_back
                try:
                    return await self._converge_rounds()
                finally:
                    if self._coordinator.lid_held_back != held_back:
                        runtime.status_changed()
        return None  # not reached: a shielded scope swallows nothing (mypy cannot know)

    async def _converge_rounds(self) -> Exception | None:
        runtime = self._runtime
        if self._retry_lid:
            self._retry_lid = False
            self._coordinator.retry_refused_lid()
        for _ in range(_MAX_ROUNDS):
            target = self._target()
            if target == self._coordinator.current:
                return None
            try:
                await runtime.call_platform(self._coordinator.converge, target)
            except Exception as error:
                if target is None:
                    event, message = "protection-release-failed", f"Releasing protection failed: {error}"
                else:
                    event, message = "protection-sync-failed", f"Protection change failed: {error}"
                runtime.exception_log.record(event, error)
                runtime.log(event, "protection", message, succeeded=False)
                return error
        return None

    async def release_all(self) -> None:
        """Releases whatever is held, whatever is wanted (runtime exit)."""
        runtime = self._runtime
        with anyio.CancelScope(shield=True):
            async with self._lock:
                try:
                    await runtime.call_platform(self._coordinator.converge, None)
                except Exception as error:
                    runtime.exception_log.record("protection-release-failed", error)
                    runtime.log("protection-release-failed", "protection", f"Releasing protection failed: {error}",
                                succeeded=False)
