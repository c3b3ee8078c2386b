"""Webhook body validation (PreSuspend, PostSessionEnd, StopFollowUp, SuspendBlocked) and the Web Push payloads."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from lidguard.notify.store import iso, parse_iso, utc_now

from ..agents import all_agents
from ..l10n import N_
from ..shared.text import has_lone_surrogate

__all__ = ["EVENT_TYPES", "MAX_BODY_BYTES", "WebhookError", "has_lone_surrogate", "push_payload", "validate_webhook"]

EVENT_TYPES = ("PreSuspend", "PostSessionEnd", "StopFollowUp", "SuspendBlocked")
PRE_SUSPEND_REASONS = ("Completed", "SoftLocked", "EmergencyHibernation")
MAX_BODY_BYTES = 64 * 1024
MAX_FOLLOW_UP_WINDOW = timedelta(hours=24)
# Longest accepted text per field (the runtime sends at most 500 / 4000 characters of the two texts).
TEXT_LIMITS = {"inputPromptPreview": 2000, "lastAssistantMessage": 8000, "workingDirectory": 4096,
               "transcriptPath": 4096}
DEFAULT_TEXT_LIMIT = 512
INTEGER_FIELDS = ("softLockedSessionCount", "activeSessionCount", "blockerCount", "blockerPid", "blockerUid")
MAX_SESSION_COUNT = 1_000_000  # also the bound of the blocker fields' integers...
MAX_ID = 2**32 - 1  # ...except a blocker's pid and uid (32-bit on every OS lidguard runs on)
# The fields lidguard sends as text: anything else there (a 30-digit number, a float) is refused, so the
# database columns only ever get strings.
TEXT_FIELDS = ("eventType", "reason", "provider", "providerName", "sessionIdentifier", "workingDirectory",
               "transcriptPath", "inputPromptPreview", "lastAssistantMessage", "followUpId", "createdAtUtc",
               "expiresAtUtc", "startedAtUtc", "lastActivityAtUtc", "endedAtUtc", "endReason", "suspendMode",
               "blockedBy", "blockerWho", "blockerWhy", "blockerWhat", "blockerAgent")
# The agents' own names (lidguard.agents), then the providers that are no agent of the registry.
PROVIDER_TITLES = {**{agent.PROVIDER: agent.DISPLAY for agent in all_agents()}, "Custom": "Custom agent",
                   "Unknown": "Agent"}
PUSH_BODY_CHARS = 180


class WebhookError(ValueError):
    """The webhook body is not acceptable (the message is the 400 answer)."""




def _check_text(key: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise WebhookError(f"{key} must be a string.")
    if len(value) > TEXT_LIMITS.get(key, DEFAULT_TEXT_LIMIT):
        raise WebhookError(f"{key} is longer than {TEXT_LIMITS.get(key, DEFAULT_TEXT_LIMIT)} characters.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise WebhookError(f"{key} contains a lone surrogate.") from error


def _require(body: dict[str, Any], *keys: str) -> None:
    for key in keys:
        value = body.get(key)
        if not isinstance(value, str) or not value.strip():
            raise WebhookError(f"{key} is required for {body['eventType']}.")


def validate_webhook(body: Any) -> dict[str, Any]:
    """The body, checked and normalized (``followUpId`` lower-case, ``expiresAtUtc`` as UTC ``Z``)."""
    if not isinstance(body, dict):
        raise WebhookError("The webhook body must be a JSON object.")
    if body.get("eventType") not in EVENT_TYPES:
        raise WebhookError("eventType is required and must be PreSuspend, PostSessionEnd, StopFollowUp or "
                           "SuspendBlocked.")
    for key, value in body.items():
        if not isinstance(key, str) or len(key) > 64 or has_lone_surrogate(key):
            raise WebhookError("The webhook body has an invalid key.")
        if key in INTEGER_FIELDS:
            bound = MAX_ID if key in ("blockerPid", "blockerUid") else MAX_SESSION_COUNT
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or not 0 <= value <= bound):
                raise WebhookError(f"{key} must be an integer from 0 to {bound}.")
        elif key in TEXT_FIELDS and value is not None and not isinstance(value, str):
            raise WebhookError(f"{key} must be a string.")
        elif isinstance(value, (dict, list)):
            raise WebhookError(f"{key} must not be an object or a list.")
        elif not isinstance(value, (int, float, bool)):
            _check_text(key, value)
    event_type, reason = body["eventType"], body.get("reason")
    if event_type in ("PreSuspend", "SuspendBlocked"):
        if reason not in PRE_SUSPEND_REASONS:
            raise WebhookError(f"reason must be Completed, SoftLocked or EmergencyHibernation for {event_type}.")
        if event_type == "SuspendBlocked":
            _require(body, "blockedBy")
        return dict(body)
    if reason not in ("SessionEnded", None) or (event_type == "PostSessionEnd" and reason is None):
        raise WebhookError(f"reason must be SessionEnded for {event_type}.")
    _require(body, "provider", "sessionIdentifier")
    if event_type == "PostSessionEnd":
        return dict(body)
    _require(body, "followUpId", "expiresAtUtc")
    try:
        follow_up_id = str(uuid.UUID(body["followUpId"]))
    except ValueError as error:
        raise WebhookError("followUpId must be a UUID.") from error
    try:
        expires = parse_iso(body["expiresAtUtc"])
    except (ValueError, OverflowError) as error:  # OverflowError: 0001-01-01T00:00:00+14:00 is before year 1 UTC
        raise WebhookError("expiresAtUtc must be an ISO 8601 time between the years 1 and 9999 in UTC.") from error
    if expires > utc_now() + MAX_FOLLOW_UP_WINDOW:
        raise WebhookError("expiresAtUtc is more than 24 hours away.")
    return {**body, "reason": "SessionEnded", "followUpId": follow_up_id, "expiresAtUtc": iso(expires)}


def provider_title(provider: str | None, name: str | None) -> str:
    if provider == "Mcp":
        return f"Mcp:{(name or '').strip()}"
    return PROVIDER_TITLES.get(provider or "", provider or "Agent")


def _shorten(text: str, limit: int = PUSH_BODY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _same(message: str) -> str:
    return message


def push_payload(event: dict[str, Any], public_base_url: str, translate: Any = _same) -> dict[str, str]:
    """The JSON the service worker shows: ``title``, ``body``, ``url``, ``tag`` (the texts through
    ``translate``: the notify server's language, ``lidguard.l10n``)."""
    t = translate
    event_type, reason = event["eventType"], event.get("reason") or ""
    events_url = f"{public_base_url}/events"
    if event_type == "StopFollowUp":
        who = provider_title(event.get("provider"), event.get("providerName"))
        message = event.get("lastAssistantMessage") or ""
        body = _shorten(message) if message.strip() else t(N_("Reply to continue, or let it sleep."))
        return {"title": t(N_("{agent} finished - reply to continue")).format(agent=who), "body": body,
                "url": f"{public_base_url}/follow-ups/{event['followUpId']}",
                "tag": f"lidguard-stopfollowup-{event['followUpId']}"}
    tag = f"lidguard-{event_type.lower()}-{reason.lower()}"
    if event_type == "PostSessionEnd":
        who = provider_title(event.get("provider"), event.get("providerName"))
        remaining = event.get("activeSessionCount")
        ended_because = event.get("endReason") or reason
        body = t(N_("{agent} session {session} ended normally. Reason: {reason}.")).format(
            agent=who, session=event.get("sessionIdentifier"), reason=ended_because)
        if remaining is not None:
            body += t(N_(" Active sessions remaining: {count}.")).format(count=remaining)
        return {"title": t(N_("LidGuard session ended")), "body": _shorten(body, 300), "url": events_url, "tag": tag}
    if event_type == "SuspendBlocked":
        body = t(N_("Another program keeps the machine awake: {blocker}. LidGuard waits for it to end, then "
                    "suspends; the thermal monitor stays on.")).format(blocker=event.get("blockedBy"))
        return {"title": t(N_("LidGuard suspend blocked")), "body": _shorten(body, 300), "url": events_url,
                "tag": tag}
    if reason == "Completed":
        title = t(N_("LidGuard session completed"))
        body = t(N_("The last active session ended and LidGuard is preparing the configured suspend flow."))
    elif reason == "SoftLocked":
        title = t(N_("LidGuard sessions are waiting"))
        count = event.get("softLockedSessionCount")
        body = (t(N_("{count} session(s) are soft-locked and LidGuard is preparing the configured suspend flow."))
                .format(count=count) if count
                else t(N_("All remaining sessions are soft-locked and LidGuard is preparing the configured "
                          "suspend flow.")))
    else:
        title = t(N_("LidGuard emergency hibernation"))
        body = t(N_("The emergency thermal threshold was reached and hibernation was requested immediately."))
    return {"title": title, "body": body, "url": events_url, "tag": tag}
