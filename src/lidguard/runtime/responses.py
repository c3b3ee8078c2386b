"""Runtime replies: the standard response (PascalCase wire fields, REFERENCE 3.1)."""

from __future__ import annotations

from typing import Any

from ..ipc.protocol import PROTOCOL_VERSION
from ..platform.api import LidState
from ..settings.model import Settings
from .logs import format_utc
from .sessions import RegistryState, Session

__all__ = ["build_response", "session_to_wire"]


def session_to_wire(session: Session) -> dict[str, Any]:
    return {
        "SessionIdentifier": session.key.session_identifier,
        "Provider": session.key.provider.value,
        "ProviderName": session.key.provider_name,
        "StartedAt": format_utc(session.started_at),
        "LastActivityAt": format_utc(session.last_activity_at),
        "SoftLockState": "SoftLocked" if session.soft_locked else "None",
        "SoftLockReason": session.soft_lock_reason or "",
        "SoftLockedAt": format_utc(session.soft_locked_at),
        "WatchedProcessIdentifier": session.watched_process_identifier or 0,
        "WorkingDirectory": session.working_directory,
        "PendingProviderWork": session.pending_provider_work,
    }


def build_response(*, succeeded: bool, message: str, state: RegistryState, settings: Settings,
                   lid_state: LidState, visible_display_count: int,
                   pending_suspend: dict[str, Any] | None = None,
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "Succeeded": succeeded,
        "RuntimeUnavailable": False,
        "Message": message,
        "ActiveSessionCount": len(state.sessions),
        "Sessions": [session_to_wire(session) for session in state.sorted_sessions()],
        "Settings": settings.to_file_json(),
        "LidSwitchState": lid_state.value,
        "VisibleDisplayMonitorCount": visible_display_count,
        "PendingSuspend": pending_suspend,
    }
    if extra:
        response.update(extra)
    return response
