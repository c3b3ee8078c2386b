"""Applies and releases keep-awake protection and the lid-close policy through the platform.

The lid-action change is backed up ONCE to ``pending-lid-action-backup.json`` (PascalCase, the
original tool's format): an existing file is never overwritten, restore reads only from it, and a
missing file when a restore is expected skips the lid write and logs a failure (seed 001).
The same file lets the next ``lidguard`` command restore the policy after a crash.

Keep-awake never depends on that file. A backup that cannot be used (not JSON, the wrong shape, a
number out of range, a directory, a FIFO) is set aside - renamed to
``pending-lid-action-backup.unusable-<UTC>.json``, its values never guessed - and ``status`` and
``doctor`` name it. Keep-awake is applied anyway; the lid policy is changed again only once the
backup question is settled: the set-aside file is gone (the user checked the lid-close setting and
deleted it), or the platform's lid hold cannot outlive its process (a logind inhibitor, the fake:
what the machine does now is the user's own setting). A backup that cannot be written (a full disk)
leaves the lid policy alone too, never keep-awake.

A lid change the OS refuses for want of a permission (``LidPolicyRefused``: no sudoers rule, no
polkit grant, an access-denied power setting) is never fatal either: keep-awake stays, the backup
written for it is dropped (nothing changed), ``lid_held_back`` says why (status, doctor, the start's
reply) and ``retry_refused_lid`` lets the next start or settings change try again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..fileio import UnusableFileError, read_json_object, write_atomic
from ..platform.api import LidActionSnapshot, LidPolicyRefused, Platform, PowerHandle, ProtectionRequest
from ..settings.model import Settings

__all__ = [
    "LidBackupError",
    "LidBackupSetAside",
    "ProtectionCoordinator",
    "ProtectionTarget",
    "protection_target",
    "read_lid_backup",
    "restore_pending_lid_backup",
    "set_aside_lid_backup",
    "set_aside_lid_backups",
    "set_aside_message",
]

logger = logging.getLogger(__name__)


LID_BACKUP_LIMIT_BYTES = 64 * 1024  # a backup is a few hundred bytes
_SET_ASIDE_MARK = ".unusable-"
_LID_ACTION_MAX = 1 << 31


class LidBackupError(Exception):
    """The pending lid-action backup file exists but cannot be used."""


class LidBackupSetAside(LidBackupError):
    """An unusable backup was renamed aside (``aside``; None when even that failed)."""

    def __init__(self, message: str, aside: Path | None) -> None:
        super().__init__(message)
        self.aside = aside


def read_lid_backup(path: Path) -> LidActionSnapshot | None:
    """The backed-up lid actions, None when there is no backup, LidBackupError when it is unusable."""
    try:
        # A journal of lidguard's own: never read through a symlink (set aside like any unusable file).
        data = read_json_object(path, limit=LID_BACKUP_LIMIT_BYTES, follow_symlinks=False)
    except UnusableFileError as error:
        raise LidBackupError(f"The lid-action backup {path} cannot be used: {error.reason}.") from error
    except OSError as error:
        raise LidBackupError(f"The lid-action backup {path} cannot be read: {error.strerror or error}.") from error
    if data is None:
        return None
    if not isinstance(data.get("PowerSchemeIdentifier"), str):
        raise LidBackupError(f"The lid-action backup {path} is not a lidguard backup.")

    def action(included: str, value: str) -> int | None:
        if data.get(included) is not True:
            return None
        number = data.get(value)
        if type(number) is not int or not 0 <= number < _LID_ACTION_MAX:
            raise LidBackupError(f"The lid-action backup {path} holds an unusable {value}.")
        return number

    return LidActionSnapshot(
        power_scheme_identifier=data["PowerSchemeIdentifier"],
        alternating_current_action=action("IncludesAlternatingCurrent", "AlternatingCurrentAction"),
        direct_current_action=action("IncludesDirectCurrent", "DirectCurrentAction"),
    )


def set_aside_lid_backup(path: Path) -> Path | None:
    """Renames an unusable backup to ``<stem>.unusable-<UTC>.json`` beside it (None if that fails)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.stem}{_SET_ASIDE_MARK}{stamp}{path.suffix}")
    try:
        os.rename(path, aside)
    except OSError:
        return None
    return aside


def set_aside_lid_backups(path: Path) -> list[Path]:
    """The backups set aside so far (each waits for the user to check the lid setting and delete it)."""
    try:
        return sorted(path.parent.glob(f"{path.stem}{_SET_ASIDE_MARK}*{path.suffix}"))
    except OSError:
        return []


def set_aside_message(aside: Path) -> str:
    """The line ``status`` and ``doctor`` print for one set-aside backup."""
    return (f"Lid-action backup set aside as {aside}: it could not be used and its values were not "
            "restored. Check the lid-close action in your system settings, then delete that file.")


def _set_aside(path: Path, error: LidBackupError) -> LidBackupSetAside:
    aside = set_aside_lid_backup(path)
    where = f"it was set aside as {aside}" if aside else "it could not even be renamed aside"
    return LidBackupSetAside(f"{error} Its values were not used; {where}.", aside)


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
    """Crash recovery: restores the policy from a pending backup and deletes it. True if it did.

    An unusable backup is set aside and raises LidBackupSetAside (a warning: nothing was restored)."""
    try:
        snapshot = read_lid_backup(path)
    except LidBackupError as error:
        raise _set_aside(path, error) from error
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


