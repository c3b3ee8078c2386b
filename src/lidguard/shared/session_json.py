"""A session of a runtime reply as camelCase JSON (``status --json`` and the MCP snapshot, REFERENCE 12)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["parse_reply_utc", "session_json"]


def parse_reply_utc(value: Any) -> datetime | None:
    """A UTC time of a runtime reply (``StartedAt``, ``DeadlineUtc``, ...); None when it is not one. A time
    without an offset is UTC (stored times always are)."""
    from datetime import datetime, timezone  # lazily: most hook replies read no time

    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def session_json(session: dict[str, Any]) -> dict[str, Any]:
    """camelCase, as the MCP snapshot of REFERENCE 12."""
    return {
        "sessionIdentifier": session.get("SessionIdentifier", ""),
        "provider": session.get("Provider", ""),
        "providerName": session.get("ProviderName") or None,
        "softLockState": session.get("SoftLockState", "None"),
        "softLockReason": session.get("SoftLockReason") or None,
        "softLockedAtUtc": session.get("SoftLockedAt"),
        "watchedProcessIdentifier": session.get("WatchedProcessIdentifier") or None,
        "workingDirectory": session.get("WorkingDirectory", ""),
        "startedAtUtc": session.get("StartedAt"),
        "lastActivityAtUtc": session.get("LastActivityAt"),
        "pendingProviderWork": bool(session.get("PendingProviderWork", False)),
        "runningToolCount": session.get("RunningToolCount") if type(session.get("RunningToolCount")) is int else 0,
        "source": session.get("Source") if session.get("Source") in ("hook", "rollout") else "hook",
    }
