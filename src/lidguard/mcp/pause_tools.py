"""The MCP pause, resume and emergency_restore tools (issue 19 item 4), like the CLI commands:
``pause`` starts the runtime when none runs (the pause lives there), ``resume`` never does,
``emergency_restore`` restores every pending backup itself when no runtime runs (never reading the
settings file)."""

from __future__ import annotations

from typing import Any

from ..shared.pause import DURATION_MESSAGE, parse_duration
from .tools import ToolContext, ToolFailure

__all__ = ["emergency_restore", "pause", "resume"]


def _result(context: ToolContext, response: dict[str, Any]) -> dict[str, Any]:
    if not response.get("Succeeded"):
        raise ToolFailure(str(response.get("Message") or "The runtime reported a failure."))
    return {"summary": str(response.get("Message") or ""), "snapshot": context.snapshot()}


def pause(context: ToolContext, duration: Any = None) -> dict[str, Any]:
    seconds = None
    if duration not in (None, ""):
        try:
            seconds = parse_duration(str(duration))
        except ValueError as error:
            raise ToolFailure(f"The duration {DURATION_MESSAGE}.") from error
    return _result(context, context.request("pause", auto_start=True, PauseSeconds=seconds))


def resume(context: ToolContext) -> dict[str, Any]:
    response = context.request("resume")
    if response.get("RuntimeUnavailable"):
        return {"summary": "LidGuard runtime is not running: nothing is paused.", "snapshot": context.snapshot()}
    return _result(context, response)


def emergency_restore(context: ToolContext) -> dict[str, Any]:
    from ..platform import load_platform
    from ..shared.recovery import RecoveryError, emergency_restore_without_runtime, restore_failed

    response = context.request("emergency-restore")
    if not response.get("RuntimeUnavailable"):
        return _result(context, response)
    try:
        lines = emergency_restore_without_runtime(context.paths, load_platform)
    except RecoveryError as error:
        raise ToolFailure(str(error)) from error
    summary = " ".join(["Emergency restore: LidGuard runtime is not running (nothing to pause).", *lines])
    if restore_failed(lines):
        raise ToolFailure(summary)
    return {"summary": summary, "snapshot": context.snapshot()}
