"""Human and JSON renderings of runtime responses. Stored times are UTC; printed times are local."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any, TextIO

__all__ = [
    "CliError",
    "format_local",
    "print_json",
    "response_block",
    "session_json",
    "session_line",
]


class CliError(Exception):
    """A failure shown as one line on stderr with exit code 1."""


def format_local(value: str | None) -> str:
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    return moment.astimezone().isoformat(timespec="seconds")


def _provider_display(session: dict[str, Any]) -> str:
    provider = session.get("Provider", "")
    name = session.get("ProviderName") or ""
    return f"Mcp:{name}" if provider == "Mcp" else provider


def session_line(session: dict[str, Any]) -> str:
    soft_lock = "None"
    if session.get("SoftLockState") == "SoftLocked":
        soft_lock = "SoftLocked"
        if session.get("SoftLockReason"):
            soft_lock += f":{session['SoftLockReason']}"
        if session.get("SoftLockedAt"):
            soft_lock += f"@{format_local(session['SoftLockedAt'])}"
    process = session.get("WatchedProcessIdentifier") or "none"
    return (f"- {_provider_display(session)}:{session.get('SessionIdentifier', '')} process={process} "
            f"softLock={soft_lock} cwd=\"{session.get('WorkingDirectory', '')}\" "
            f"started={format_local(session.get('StartedAt'))} "
            f"lastActivity={format_local(session.get('LastActivityAt'))}")


def response_block(response: dict[str, Any], *, with_message: bool = True) -> list[str]:
    lines = []
    if with_message and response.get("Message"):
        lines.append(str(response["Message"]))
    lines += [
        f"Active sessions: {response.get('ActiveSessionCount', 0)}",
        f"Lid state: {response.get('LidSwitchState', 'Unknown')}",
        f"Visible display monitor count: {response.get('VisibleDisplayMonitorCount', 0)}",
    ]
    lines += [session_line(session) for session in response.get("Sessions", [])]
    return lines


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
    }


def print_json(value: Any, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