# Only the lid-close change, no keep-awake: what a suspend request runs under where the lid hold does not
# block the request itself (``lid_hold_allows_suspend``).
LID_ONLY = ProtectionTarget(ProtectionRequest(False, False, False, ""), True)


def lid_hold_allows_suspend(platform: Platform) -> bool:
    """True when the platform's lid hold leaves a suspend request alone (a logind handle-lid-switch
    inhibitor): the hold is then kept through lidguard's own request and released after it."""
    return getattr(platform.lid_policy, "hold_allows_suspend", False) is True


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
        self._lid_declined = False  # the lid policy was wanted but left alone (see _hold_lid_policy)
        self._lid_note: str | None = None
        self._lid_refused: str | None = None  # the hint of a change the OS refused (retried on request)
        self._durable_backup = not _hold_ends_with_process(platform)

    @property
    def applied(self) -> bool:
        return self._power is not None or self._lid_changed

    @property
    def current(self) -> ProtectionTarget | None:
        if not self.applied:
            return None
        if self._power is None and self._lid_changed:
            return LID_ONLY
        return ProtectionTarget(self._request or ProtectionRequest(), self._lid_changed or self._lid_declined)

    @property
    def lid_held_back(self) -> str | None:
        """Why the wanted lid-close change is not applied (keep-awake is), else None."""
        if not self._lid_declined:
            return None
        if self._lid_refused is not None:
            return f"keeping awake; {self._lid_refused}"
        return self._lid_note

    def retry_refused_lid(self) -> bool:
        """Lets the next ``converge`` try a refused lid change again (the permission may be there
        now). True when there was one to retry."""
        if self._lid_refused is None or not self._lid_declined:
            return False
        self._lid_declined = False
        return True

    def converge(self, target: ProtectionTarget | None) -> None:
        """Moves to ``target`` (None: release everything). On a failure from nothing applied, rolls
        back and re-raises; on a failure while protected, keeps what is held and re-raises."""
        if target is None:
            self.release()
            return
        if target == LID_ONLY:  # keep-awake goes, a held lid change stays (never taken here)
            if self._power is not None:
                power, self._power, self._request = self._power, None, None
                power.release()
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
            elif not target.change_lid_action:
                self._lid_declined = False
                self._lid_refused = None
                if self._lid_changed:
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

    def _decline_lid(self, event_name: str, message: str) -> None:
        """Keep-awake stays; the lid policy is left as it is (logged once per distinct reason)."""
        self._lid_declined = True
        if message != self._lid_note:
            self._lid_note = message
            self._log_failure(event_name, message)

    def _backup_unsettled(self) -> list[Path]:
        if _hold_ends_with_process(self._platform):
            return []
        return set_aside_lid_backups(self._backup_path)

    def _hold_lid_policy(self) -> None:
        self._lid_declined = False
        self._lid_refused = None
        try:
            snapshot = read_lid_backup(self._backup_path)
        except LidBackupError as error:
            set_aside = _set_aside(self._backup_path, error)
            self._log_failure("lid-action-backup-set-aside", str(set_aside))
            if set_aside.aside is None:
                self._decline_lid("lid-action-change-skipped", "Left the lid-close action alone: the unusable "
                                  f"lid-action backup {self._backup_path} could not be set aside.")
                return
            snapshot = None
        wrote_backup = snapshot is None
        if snapshot is None:
            unsettled = self._backup_unsettled()
            if unsettled:
                self._decline_lid("lid-action-change-skipped", "Left the lid-close action alone (keep-awake is "
                                  f"held): the lid-action backup set aside as {unsettled[0]} is not settled; "
                                  "check the lid-close setting and delete that file.")
                return
            snapshot = self._platform.lid_policy.read_lid_actions()
            try:
                _write_lid_backup(self._backup_path, snapshot, durable=self._durable_backup)
            except OSError as error:
                self._decline_lid("lid-action-change-skipped", "Left the lid-close action alone (keep-awake is "
                                  f"held): the lid-action backup {self._backup_path} cannot be written: "
                                  f"{error.strerror or error}.")
                return
        self._lid_changed = True  # set first: a change that failed half-way is still restored
        try:
            self._platform.lid_policy.set_do_nothing(snapshot)
        except LidPolicyRefused as error:
            self._lid_changed = False
            if wrote_backup:  # nothing changed: no restore is owed (it would need the same permission)
                self._backup_path.unlink(missing_ok=True)
            self._decline_lid("lid-action-change-refused", f"Left the lid-close action alone (keep-awake is "
                              f"held): {error}")
            self._lid_refused = error.hint
            return
        self._lid_note = None

    def release(self) -> None:
        """Releases everything held; restores the lid policy only from the backup file."""
        self._lid_declined = False
        self._lid_refused = None
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
            message = f"Skipped lid policy restore: {_set_aside(self._backup_path, error)}"
        else:
            message = (f"Skipped lid policy restore because the pending backup {self._backup_path} "
                       "was missing.")
        if snapshot is None:
            self._platform.lid_policy.drop_runtime_hold()
            self._log_failure("lid-action-restore-skipped", message)
            return
        self._platform.lid_policy.restore_lid_actions(snapshot)
        self._backup_path.unlink(missing_ok=True)
