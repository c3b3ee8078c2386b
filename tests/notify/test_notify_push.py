"""Web Push end to end without the internet: a local receiver plays the push service and decrypts the
payload with the subscription's private key (http-ece); 404/410 deactivate; a server killed in the
middle of a dispatch loses no event."""

from __future__ import annotations

import threading
from typing import Any

from notify_harness import PushReceiver, ServerProcess, stop_follow_up, verify_vapid, wait_for

from lidguard.notify.store import Store


def bearer(config: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {config.access_token}"}


def events(config: Any) -> list[dict[str, Any]]:
    store = Store(config.database_path)
    try:
        return list(reversed(store.latest_events()))
    finally:
        store.close()


def deliveries(config: Any) -> list[dict[str, Any]]:
    store = Store(config.database_path)
    try:
        return [row for event in reversed(store.latest_events()) for row in store.deliveries(event["Id"])]
    finally:
        store.close()


def test_follow_up_push_is_encrypted_signed_and_decryptable(notify_client: Any, notify_config: Any,
                                                            push_receiver: PushReceiver) -> None:
    subscription = push_receiver.subscription()
    assert notify_client.post("/api/push/subscriptions", json=subscription,
                              headers=bearer(notify_config)).status_code == 204
    body = stop_follow_up(lastAssistantMessage="All 41 tests pass.\nShall I open the pull request?")
    webhook = f"/api/webhooks/lidguard/{notify_config.webhook_secret}"
    assert notify_client.post(webhook, json=body).status_code == 202
    item = wait_for(lambda: push_receiver.received and push_receiver.received[0], what="the push")
    assert item.path == "/push/phone"
    assert item.headers["content-encoding"] == "aes128gcm"
    assert item.headers["ttl"] == "300" and item.headers["urgency"] == "high"
    verify_vapid(item.headers["authorization"], notify_config.vapid_public_key, f"http://127.0.0.1:{push_receiver.port}")
    payload = push_receiver.decrypt(item)
    assert payload == {"title": "Claude Code finished - reply to continue",
                       "body": "All 41 tests pass. Shall I open the pull request?",
                       "url": f"{notify_config.public_base_url}/follow-ups/{body['followUpId']}",
                       "tag": f"lidguard-stopfollowup-{body['followUpId']}"}
    wait_for(lambda: events(notify_config)[-1]["Status"] == "Completed", what="the event to complete")
    assert [row["Status"] for row in deliveries(notify_config)] == ["Succeeded"]
    # A PreSuspend event reaches the same subscription with its own title.
    assert notify_client.post(webhook, json={"eventType": "PreSuspend", "reason": "Completed"}).status_code == 202
    second = wait_for(lambda: len(push_receiver.received) == 2 and push_receiver.received[1], what="second push")
    assert push_receiver.decrypt(second)["title"] == "LidGuard session completed"


def test_gone_subscription_is_deactivated_and_other_failures_are_transient(
        notify_client: Any, notify_config: Any, push_receiver: PushReceiver) -> None:
    push_receiver.status = {"/push/gone": 410, "/push/busy": 503}
    for name in ("gone", "busy", "phone"):
        assert notify_client.post("/api/push/subscriptions", json=push_receiver.subscription(name),
                                  headers=bearer(notify_config)).status_code == 204
    webhook = f"/api/webhooks/lidguard/{notify_config.webhook_secret}"
    assert notify_client.post(webhook, json={"eventType": "PreSuspend", "reason": "SoftLocked",
                                             "softLockedSessionCount": 2}).status_code == 202
    wait_for(lambda: events(notify_config) and events(notify_config)[-1]["Status"] == "Completed", what="dispatch")
    soft_locked = next(item for item in push_receiver.received if item.path == "/push/phone")
    assert push_receiver.decrypt(soft_locked)["body"] == \
        "2 session(s) are soft-locked and LidGuard is preparing the configured suspend flow."
    by_status = {row["Status"]: row["HttpStatusCode"] for row in deliveries(notify_config)}
    assert by_status == {"PermanentFailure": 410, "TransientFailure": 503, "Succeeded": 201}
    store = Store(notify_config.database_path)
    try:
        active = {row["Endpoint"].rsplit("/", 1)[1] for row in store.subscriptions(active_only=True)}
    finally:
        store.close()
    assert active == {"busy", "phone"}
    # The next event no longer goes to the deactivated endpoint.
    push_receiver.received.clear()
    assert notify_client.post(webhook, json={"eventType": "PreSuspend", "reason": "Completed"}).status_code == 202
    wait_for(lambda: len(events(notify_config)) == 2 and events(notify_config)[-1]["Status"] == "Completed",
             what="second dispatch")
    assert sorted(item.path for item in push_receiver.received) == ["/push/busy", "/push/phone"]
    phone = next(item for item in push_receiver.received if item.path == "/push/phone")
    assert push_receiver.decrypt(phone)["title"] == "LidGuard session completed"


def test_restart_in_the_middle_of_a_dispatch_loses_no_event(notify_config: Any, notify_port: int,
                                                            push_receiver: PushReceiver, tmp_path: Any) -> None:
    import httpx

    push_receiver.hold = threading.Event()  # the push service stalls: the dispatch stays in flight
    server = ServerProcess(tmp_path / "notify.json", notify_port).start()
    try:
        base = server.base
        assert httpx.post(f"{base}/api/push/subscriptions", json=push_receiver.subscription(),
                          headers=bearer(notify_config)).status_code == 204
        first, second = stop_follow_up(), stop_follow_up()
        webhook = f"{base}/api/webhooks/lidguard/{notify_config.webhook_secret}"
        assert httpx.post(webhook, json=first).status_code == 202
        wait_for(push_receiver.hold.is_set, what="the first push to be in flight")
        assert httpx.post(webhook, json=second).status_code == 202
        server.kill()  # SIGKILL while the first push waits for an answer and the second is queued
    finally:
        server.stop()
    # On disk: the first event claimed and unfinished, the second accepted (202) and not yet claimed.
    assert [row["Status"] for row in events(notify_config)] == ["Processing", "Pending"]
    push_receiver.hold = None
    push_receiver.release.set()
    server = ServerProcess(tmp_path / "notify.json", notify_port).start()
    try:
        wait_for(lambda: [row["Status"] for row in events(notify_config)] == ["Completed", "Completed"],
                 timeout=20, what="both events to complete after the restart")
        tags = {push_receiver.decrypt(item)["tag"] for item in push_receiver.received}
        assert tags == {f"lidguard-stopfollowup-{first['followUpId']}", f"lidguard-stopfollowup-{second['followUpId']}"}
        assert [row["AttemptCount"] for row in events(notify_config)] == [2, 1]
        assert all(row["Status"] == "Succeeded" for row in deliveries(notify_config))
        # The follow-up itself survived too: its poll URL still answers.
        poll = httpx.post(webhook, json=first).json()["pollUrl"]
        assert httpx.get(poll).json()["status"] == "Pending"
    finally:
        server.stop()


def test_each_subscription_gets_its_pushes_in_the_language_of_the_browser_that_subscribed(
        notify_client: Any, notify_config: Any, push_receiver: PushReceiver) -> None:
    from lidguard import l10n

    languages = {"korean": "ko-KR,ko;q=0.9", "taiwan": "zh-TW,zh;q=0.8", "api": None}
    for name, accept in languages.items():
        headers = bearer(notify_config) | ({"Accept-Language": accept} if accept else {})
        assert notify_client.post("/api/push/subscriptions", json=push_receiver.subscription(name),
                                  headers=headers).status_code == 204
    webhook = f"/api/webhooks/lidguard/{notify_config.webhook_secret}"
    assert notify_client.post(webhook, json={"eventType": "PreSuspend", "reason": "Completed"}).status_code == 202
    wait_for(lambda: len(push_receiver.received) == 3, what="three pushes")
    titles = {item.path.rsplit("/", 1)[1]: push_receiver.decrypt(item)["title"] for item in push_receiver.received}
    english = "LidGuard session completed"
    assert titles == {"korean": l10n.translation("ko").gettext(english),
                      "taiwan": l10n.translation("zh-Hant").gettext(english),
                      "api": english}  # no header: the server's language (English here)
    assert titles["korean"] != english and titles["taiwan"] != english
    # Subscribing again from a Japanese browser moves that subscription to Japanese.
    assert notify_client.post("/api/push/subscriptions", json=push_receiver.subscription("korean"),
                              headers=bearer(notify_config) | {"Accept-Language": "ja"}).status_code == 204
    push_receiver.received.clear()
    assert notify_client.post(webhook, json={"eventType": "PreSuspend", "reason": "Completed"}).status_code == 202
    wait_for(lambda: len(push_receiver.received) == 3, what="three more pushes")
    again = {item.path.rsplit("/", 1)[1]: push_receiver.decrypt(item)["title"] for item in push_receiver.received}
    assert again["korean"] == l10n.translation("ja").gettext(english)


def test_a_database_from_before_languages_is_migrated_and_keeps_its_subscriptions(tmp_path: Any) -> None:
    import sqlite3

    from lidguard.notify.store import MIGRATIONS

    path = tmp_path / "notify.db"
    old = sqlite3.connect(path)
    old.executescript(f"{MIGRATIONS[0]}\nPRAGMA user_version = 1;")
    old.execute("INSERT INTO Subscriptions (Endpoint, P256dh, Auth, CreatedAtUtc, UpdatedAtUtc) "
                "VALUES ('https://push.example/1', 'k', 'a', 't', 't')")
    old.commit()
    old.close()
    store = Store(path)
    try:
        [row] = store.subscriptions(active_only=True)
        assert row["Endpoint"] == "https://push.example/1" and row["Culture"] is None
        store.upsert_subscription("https://push.example/1", "k", "a", "ko")
        assert store.subscriptions()[0]["Culture"] == "ko"
    finally:
        store.close()


def test_a_garbage_accept_language_stores_one_of_the_known_languages(notify_client: Any, notify_config: Any,
                                                                    push_receiver: PushReceiver) -> None:
    from lidguard.l10n import CULTURES

    for index, header in enumerate(["x" * 8000, "ko;q=NaN, ja;q=1e309, zh;q=-1", ";;;,,,q=", "*", "ko-" * 500]):
        assert notify_client.post("/api/push/subscriptions", json=push_receiver.subscription(f"g{index}"),
                                  headers=bearer(notify_config) | {"Accept-Language": header}).status_code == 204
    store = Store(notify_config.database_path)
    try:
        cultures = [row["Culture"] for row in store.subscriptions()]
    finally:
        store.close()
    assert len(cultures) == 5 and all(culture in CULTURES for culture in cultures), cultures
