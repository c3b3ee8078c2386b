"""A session of a runtime reply as camelCase JSON (``status --json`` and the MCP snapshot, REFERENCE 12)."""

from __future__ import annotations

from typing import Any

__all__ = ["session_json"]


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
