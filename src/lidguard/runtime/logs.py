"""The runtime's files: session-execution.log, suspend-history.log and log/exceptions.log.

Session log and suspend history are JSON lines with PascalCase fields (REFERENCE 3.3, 9.4). An event
appends one line (O_APPEND, one write, no fsync), so logging stays cheap on the event loop; the file
is trimmed to its retention (rewritten atomically) only once it holds twice as many lines. Readers
take the latest entries, so they see the retention whatever the file holds. A log write never raises
(disk full, a lone surrogate, anything): losing a line must not lose a session. Lost lines are
counted (``failures``) and the first reason is kept (``first_failure``) for one report. Logs never
follow a symlink and never wait on a FIFO (``fileio.open_append``); a huge log is read from its tail.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..fileio import AppendOnlyFile, count_lines, json_line, keep_latest_lines, open_append, read_json_lines
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


class RetainedJsonLines:
    """A JSON-lines file that keeps its latest ``keep`` entries; only this process writes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = AppendOnlyFile(path)
        self._lines: int | None = None  # counted once, then tracked
        self.failures = 0
        self.first_failure: str | None = None

    def append(self, entry: dict[str, Any], *, keep: int) -> None:
        try:
            if self._lines is None:
                self._lines = count_lines(self.path)
            self._file.write(json_line(entry))
            self._lines += 1
            if keep > 0 and self._lines > 2 * keep:
                self._file.close()
                self._lines = keep_latest_lines(self.path, keep)
        except Exception as error:  # noqa: BLE001 - a log write never raises out of an event
            self.failed(error)
            self._lines = None

    def failed(self, error: BaseException) -> None:
        self.failures += 1
        if self.first_failure is None:
            self.first_failure = f"{self.path}: {getattr(error, 'strerror', None) or error}"

    def latest(self, keep: int | None) -> list[dict[str, Any]]:
        entries = read_json_lines(self.path)
        return entries[-keep:] if keep else entries


class SessionLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = RetainedJsonLines(path)

    def append(self, *, event_name: str, command: str, message: str, succeeded: bool = True,
               session: Session | None = None, key: SessionKey | None = None, now: datetime,
               active_session_count: int,
               provider_session_end: bool | None = None, session_end_reason: str | None = None,
               extra: dict[str, Any] | None = None) -> None:
        try:
            entry = self._entry(event_name=event_name, command=command, message=message, succeeded=succeeded,
                                session=session, key=key, now=now, active_session_count=active_session_count,
                                provider_session_end=provider_session_end, session_end_reason=session_end_reason,
                                extra=extra)
        except Exception as error:  # noqa: BLE001 - a log write never raises out of an event
            self._file.failed(error)
            return
        self._file.append(entry, keep=SESSION_LOG_KEEP)

    @staticmethod
    def _entry(*, event_name: str, command: str, message: str, succeeded: bool, session: Session | None,
               key: SessionKey | None, now: datetime, active_session_count: int,
               provider_session_end: bool | None, session_end_reason: str | None,
               extra: dict[str, Any] | None) -> dict[str, Any]:
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
        return entry

    def read(self) -> list[dict[str, Any]]:
        return self._file.latest(SESSION_LOG_KEEP)


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
    # Other programs' sleep blockers named around a refused request (issue 34.3), as ``SuspendBlocker.to_wire``.
    blockers: tuple[dict[str, Any], ...] = ()

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
            **({"Blockers": list(self.blockers)} if self.blockers else {}),
        }


class SuspendHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = RetainedJsonLines(path)
        self._keep: int | None = None

    def append(self, entry: SuspendHistoryEntry, *, keep: int | None) -> None:
        """Records the entry unless recording is off (``keep`` None)."""
        if keep is None:
            return
        self._keep = keep
        try:
            line = entry.to_json()
        except Exception as error:  # noqa: BLE001 - a log write never raises out of an event
            self._file.failed(error)
            return
        self._file.append(line, keep=keep)

    def newest_first(self, count: int | None = None) -> list[dict[str, Any]]:
        entries = list(reversed(self._file.latest(self._keep)))
        return entries[:count] if count is not None else entries


class ExceptionLog:
    """Text blocks per unexpected exception, so a failure in the field can be diagnosed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, event: str, error: BaseException) -> None:
        try:
            self._write(event, error)
        except Exception:  # noqa: BLE001 - recording a failure must not cause another
            pass

    @staticmethod
    def _text(render: Any) -> str:
        try:
            return str(render())
        except Exception as failure:  # noqa: BLE001 - an error whose text itself fails
            return f"<unprintable: {type(failure).__name__}>"

    def _write(self, event: str, error: BaseException) -> None:
        lines = [
            "-----",
            f"timestampUtc={format_utc(datetime.now(timezone.utc))}",
            f"event={event}",
            f"processId={os.getpid()}",
            f"exception.type={type(error).__module__}.{type(error).__qualname__}",
            f"exception.message={self._text(lambda: error)}",
            "exception.stackTrace:",
        ]
        trace = self._text(lambda: "".join(traceback.format_exception(error)))
        lines += ["  " + line for line in trace.splitlines()]
        with contextlib.suppress(OSError):
            fd = open_append(self.path)  # never through a symlink, never waiting on a FIFO
            try:
                os.write(fd, ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))
            finally:
                os.close(fd)
