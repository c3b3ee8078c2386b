"""Ask-before-sleep for the blocking Stop hooks (ASK_BEFORE_SLEEP.md), hook side; stdlib only.

Claude Code ``Stop``, Codex ``Stop``, Copilot CLI ``agentStop`` and the OpenCode plugin's
``session.idle`` may hold the agent until the user replies from the phone. The hook decides from the
RAW settings file (no model; the runtime validates and decides for real) whether to send
``WaitForFollowUp: true`` and how long it may wait for the reply. A wrong guess costs nothing: the
runtime answers a waiting stop at once when the feature does not apply.
"""

from __future__ import annotations

from ..ipc.stop_timeout import stop_hook_wait_seconds
from .payload import bounded, clean_text

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_REPLY_CHARS", "continuation_output", "follow_up_wait_seconds"]

MIN_WINDOW_SECONDS = 20
MIN_POST_STOP_DELAY_SECONDS = 10
MAX_DELAY_SECONDS = 3600  # settings.model NUMBER_RANGES: both delays are 0-3600
MAX_REPLY_CHARS = 16_000


def _seconds(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value <= MAX_DELAY_SECONDS else None


def _valid_url(value: Any) -> bool:
    if not isinstance(value, str) or not value.strip() or len(value) > 2048:
        return False
    from urllib.parse import urlsplit  # with ipaddress ~2 ms: only when a follow-up URL is set

    try:
        parts = urlsplit(value.strip())
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def follow_up_wait_seconds(settings: Any) -> float | None:
    """The reply timeout for a waiting stop, or None when ask-before-sleep is off in ``settings``.

    On: a valid absolute http(s) ``ClosedLidStopFollowUpWebhookUrl``, ``ClosedLidStopFollowUpDelaySeconds``
    >= 20 and ``PostStopSuspendDelaySeconds`` >= 10. The wait ends before the agent's installed timeout
    (``stop_timeout``: the same formula the installers write); the hook tells the runtime this wait.
    """
    if not isinstance(settings, dict) or not _valid_url(settings.get("ClosedLidStopFollowUpWebhookUrl")):
        return None
    window = _seconds(settings.get("ClosedLidStopFollowUpDelaySeconds"))
    delay = _seconds(settings.get("PostStopSuspendDelaySeconds"))
    if window is None or delay is None or window < MIN_WINDOW_SECONDS or delay < MIN_POST_STOP_DELAY_SECONDS:
        return None
    return float(stop_hook_wait_seconds(delay, window))


def continuation_output(reply: dict[str, Any]) -> dict[str, Any] | None:
    """``{"decision": "block", "reason": <reply>}`` when the runtime's reply carries ``FollowUpReply``
    (the shape Claude Code, Codex and Copilot CLI all continue on; the OpenCode plugin re-prompts)."""
    text = reply.get("FollowUpReply")
    if not isinstance(text, str) or not text.strip():
        return None
    return {"decision": "block", "reason": bounded(clean_text(text), MAX_REPLY_CHARS)}
