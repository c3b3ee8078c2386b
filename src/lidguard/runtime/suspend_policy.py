"""The pending suspend's decisions as pure functions (REFERENCE 9.1-9.3), tested like ``policy.transition``.

- ``on_trigger``: nobody wants protection any more: skip (not eligible), keep the suspend already
  pending (a cancel path), or schedule one with its wall-clock deadline;
- ``delay_seconds_for``: the post-stop delay, or 0 for a continued Stop (``stop_hook_active``) when
  RepeatClosedLidStopFollowUp is off (seed 001);
- ``recheck``: before each slow stage, is the pending suspend still wanted;
- ``next_stage``: seed order (REFERENCE 9.3): delay -> PreSuspend webhook (when one is configured and
  the trigger may notify) -> sound (when one is configured) -> requesting;
- ``notifies``: a cancel path (watched-process exit, orphan cleanup) never sends a new PreSuspend;
- ask-before-sleep (ASK_BEFORE_SLEEP.md): ``follow_up_wanted`` (a waiting Stop hook, valid URL,
  window >= 20 s, delay >= 10 s; never for a continued Stop with RepeatClosedLidStopFollowUp off),
  ``valid_poll_url`` (same scheme, host and port as the webhook), ``follow_up_deadline`` (trust
  ``expiresAtUtc`` up to the initial deadline + 5 min), ``read_poll`` (a poll answer -> its status).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal
from urllib.parse import urlsplit

from ..settings.model import is_absolute_http_url
from . import policy
from .eligibility import Eligibility

__all__ = [
    "FOLLOW_UP_EXTENSION_LIMIT", "FOLLOW_UP_MAX_REPLY_CHARS", "FOLLOW_UP_MIN_DELAY_SECONDS",
    "FOLLOW_UP_MIN_WINDOW_SECONDS", "FOLLOW_UP_POLL_SECONDS", "STAGES", "FollowUpPoll", "KeepPending", "Recheck",
    "Schedule", "Skip", "Stage", "delay_seconds_for", "follow_up_deadline", "follow_up_wanted",
    "may_trigger_suspend", "next_stage", "notifies", "on_trigger", "parse_utc", "read_poll", "recheck",
    "valid_poll_url",
]

Stage = Literal["delay", "follow-up", "webhook", "sound", "requesting"]
STAGES: tuple[Stage, ...] = ("delay", "follow-up", "webhook", "sound", "requesting")
FOLLOW_UP_MIN_WINDOW_SECONDS = 20
FOLLOW_UP_MIN_DELAY_SECONDS = 10
FOLLOW_UP_POLL_SECONDS = 2.0
FOLLOW_UP_EXTENSION_LIMIT = timedelta(minutes=5)
FOLLOW_UP_MAX_REPLY_CHARS = 16_000  # a reply is the agent's next instruction; it must fit one IPC reply
FollowUpStatus = Literal["Pending", "Replied", "Canceled", "Expired"]


@dataclass(frozen=True, slots=True)
class Skip:
    message: str  # "Skipped Sleep because ..."


@dataclass(frozen=True, slots=True)
class KeepPending:
    """A cancel path (watched-process exit, orphan cleanup) keeps the suspend already scheduled."""


@dataclass(frozen=True, slots=True)
class Schedule:
    deadline: datetime
    message: str


def may_trigger_suspend(event: policy.Event) -> bool:
    """Events whose outcome can carry ``EvaluateSuspend``: read the machine afresh before them."""
    return isinstance(event, policy.Stop | policy.MarkSoftLocked | policy.RemoveSessions | policy.TimeoutCheck)


def delay_seconds_for(trigger: policy.EvaluateSuspend, *, delay_seconds: int, repeat_follow_up: bool) -> int:
    """A continued Stop with RepeatClosedLidStopFollowUp off is an immediate attempt (no second wait)."""
    if trigger.stop_hook_active and not repeat_follow_up:
        return 0
    return max(0, delay_seconds)


def notifies(trigger: policy.EvaluateSuspend) -> bool:
    """Whether a suspend scheduled by this trigger sends PreSuspend (never from a cancel path)."""
    return not trigger.cancel_path


def on_trigger(trigger: policy.EvaluateSuspend, *, mode: str, eligibility: Eligibility, pending: bool,
               delay_seconds: int, now: datetime) -> Skip | KeepPending | Schedule:
    if not eligibility.eligible:
        return Skip(f"Skipped {mode} because {eligibility.why_not}")
    if pending and trigger.cancel_path:
        return KeepPending()
    when = "immediately" if delay_seconds <= 0 else f"in {delay_seconds} second(s)"
    why = ("the last session stopped" if trigger.reason == "Completed"
           else "all remaining sessions are soft-locked")
    message = (f"Scheduled {mode} {when} because the lid is closed, no suspend-blocking visible display "
               f"monitors remain, and {why}.")
    return Schedule(now + timedelta(seconds=max(0, delay_seconds)), message)


@dataclass(frozen=True, slots=True)
class Recheck:
    proceed: bool
    message: str = ""  # why it was canceled; empty when it was already gone (nothing to log)


def recheck(*, is_current: bool, protection_wanted: bool, eligibility: Eligibility) -> Recheck:
    """Before a slow stage: still the pending suspend, nobody works again, lid closed with no display."""
    if not is_current:
        return Recheck(False)
    if protection_wanted:
        return Recheck(False, "Skipped pending suspend because a session became active before suspend ran.")
    if not eligibility.eligible:
        return Recheck(False, f"Skipped pending suspend because {eligibility.why_not}")
    return Recheck(True)


def next_stage(stage: Stage, *, has_follow_up: bool = False, has_webhook: bool = False, has_sound: bool) -> Stage:
    order = STAGES.index(stage)
    if stage == "requesting":
        raise ValueError("the requesting stage is the last one")
    for candidate in STAGES[order + 1:]:
        if candidate == "follow-up" and not has_follow_up:
            continue
        if candidate == "webhook" and not has_webhook:
            continue
        if candidate == "sound" and not has_sound:
            continue
        return candidate
    return "requesting"


# -- ask-before-sleep ---------------------------------------------------------------------------------
def follow_up_wanted(trigger: policy.EvaluateSuspend, *, hook_waiting: bool, url: str, window_seconds: int,
                     delay_seconds: int, repeat_follow_up: bool) -> bool:
    """The reply wait runs for a Stop whose hook waits for it, when the settings allow it (seed 001)."""
    if not hook_waiting or trigger.command != "stop" or trigger.cancel_path or trigger.trigger_session is None:
        return False
    if trigger.stop_hook_active and not repeat_follow_up:
        return False  # a continued Stop is an immediate attempt, never a second wait
    return (is_absolute_http_url(url) and window_seconds >= FOLLOW_UP_MIN_WINDOW_SECONDS
            and delay_seconds >= FOLLOW_UP_MIN_DELAY_SECONDS)


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        return None
    if scheme not in ("http", "https") or not parts.hostname or port is None:
        return None
    return scheme, parts.hostname.lower(), port


def valid_poll_url(webhook_url: str, poll_url: Any) -> bool:
    """An absolute http(s) URL on the webhook URL's scheme, host and port, without credentials."""
    if not isinstance(poll_url, str) or not poll_url.strip() or any(c in poll_url for c in "\r\n\t "):
        return False
    origin = _origin(poll_url)
    if origin is None or origin != _origin(webhook_url):
        return False
    try:
        parts = urlsplit(poll_url.strip())
    except ValueError:
        return False
    return parts.username is None and parts.password is None


