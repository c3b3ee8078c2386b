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
from datetime import datetime, timezone
from pathlib import Path

from ..fileio import write_atomic
from ..platform.api import LidActionSnapshot, Platform, PowerHandle, ProtectionRequest
from ..settings.model import Settings

__all__ = ["LidBackupError", "ProtectionCoordinator", "read_lid_backup", "restore_pending_lid_backup"]

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


def _write_lid_backup(path: Path, snapshot: LidActionSnapshot) -> None:
    data = {
        "SavedAt": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "PowerSchemeIdentifier": snapshot.power_scheme_identifier,
        "IncludesAlternatingCurrent": snapshot.alternating_current_action is not None,
        "AlternatingCurrentAction": snapshot.alternating_current_action,
        "IncludesDirectCurrent": snapshot.direct_current_action is not None,
        "DirectCurrentAction": snapshot.direct_current_action,
    }
    write_atomic(path, json.dumps(data, indent=2) + "\n")


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


class ProtectionCoordinator:
    """Holds at most one applied protection. Blocking calls: run it off the event loop."""

    def __init__(self, platform: Platform, backup_path: Path,
                 log_failure: Callable[[str, str], None]) -> None:
        self._platform = platform
        self._backup_path = backup_path
        self._log_failure = log_failure
        self._power: PowerHandle | None = None
        self._lid_changed = False

    @property
    def applied(self) -> bool:
        return self._power is not None or self._lid_changed

    def apply(self, settings: Settings) -> None:
        """Applies protection if it is not applied yet; rolls back on failure and re-raises."""
        if self.applied:
            return
        self._power = self._platform.power.apply(protection_request(settings))
        if not settings.change_lid_action:
            return
        try:
            snapshot = read_lid_backup(self._backup_path)
            if snapshot is None:
                snapshot = self._platform.lid_policy.read_lid_actions()
                _write_lid_backup(self._backup_path, snapshot)
            self._lid_changed = True
            self._platform.lid_policy.set_do_nothing(snapshot)
        except Exception:
            self.release()
            raise

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
            power, self._power = self._power, None
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
