"""The runtime's files: session-execution.log, suspend-history.log and log/exceptions.log.

Session log and suspend history are JSON lines with PascalCase fields (REFERENCE 3.3, 9.4),
trimmed to their retention and rewritten atomically. A log write never takes the runtime down.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..fileio import append_json_line_keep_latest, read_json_lines
from .sessions import Session, SessionKey

__all__ = [
    "SESSION_LOG_KEEP",
    "ExceptionLog",
    "SessionLog",
    "SuspendHistory",
    "SuspendHistoryEntry",
    "format_utc",
]

SESSION_LOG_KEEP = 500


def format_utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class SessionLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, *, event_name: str, command: str, message: str, succeeded: bool = True,
               session: Session | None = None, key: SessionKey | None = None, now: datetime,
               active_session_count: int,
               provider_session_end: bool | None = None, session_end_reason: str | None = None,
               extra: dict[str, Any] | None = None) -> None:
        key = session.key if session else key
        entry: dict[str, Any] = {
            "Timestamp": format_utc(now),
            "EventName": event_name,
            "Command": command,
            "Provider": key.provider.value if key else None,
            "ProviderName": (key.provider_name or None) if key else None,
            "SessionIdentifier": key.session_identifier if key else None,
            "IsProviderSessionEnd": provider_session_end,
            "SessionEndReason": session_end_reason,
            "SoftLockState": ("SoftLocked" if session.soft_locked else "None") if session else None,
            "SoftLockReason": session.soft_lock_reason if session else None,
            "SoftLockedAt": format_utc(session.soft_locked_at) if session else None,
            "WatchedProcessIdentifier": (session.watched_process_identifier or 0) if session else None,
            "WorkingDirectory": session.working_directory if session else None,
            "TranscriptPath": (session.transcript_path or None) if session else None,
            "Succeeded": succeeded,
            "Message": message,
            "ActiveSessionCount": active_session_count,
        }
        if extra:
            entry.update(extra)
        with contextlib.suppress(OSError):
            append_json_line_keep_latest(self.path, entry, keep=SESSION_LOG_KEEP)

    def read(self) -> list[dict[str, Any]]:
        return read_json_lines(self.path)


@dataclass(frozen=True, slots=True)
class SuspendHistoryEntry:
    recorded_at: datetime
    suspend_mode: str
    reason: str
    succeeded: bool
    message: str
    event_name: str
    command_name: str
    active_session_count: int
    suspend_trigger_session_count: int
    session: Session | None = None
    session_state_reason: str | None = None
    observed_temperature_celsius: int | None = None
    emergency_hibernation_temperature_celsius: int | None = None
    emergency_hibernation_temperature_mode: str | None = None

    def to_json(self) -> dict[str, Any]:
        session = self.session
        return {
            "RecordedAt": format_utc(self.recorded_at),
            "SuspendMode": self.suspend_mode,
            "Reason": self.reason,
            "Succeeded": self.succeeded,
            "Message": self.message,
            "EventName": self.event_name,
            "CommandName": self.command_name,
            "Provider": session.key.provider.value if session else None,
            "ProviderName": (session.key.provider_name or None) if session else None,
            "SessionIdentifier": session.key.session_identifier if session else None,
            "WorkingDirectory": session.working_directory if session else None,
            "SessionStateReason": self.session_state_reason,
            "ActiveSessionCount": self.active_session_count,
            "SuspendTriggerSessionCount": self.suspend_trigger_session_count,
            "ObservedTemperatureCelsius": self.observed_temperature_celsius,
            "EmergencyHibernationTemperatureCelsius": self.emergency_hibernation_temperature_celsius,
            "EmergencyHibernationTemperatureMode": self.emergency_hibernation_temperature_mode,
        }


class SuspendHistory:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: SuspendHistoryEntry, *, keep: int | None) -> None:
        """Records the entry unless recording is off (``keep`` None)."""
        if keep is None:
            return
        with contextlib.suppress(OSError):
            append_json_line_keep_latest(self.path, entry.to_json(), keep=keep)

    def newest_first(self, count: int | None = None) -> list[dict[str, Any]]:
        entries = list(reversed(read_json_lines(self.path)))
        return entries[:count] if count is not None else entries


class ExceptionLog:
    """Text blocks per unexpected exception, so a failure in the field can be diagnosed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, event: str, error: BaseException) -> None:
        lines = [
            "-----",
            f"timestampUtc={format_utc(datetime.now(timezone.utc))}",
            f"event={event}",
            f"processId={os.getpid()}",
            f"exception.type={type(error).__module__}.{type(error).__qualname__}",
            f"exception.message={error}",
            "exception.stackTrace:",
        ]
        lines += ["  " + line for line in "".join(traceback.format_exception(error)).splitlines()]
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, ("\n".join(lines) + "\n").encode("utf-8", "replace"))
            finally:
                os.close(fd)
