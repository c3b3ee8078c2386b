"""Applies and releases keep-awake protection and the lid-close policy through the platform.

The lid-action change is backed up ONCE to ``pending-lid-action-backup.json`` (PascalCase, the
original tool's format): an existing file is never overwritten, restore reads only from it, and a
missing file when a restore is expected skips the lid write and logs a failure (seed 001).
The same file lets the next ``lidguard`` command restore the policy after a crash.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..fileio import write_atomic
from ..platform.api import LidActionSnapshot, Platform, PowerHandle, ProtectionRequest
from ..settings.model import Settings

__all__ = [
    "LidBackupError",
    "ProtectionCoordinator",
    "ProtectionTarget",
    "protection_target",
    "read_lid_backup",
    "restore_pending_lid_backup",
]

logger = logging.getLogger(__name__)


class LidBackupError(Exception):
    """The pending lid-action backup file exists but cannot be used."""


def read_lid_backup(path: Path) -> LidActionSnapshot | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise LidBackupError(f"The lid-action backup {path} cannot be read: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("PowerSchemeIdentifier"), str):
        raise LidBackupError(f"The lid-action backup {path} is not a lidguard backup.")

    def action(included: str, value: str) -> int | None:
        return int(data[value]) if data.get(included) and data.get(value) is not None else None

    return LidActionSnapshot(
        power_scheme_identifier=data["PowerSchemeIdentifier"],
        alternating_current_action=action("IncludesAlternatingCurrent", "AlternatingCurrentAction"),
        direct_current_action=action("IncludesDirectCurrent", "DirectCurrentAction"),
    )


def _write_lid_backup(path: Path, snapshot: LidActionSnapshot, *, durable: bool = True) -> None:
    data = {
        "SavedAt": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "PowerSchemeIdentifier": snapshot.power_scheme_identifier,
        "IncludesAlternatingCurrent": snapshot.alternating_current_action is not None,
        "AlternatingCurrentAction": snapshot.alternating_current_action,
        "IncludesDirectCurrent": snapshot.direct_current_action is not None,
        "DirectCurrentAction": snapshot.direct_current_action,
    }
    write_atomic(path, json.dumps(data, indent=2) + "\n", durable=durable)


def restore_pending_lid_backup(platform: Platform, path: Path) -> bool:
    """Crash recovery: restores the policy from a pending backup and deletes it. True if it did."""
    snapshot = read_lid_backup(path)
    if snapshot is None:
        return False
    platform.lid_policy.restore_lid_actions(snapshot)
    path.unlink(missing_ok=True)
    return True


def protection_request(settings: Settings) -> ProtectionRequest:
    power = settings.power_request
    return ProtectionRequest(
        prevent_system_sleep=power.prevent_system_sleep,
        prevent_display_sleep=power.prevent_display_sleep,
        prevent_away_mode_sleep=power.prevent_away_mode_sleep,
        reason=power.reason,
    )


@dataclass(frozen=True, slots=True)
class ProtectionTarget:
    """What protection should look like: the power request and whether the lid-close action is held."""

    request: ProtectionRequest
    change_lid_action: bool


def protection_target(settings: Settings) -> ProtectionTarget:
    return ProtectionTarget(protection_request(settings), settings.change_lid_action)


def _hold_ends_with_process(platform: Platform) -> bool:
    """True when the platform's lid hold is gone once this process is (a logind inhibitor, the fake):
    its backup then needs to survive only the process, not a power loss, and is not fsynced."""
    return getattr(platform.lid_policy, "hold_ends_with_process", False) is True


class ProtectionCoordinator:
    """Holds at most one applied protection and moves it to a target changing only what differs.

    A new power request is acquired before the old one is released (make-before-break); the lid
    policy and its backup are touched only when ``change_lid_action`` itself changes. The backup is
    flushed to the disk before the policy changes, unless the platform's hold ends with the process
    (an fsync can cost tens of milliseconds, on every first session after an idle moment). Blocking
    calls: run it off the event loop, one call at a time.
    """

    def __init__(self, platform: Platform, backup_path: Path,
                 log_failure: Callable[[str, str], None]) -> None:
        self._platform = platform
        self._backup_path = backup_path
        self._log_failure = log_failure
        self._power: PowerHandle | None = None
        self._request: ProtectionRequest | None = None
        self._lid_changed = False
        self._durable_backup = not _hold_ends_with_process(platform)

    @property
    def applied(self) -> bool:
        return self._power is not None or self._lid_changed

    @property
    def current(self) -> ProtectionTarget | None:
        if not self.applied:
            return None
        return ProtectionTarget(self._request or ProtectionRequest(), self._lid_changed)

    def converge(self, target: ProtectionTarget | None) -> None:
        """Moves to ``target`` (None: release everything). On a failure from nothing applied, rolls
        back and re-raises; on a failure while protected, keeps what is held and re-raises."""
        if target is None:
            self.release()
            return
        from_nothing = not self.applied
        try:
            if self._power is None or self._request != target.request:
                new = self._platform.power.apply(target.request)
                old, self._power, self._request = self._power, new, target.request
                if old is not None:
                    old.release()
            if target.change_lid_action and not self._lid_changed:
                self._hold_lid_policy()
            elif not target.change_lid_action and self._lid_changed:
                self._lid_changed = False
                self._restore_lid_policy()
        except Exception:
            if from_nothing:
                self.release()
            raise

    def apply(self, settings: Settings) -> None:
        """Applies protection for ``settings`` if nothing is applied yet."""
        if not self.applied:
            self.converge(protection_target(settings))

    def _hold_lid_policy(self) -> None:
        snapshot = read_lid_backup(self._backup_path)
        if snapshot is None:
            snapshot = self._platform.lid_policy.read_lid_actions()
            _write_lid_backup(self._backup_path, snapshot, durable=self._durable_backup)
        self._lid_changed = True
        self._platform.lid_policy.set_do_nothing(snapshot)

    def release(self) -> None:
        """Releases everything held; restores the lid policy only from the backup file."""
        errors: list[Exception] = []
        if self._lid_changed:
            self._lid_changed = False
            try:
                self._restore_lid_policy()
            except Exception as error:  # keep releasing the power request
                errors.append(error)
        if self._power is not None:
            power, self._power, self._request = self._power, None, None
            try:
                power.release()
            except Exception as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def _restore_lid_policy(self) -> None:
        try:
            snapshot = read_lid_backup(self._backup_path)
        except LidBackupError as error:
            snapshot = None
            message = f"Skipped lid policy restore: {error}"
        else:
            message = (f"Skipped lid policy restore because the pending backup {self._backup_path} "
                       "was missing.")
        if snapshot is None:
            self._platform.lid_policy.drop_runtime_hold()
            self._log_failure("lid-action-restore-skipped", message)
            return
        self._platform.lid_policy.restore_lid_actions(snapshot)
        self._backup_path.unlink(missing_ok=True)