def parse_utc(value: Any) -> datetime | None:
    """An ISO 8601 time with a zone (``Z`` or an offset) as aware UTC; anything else -> None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(timezone.utc)


def follow_up_deadline(initial: datetime, reported: datetime | None, current: datetime) -> datetime:
    """The server's ``expiresAtUtc`` is trusted (it may extend or shorten the wait), but never past
    the initial deadline + 5 minutes; no usable value keeps the current deadline."""
    if reported is None:
        return current
    return min(reported, initial + FOLLOW_UP_EXTENSION_LIMIT)


@dataclass(frozen=True, slots=True)
class FollowUpPoll:
    status: FollowUpStatus | None  # None: not a poll answer (retried until the deadline)
    expires: datetime | None = None
    reply: str = ""


def _clean_text(text: str) -> str:
    """Lone UTF-16 surrogates (valid JSON, invalid Unicode) become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def read_poll(payload: Any) -> FollowUpPoll:
    """One poll answer: ``{"status", "expiresAtUtc", "reply"}``; a Replied without text is no answer."""
    if not isinstance(payload, dict):
        return FollowUpPoll(None)
    status = payload.get("status")
    expires = parse_utc(payload.get("expiresAtUtc"))
    if status == "Replied":
        reply = payload.get("reply")
        if not isinstance(reply, str) or not reply.strip():
            return FollowUpPoll(None, expires)
        return FollowUpPoll("Replied", expires, _clean_text(reply[:FOLLOW_UP_MAX_REPLY_CHARS]))
    if status in ("Pending", "Canceled", "Expired"):
        return FollowUpPoll(status, expires)
    return FollowUpPoll(None, expires)
