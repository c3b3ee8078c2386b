"""The notification server speaks the runtime's side of ASK_BEFORE_SLEEP.md: the body the runtime
builds is accepted, the poll URL passes the runtime's same-origin check, every poll answer parses to
the status the server holds; and the dispatcher's stale-claim retry."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from lidguard.notify.store import Store
from lidguard.providers import AgentProvider
from lidguard.runtime import suspend_policy
from lidguard.runtime.components.followup import stop_follow_up_body
from lidguard.runtime.sessions import SessionKey


def runtime_body(provider: AgentProvider = AgentProvider.CODEX, name: str = "", window: int = 120) -> dict[str, Any]:
    now = datetime.now(timezone.utc)
    return stop_follow_up_body(follow_up_id=str(uuid.uuid4()), key=SessionKey.create(provider, "019a-sess", name),
                               working_directory="/home/me/app", prompt_preview="fix the flaky test",
                               last_assistant_message="Fixed; 3 runs green.", created=now,
                               expires=now + timedelta(seconds=window))


def test_runtime_body_poll_url_and_answers_round_trip(notify_client: Any, notify_config: Any) -> None:
    webhook = notify_config.webhook_url()
    bearer = {"Authorization": f"Bearer {notify_config.access_token}"}
    for provider, name in ((AgentProvider.CODEX, ""), (AgentProvider.MCP, "my-agent")):
        body = runtime_body(provider, name)
        response = notify_client.post(webhook, json=body)
        assert response.status_code == 202, response.text
        answer = response.json()
        assert suspend_policy.valid_poll_url(webhook, answer["pollUrl"])
        initial = suspend_policy.parse_utc(answer["expiresAtUtc"])
        sent = suspend_policy.parse_utc(body["expiresAtUtc"])
        assert initial is not None and sent is not None and abs((initial - sent).total_seconds()) < 0.001
        poll = suspend_policy.read_poll(notify_client.get(answer["pollUrl"]).json())
        assert poll.status == "Pending"
        api = f"/api/follow-ups/{body['followUpId']}"
        notify_client.post(f"{api}/extend", json={"seconds": 300}, headers=bearer)
        poll = suspend_policy.read_poll(notify_client.get(answer["pollUrl"]).json())
        assert poll.expires == suspend_policy.follow_up_deadline(initial, poll.expires, initial) == \
            initial + timedelta(minutes=5)
    notify_client.post(f"{api}/reply", json={"text": "now open the pull request"}, headers=bearer)
    replied = suspend_policy.read_poll(notify_client.get(answer["pollUrl"]).json())
    assert (replied.status, replied.reply) == ("Replied", "now open the pull request")
    canceled = runtime_body()
    poll_url = notify_client.post(webhook, json=canceled).json()["pollUrl"]
    notify_client.post(f"/api/follow-ups/{canceled['followUpId']}/cancel", headers=bearer)
    assert suspend_policy.read_poll(notify_client.get(poll_url).json()).status == "Canceled"
    expired = runtime_body(window=-1)
    poll_url = notify_client.post(webhook, json=expired).json()["pollUrl"]
    assert suspend_policy.read_poll(notify_client.get(poll_url).json()).status == "Expired"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def test_a_stale_claim_is_taken_again_and_delivered_subscriptions_are_skipped(tmp_path: Path) -> None:
    clock = Clock()
    store = Store(tmp_path / "n.sqlite", clock=clock)
    try:
        store.upsert_subscription("https://push.example/a", "k", "a")
        store.upsert_subscription("https://push.example/b", "k", "b")
        event_id, _ = store.insert_event({"eventType": "PreSuspend", "reason": "Completed"})
        [claimed] = store.claim_events(stale_seconds=300)
        assert claimed["Id"] == event_id and store.event(event_id)["Status"] == "Processing"
        first = store.subscriptions()[0]["Id"]
        store.record_delivery(event_id, first, "Succeeded", 201, None)
        clock.now += timedelta(seconds=299)
        assert store.claim_events(stale_seconds=300) == []  # still fresh: nobody else takes it
        clock.now += timedelta(seconds=2)
        [again] = store.claim_events(stale_seconds=300)
        assert again["Id"] == event_id and store.event(event_id)["AttemptCount"] == 2
        assert store.settled_subscription_ids(event_id) == {first}
        store.finish_event(event_id, "Completed")
        clock.now += timedelta(seconds=1000)
        assert store.claim_events(stale_seconds=300) == []
    finally:
        store.close()


def test_the_runtime_suspend_blocked_body_is_accepted_and_shown(notify_client: Any, notify_config: Any) -> None:
    from lidguard.notify.events import push_payload
    from lidguard.platform.api import SuspendBlocker
    from lidguard.runtime.blockers import suspend_blocked_body

    blockers = [SuspendBlocker("backup-tool", "Nightly backup", 4242, 1001, "sleep", agent=None),
                SuspendBlocker("Claude Code", "turn", 77, 1000, "sleep:idle", agent="Claude")]
    body = suspend_blocked_body("Completed", "Sleep", blockers,
                                {"provider": "Codex", "sessionIdentifier": "019a-sess", "activeSessionCount": 0})
    response = notify_client.post(notify_config.webhook_url(), json=body)
    assert response.status_code == 202, response.text
    shown = push_payload(body, "https://notify.test")
    assert shown["title"] == "LidGuard suspend blocked"
    assert "backup-tool (Nightly backup), pid 4242, uid 1001; Claude Code (turn)" in shown["body"]
    missing = {key: value for key, value in body.items() if key != "blockedBy"}
    assert notify_client.post(notify_config.webhook_url(), json=missing).status_code == 400
    assert notify_client.post(notify_config.webhook_url(), json={**body, "reason": "Blocked"}).status_code == 400
    assert notify_client.post(notify_config.webhook_url(), json={**body, "blockerPid": -1}).status_code == 400
