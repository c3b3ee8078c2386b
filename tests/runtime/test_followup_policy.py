"""Ask-before-sleep decisions as pure functions (suspend_policy): when the reply wait runs, which poll
URLs are accepted, how far ``expiresAtUtc`` is trusted, how a poll answer reads, the stage order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lidguard.runtime import policy, suspend_policy
from lidguard.runtime.components.followup import stop_follow_up_body
from lidguard.runtime.sessions import AgentProvider, Session, SessionKey

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
KEY = SessionKey.create(AgentProvider.CLAUDE, "s1", "")
SESSION = Session(key=KEY, started_at=NOW, last_activity_at=NOW)
HOOK = "https://notify.example:8443/api/webhooks/lidguard/secret"


def _trigger(**changes: object) -> policy.EvaluateSuspend:
    fields: dict = {"reason": "Completed", "command": "stop", "trigger_session": SESSION,
                    "soft_locked_session_count": 0}
    fields.update(changes)
    return policy.EvaluateSuspend(**fields)


def _wanted(trigger: policy.EvaluateSuspend | None = None, **changes: object) -> bool:
    values: dict = {"hook_waiting": True, "url": HOOK, "window_seconds": 20, "delay_seconds": 10,
                    "repeat_follow_up": True}
    values.update(changes)
    return suspend_policy.follow_up_wanted(trigger or _trigger(), **values)


def test_follow_up_runs_only_within_the_documented_conditions():
    assert _wanted()
    assert not _wanted(hook_waiting=False)  # nobody could receive the reply
    assert not _wanted(url="")
    assert not _wanted(url="notify.example/hook")
    assert not _wanted(url="ftp://notify.example/hook")
    assert not _wanted(window_seconds=19)
    assert not _wanted(delay_seconds=9)
    assert not _wanted(_trigger(cancel_path=True))
    assert not _wanted(_trigger(command="session-timeout"))
    assert not _wanted(_trigger(trigger_session=None))


def test_continued_stop_asks_again_only_when_repeat_is_on():
    continued = _trigger(stop_hook_active=True)
    assert _wanted(continued, repeat_follow_up=True)
    assert not _wanted(continued, repeat_follow_up=False)
    assert suspend_policy.delay_seconds_for(continued, delay_seconds=10, repeat_follow_up=False) == 0
    assert suspend_policy.delay_seconds_for(continued, delay_seconds=10, repeat_follow_up=True) == 10


@pytest.mark.parametrize("poll_url", [
    "https://notify.example:8443/api/follow-ups/1/token",
    "HTTPS://NOTIFY.EXAMPLE:8443/api/follow-ups/1/token",
])
def test_poll_url_on_the_webhook_origin_is_accepted(poll_url):
    assert suspend_policy.valid_poll_url(HOOK, poll_url)


def test_default_ports_count_as_the_same_origin():
    assert suspend_policy.valid_poll_url("http://n.example/hook", "http://n.example:80/api/follow-ups/1/t")
    assert suspend_policy.valid_poll_url("https://n.example:443/hook", "https://n.example/api/follow-ups/1/t")


@pytest.mark.parametrize("poll_url", [
    None, 42, "", "/api/follow-ups/1/token", "api/follow-ups/1/token",
    "http://notify.example:8443/api/follow-ups/1/token",  # another scheme
    "https://notify.example/api/follow-ups/1/token",  # another port
    "https://notify.example:8444/api/follow-ups/1/token",
    "https://evil.example:8443/api/follow-ups/1/token",  # another host
    "https://notify.example.evil:8443/x",
    "https://user:pw@notify.example:8443/x",  # credentials
    "https://notify.example:8443@evil.example/x",
    "https://notify.example:99999/x",  # not a port
    "https://notify.example:8443/x\r\nHost: evil",
    "javascript:alert(1)", "file:///etc/passwd",
])
def test_other_poll_urls_are_refused(poll_url):
    assert not suspend_policy.valid_poll_url(HOOK, poll_url)


@given(st.text(max_size=80))
def test_valid_poll_url_never_raises(text):
    suspend_policy.valid_poll_url(HOOK, text)
    suspend_policy.valid_poll_url(text, HOOK)


def test_expires_at_utc_is_trusted_up_to_five_minutes_past_the_initial_deadline():
    initial = NOW + timedelta(seconds=120)
    deadline = suspend_policy.follow_up_deadline
    assert deadline(initial, None, initial) == initial
    assert deadline(initial, initial + timedelta(seconds=90), initial) == initial + timedelta(seconds=90)
    assert deadline(initial, initial + timedelta(minutes=5), initial) == initial + timedelta(minutes=5)
    assert deadline(initial, initial + timedelta(minutes=5, seconds=1), initial) == initial + timedelta(minutes=5)
    assert deadline(initial, initial + timedelta(days=3), initial) == initial + timedelta(minutes=5)
    assert deadline(initial, initial - timedelta(seconds=30), initial) == initial - timedelta(seconds=30)
    later = initial + timedelta(seconds=60)
    assert deadline(initial, None, later) == later  # an unreadable value keeps the current one


def test_parse_utc_needs_a_zone():
    assert suspend_policy.parse_utc("2026-11-30T12:02:00Z") == NOW + timedelta(minutes=2)
    assert suspend_policy.parse_utc("2026-11-30T13:02:00+01:00") == NOW + timedelta(minutes=2)
    for bad in ("2026-11-30T12:02:00", "soon", "", None, 5, "9" * 100):
        assert suspend_policy.parse_utc(bad) is None


def test_read_poll():
    read = suspend_policy.read_poll
    assert read({"status": "Pending", "expiresAtUtc": "2026-11-30T12:02:00Z"}) == suspend_policy.FollowUpPoll(
        "Pending", NOW + timedelta(minutes=2))
    assert read({"status": "Replied", "reply": "go on"}).reply == "go on"
    assert read({"status": "Replied", "reply": "  "}).status is None  # a reply without text is no answer
    assert read({"status": "Replied"}).status is None
    assert read({"status": "Canceled"}).status == "Canceled"
    assert read({"status": "Expired"}).status == "Expired"
    for bad in (None, [], "Replied", {"status": "replied"}, {"status": 1}, {}):
        assert read(bad).status is None
    long = read({"status": "Replied", "reply": "x" * 100_000}).reply
    assert len(long) == suspend_policy.FOLLOW_UP_MAX_REPLY_CHARS
    assert read({"status": "Replied", "reply": "a\ud800b"}).reply == "a\ufffdb"


def test_follow_up_is_a_stage_between_the_delay_and_the_webhook():
    stage = suspend_policy.next_stage
    assert stage("delay", has_follow_up=True, has_webhook=True, has_sound=True) == "follow-up"
    assert stage("follow-up", has_follow_up=True, has_webhook=True, has_sound=True) == "webhook"
    assert stage("follow-up", has_sound=False) == "requesting"
    assert stage("delay", has_follow_up=False, has_webhook=True, has_sound=False) == "webhook"


def test_stop_follow_up_body_is_camel_case_and_bounded():
    body = stop_follow_up_body(follow_up_id="id", key=KEY, working_directory="/w", prompt_preview="p" * 900,
                               last_assistant_message="m" * 9000, created=NOW, expires=NOW + timedelta(seconds=20))
    assert body["eventType"] == "StopFollowUp" and body["reason"] == "SessionEnded" and body["followUpId"] == "id"
    assert body["provider"] == "Claude" and body["providerName"] is None and body["sessionIdentifier"] == "s1"
    assert len(body["inputPromptPreview"]) == 500 and len(body["lastAssistantMessage"]) == 4000
    assert body["createdAtUtc"] == "2026-11-30T12:00:00Z" and body["expiresAtUtc"] == "2026-11-30T12:00:20Z"
    mcp = SessionKey.create(AgentProvider.MCP, "s1", "tool")
    assert stop_follow_up_body(follow_up_id="id", key=mcp, working_directory="", prompt_preview="",
                               last_assistant_message="", created=NOW, expires=NOW)["providerName"] == "tool"
