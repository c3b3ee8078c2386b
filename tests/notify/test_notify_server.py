"""lidguard-notify: init/config, migrations, the webhook endpoint, the follow-up protocol of
ASK_BEFORE_SLEEP.md (poll, reply, extend, cancel, expiry) and sign-in/CSRF/Bearer, in process."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from notify_harness import stop_follow_up

from lidguard.notify.auth import COOKIE_NAME, safe_return_url
from lidguard.notify.cli import main
from lidguard.notify.config import ConfigError, env_name, init_config, load_config
from lidguard.notify.store import MIGRATIONS, Store, parse_iso


def bearer(config: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {config.access_token}"}


def webhook_path(config: Any) -> str:
    return f"/api/webhooks/lidguard/{config.webhook_secret}"


def post_follow_up(client: Any, config: Any, **extra: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    body = stop_follow_up(**extra)
    response = client.post(webhook_path(config), json=body)
    assert response.status_code == 202, response.text
    return body, response.json()


# init / config ------------------------------------------------------------------------------------
def test_init_writes_a_private_config_with_distinct_random_secrets(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "conf" / "notify.json"
    assert main(["init", "--config", str(path), "--public-base-url", "https://notify.example.org/", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads(path.read_text())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stored["AccessToken"] != stored["WebhookSecret"] and len(stored["AccessToken"]) >= 32
    assert printed["accessToken"] == stored["AccessToken"]
    assert printed["webhookUrl"] == f"https://notify.example.org/api/webhooks/lidguard/{stored['WebhookSecret']}"
    # The VAPID public key belongs to the private key.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from notify_harness import b64url, b64url_decode

    private = ec.derive_private_key(int.from_bytes(b64url_decode(stored["VapidPrivateKey"]), "big"), ec.SECP256R1())
    assert b64url(private.public_key().public_bytes(serialization.Encoding.X962,
                                                    serialization.PublicFormat.UncompressedPoint)) == \
        stored["VapidPublicKey"]
    other = init_config(tmp_path / "other.json", "http://localhost:9")
    assert other.access_token != stored["AccessToken"] and other.vapid_private_key != stored["VapidPrivateKey"]
    # A second init does not overwrite the secrets: one line, exit 1.
    assert main(["init", "--config", str(path), "--public-base-url", "https://notify.example.org"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "already exists" in error


def test_init_text_prints_the_webhook_urls_for_lidguard_settings(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "lidguard.notify", "init", "--config", str(tmp_path / "n.json"),
                             "--public-base-url", "http://127.0.0.1:8787"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    secret = json.loads((tmp_path / "n.json").read_text())["WebhookSecret"]
    url = f"http://127.0.0.1:8787/api/webhooks/lidguard/{secret}"
    assert f"lidguard settings --closed-lid-stop-follow-up-webhook-url {url}" in result.stdout
    assert f"lidguard settings --pre-suspend-webhook-url {url}" in result.stdout


def test_config_validation_and_env_overrides(tmp_path: Path) -> None:
    path = tmp_path / "n.json"
    init_config(path, "http://127.0.0.1:8787")
    config = load_config(path, {"LIDGUARD_NOTIFY_PUBLIC_BASE_URL": "https://phone.example.net/x/"})
    assert config.public_base_url == "https://phone.example.net/x"
    assert config.database_path == (tmp_path / "notifications.sqlite").resolve()
    with pytest.raises(ConfigError, match="https"):
        load_config(path, {"LIDGUARD_NOTIFY_PUBLIC_BASE_URL": "http://192.168.1.9:8787"})
    stored = json.loads(path.read_text())
    with pytest.raises(ConfigError, match="different"):
        load_config(path, {"LIDGUARD_NOTIFY_WEBHOOK_SECRET": stored["AccessToken"]})
    with pytest.raises(ConfigError, match="config file not found: .*missing.json"):
        load_config(tmp_path / "missing.json", {})
    everything = {env_name(key): value for key, value in stored.items()}  # no file needed when the env has it all
    assert load_config(tmp_path / "missing.json", everything).access_token == stored["AccessToken"]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({key: value for key, value in stored.items() if key != "AccessToken"}))
    with pytest.raises(ConfigError, match="LIDGUARD_NOTIFY_ACCESS_TOKEN"):
        load_config(partial, {})
    with pytest.raises(ConfigError, match="not valid Unicode"):
        load_config(path, {"LIDGUARD_NOTIFY_VAPID_SUBJECT": "mailto:\udcff@example.org"})
    result = subprocess.run([sys.executable, "-m", "lidguard.notify", "serve", "--config", str(tmp_path / "none.json")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and result.stderr == f"lidguard-notify: config file not found: " \
        f"{tmp_path / 'none.json'} (create it with lidguard-notify init --public-base-url URL)\n"


def test_migrations_build_every_table_from_an_empty_database(tmp_path: Path) -> None:
    path = tmp_path / "db" / "notifications.sqlite"
    store = Store(path)
    assert store.schema_version() == len(MIGRATIONS)
    store.close()
    Store(path).close()  # reopening applies nothing twice
    with sqlite3.connect(path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"Subscriptions", "WebhookEvents", "NotificationDeliveries", "FollowUps"} <= tables


# webhooks -----------------------------------------------------------------------------------------
def test_webhook_secret_validation_and_accept(notify_client: Any, notify_config: Any) -> None:
    client, config = notify_client, notify_config
    assert client.get("/healthz").text == "ok"
    assert client.post("/api/webhooks/lidguard/wrong-secret-value", json={"eventType": "PreSuspend"}).status_code == 404
    assert client.post(webhook_path(config) + "x", json={"eventType": "PreSuspend"}).status_code == 404
    missing = client.post(webhook_path(config), json={"reason": "Completed"})
    assert missing.status_code == 400 and "eventType" in missing.json()["error"]
    assert client.post(webhook_path(config), content=b"not json").status_code == 400
    assert client.post(webhook_path(config), json={"eventType": "PreSuspend", "reason": "Nope"}).status_code == 400
    assert client.post(webhook_path(config), json={"eventType": "PostSessionEnd", "reason": "SessionEnded"}) \
        .status_code == 400
    assert client.post(webhook_path(config), json={"eventType": "PreSuspend", "reason": "SoftLocked",
                                                   "softLockedSessionCount": -1}).status_code == 400
    assert client.post(webhook_path(config), content=b'{"eventType":"PreSuspend","reason":"Completed",'
                       b'"workingDirectory":"\\ud800"}').status_code == 400
    big = client.post(webhook_path(config), content=b"{" + b" " * 70000 + b"}")
    assert big.status_code == 413
    assert client.post(webhook_path(config), json={"eventType": "PreSuspend", "reason": "Completed"}).status_code == 202
    ended = {"eventType": "PostSessionEnd", "reason": "SessionEnded", "provider": "Codex", "sessionIdentifier": "s",
             "activeSessionCount": 0}
    assert client.post(webhook_path(config), json=ended).status_code == 202
    for bad in ({"followUpId": "not-a-uuid"}, {"expiresAtUtc": "tomorrow"}, {"provider": None}):
        assert client.post(webhook_path(config), json=stop_follow_up(**bad)).status_code == 400, bad


def test_stop_follow_up_answers_a_same_origin_poll_url(notify_client: Any, notify_config: Any) -> None:
    body, answer = post_follow_up(notify_client, notify_config)
    poll = urlsplit(answer["pollUrl"])
    webhook = urlsplit(notify_config.webhook_url())
    assert (poll.scheme, poll.hostname, poll.port) == (webhook.scheme, webhook.hostname, webhook.port)
    assert re.fullmatch(rf"/api/follow-ups/{body['followUpId']}/[A-Za-z0-9_-]{{20,}}", poll.path)
    assert parse_iso(answer["expiresAtUtc"]) == parse_iso(body["expiresAtUtc"])
    state = notify_client.get(answer["pollUrl"]).json()
    assert state == {"status": "Pending", "expiresAtUtc": answer["expiresAtUtc"]}
    # A retried webhook (same followUpId) gets the same poll URL.
    again = notify_client.post(webhook_path(notify_config), json=body)
    assert again.status_code == 202 and again.json()["pollUrl"] == answer["pollUrl"]
    # The poll URL is a capability: a wrong token or id is 404, no cookie needed.
    assert notify_client.get(answer["pollUrl"][:-2] + "zz").status_code == 404
    assert notify_client.get(f"/api/follow-ups/{body['followUpId'][:-1]}0/x").status_code == 404


# follow-up protocol -------------------------------------------------------------------------------
def test_reply_turns_the_poll_replied_and_is_final(notify_client: Any, notify_config: Any) -> None:
    body, answer = post_follow_up(notify_client, notify_config)
    api = f"/api/follow-ups/{body['followUpId']}"
    assert notify_client.post(f"{api}/reply", json={"text": "x"}).status_code == 401  # no credentials
    assert notify_client.post(f"{api}/reply", json={"text": "x"},
                              headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert notify_client.post(f"{api}/reply", json={"text": "  "}, headers=bearer(notify_config)).status_code == 400
    assert notify_client.post(f"{api}/reply", json={"text": "y" * 4001}, headers=bearer(notify_config)).status_code \
        == 400
    reply = notify_client.post(f"{api}/reply", json={"text": "now run the integration tests"},
                               headers=bearer(notify_config))
    assert reply.status_code == 200
    assert notify_client.get(answer["pollUrl"]).json() == {
        "status": "Replied", "expiresAtUtc": answer["expiresAtUtc"], "reply": "now run the integration tests"}
    for action, payload in (("reply", {"text": "again"}), ("extend", {"seconds": 30}), ("cancel", None)):
        second = notify_client.post(f"{api}/{action}", json=payload, headers=bearer(notify_config))
        assert second.status_code == 409 and second.json()["status"] == "Replied"
    assert notify_client.post("/api/follow-ups/00000000-0000-4000-8000-000000000000/reply", json={"text": "x"},
                              headers=bearer(notify_config)).status_code == 404


def test_extend_is_capped_at_five_minutes_past_the_initial_deadline(notify_client: Any, notify_config: Any) -> None:
    body, answer = post_follow_up(notify_client, notify_config, seconds=60)
    api = f"/api/follow-ups/{body['followUpId']}"
    initial = parse_iso(answer["expiresAtUtc"])
    first = notify_client.post(f"{api}/extend", json={"seconds": 120}, headers=bearer(notify_config)).json()
    assert parse_iso(first["expiresAtUtc"]) == initial + timedelta(seconds=120)
    for _ in range(3):
        capped = notify_client.post(f"{api}/extend", json={"seconds": 300}, headers=bearer(notify_config)).json()
        assert parse_iso(capped["expiresAtUtc"]) == initial + timedelta(seconds=300)
    for bad in (0, 301, "ten", True):
        assert notify_client.post(f"{api}/extend", json={"seconds": bad}, headers=bearer(notify_config)) \
            .status_code == 400
    assert parse_iso(notify_client.get(answer["pollUrl"]).json()["expiresAtUtc"]) == initial + timedelta(seconds=300)
    detail = notify_client.get(api, headers=bearer(notify_config)).json()
    assert parse_iso(detail["maxExpiresAtUtc"]) == initial + timedelta(seconds=300)


def test_cancel_turns_the_poll_canceled(notify_client: Any, notify_config: Any) -> None:
    body, answer = post_follow_up(notify_client, notify_config)
    cancel = notify_client.post(f"/api/follow-ups/{body['followUpId']}/cancel", headers=bearer(notify_config))
    assert cancel.status_code == 200 and cancel.json()["status"] == "Canceled"
    assert notify_client.get(answer["pollUrl"]).json()["status"] == "Canceled"


def test_a_passed_deadline_is_expired_and_final(notify_client: Any, notify_config: Any) -> None:
    body, answer = post_follow_up(notify_client, notify_config, seconds=-1)
    assert notify_client.get(answer["pollUrl"]).json()["status"] == "Expired"
    late = notify_client.post(f"/api/follow-ups/{body['followUpId']}/reply", json={"text": "too late"},
                              headers=bearer(notify_config))
    assert late.status_code == 409 and late.json()["status"] == "Expired"


# sign-in, cookie, CSRF ----------------------------------------------------------------------------
def sign_in(client: Any, token: str, return_url: str = "/") -> Any:
    page = client.get(f"/login?returnUrl={return_url}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    return client.post("/login", data={"accessToken": token, "csrf": csrf, "returnUrl": return_url},
                       follow_redirects=False)


def test_sign_in_cookie_csrf_and_sign_out(notify_client: Any, notify_config: Any) -> None:
    client = notify_client
    body, answer = post_follow_up(client, notify_config)
    page_path = f"/follow-ups/{body['followUpId']}"
    redirect = client.get(page_path, follow_redirects=False)
    assert redirect.status_code == 303 and redirect.headers["location"].startswith("/login?returnUrl=/follow-ups/")
    wrong = sign_in(client, "not-the-token")
    assert wrong.status_code == 401 and 'id="login-error"' in wrong.text and COOKIE_NAME not in wrong.cookies
    forged = client.post("/login", data={"accessToken": notify_config.access_token, "csrf": "forged"},
                         follow_redirects=False)
    assert forged.status_code == 400
    signed = sign_in(client, notify_config.access_token, page_path)
    assert signed.status_code == 303 and signed.headers["location"] == page_path
    cookie_header = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie_header and "samesite=strict" in cookie_header
    html = client.get(page_path).text
    assert "add the login form" in html and "The login form is done" in html
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)
    api = f"/api/follow-ups/{body['followUpId']}"
    # Cookie alone is not enough for a JSON POST: the CSRF header is required too.
    assert client.post(f"{api}/extend", json={"seconds": 10}).status_code == 401
    assert client.post(f"{api}/extend", json={"seconds": 10}, headers={"X-CSRF-Token": csrf}).status_code == 200
    # Forms without the token are refused; with it they work.
    assert client.post(f"{page_path}/cancel", data={"csrf": "bad"}).status_code == 400
    done = client.post(f"{page_path}/reply", data={"csrf": csrf, "text": "carry on"}, follow_redirects=False)
    assert done.status_code == 303
    assert client.get(answer["pollUrl"]).json()["reply"] == "carry on"
    assert "carry on" in client.get(page_path).text
    assert client.get("/events").status_code == 200 and "StopFollowUp" in client.get("/events").text
    assert client.post("/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    client.cookies.clear()
    assert client.get("/", follow_redirects=False).status_code == 303


def test_pages_carry_security_headers_and_escape_texts(notify_client: Any, notify_config: Any) -> None:
    body, _ = post_follow_up(notify_client, notify_config, lastAssistantMessage="<script>alert(1)</script>")
    sign_in(notify_client, notify_config.access_token)
    page = notify_client.get(f"/follow-ups/{body['followUpId']}")
    assert "<script>alert(1)" not in page.text and "&lt;script&gt;alert(1)" in page.text
    assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"
    assert notify_client.get("/service-worker.js").headers["content-type"].startswith("text/javascript")


def test_return_urls_stay_local() -> None:
    assert safe_return_url("/follow-ups/x") == "/follow-ups/x"
    for bad in ("//evil.example", "/\\evil.example", "https://evil.example", "", None, "javascript:x"):
        assert safe_return_url(bad) == "/"


def test_subscriptions_api(notify_client: Any, notify_config: Any) -> None:
    sub = {"endpoint": "https://push.example/abc", "keys": {"p256dh": "BAAA", "auth": "AAAA"}}
    assert notify_client.post("/api/push/subscriptions", json=sub).status_code == 401
    assert notify_client.post("/api/push/subscriptions", json=sub, headers=bearer(notify_config)).status_code == 204
    for bad in ({**sub, "endpoint": "http://push.example/x"}, {**sub, "keys": {"p256dh": "x"}}, {"keys": {}}):
        assert notify_client.post("/api/push/subscriptions", json=bad, headers=bearer(notify_config)).status_code == 400
    assert notify_client.get("/api/push/public-key").json() == {"publicKey": notify_config.vapid_public_key}
    store = Store(notify_config.database_path)
    try:
        assert [row["Endpoint"] for row in store.subscriptions(active_only=True)] == [sub["endpoint"]]
        assert notify_client.request("DELETE", "/api/push/subscriptions", json={"endpoint": sub["endpoint"]},
                                     headers=bearer(notify_config)).status_code == 204
        assert store.subscriptions(active_only=True) == []
    finally:
        store.close()


def test_serve_errors_are_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "n.json"
    init_config(path, "http://127.0.0.1:8787")
    env = {**os.environ, "LIDGUARD_NOTIFY_CONFIG": str(path), "LIDGUARD_NOTIFY_PORT": "http"}
    result = subprocess.run([sys.executable, "-m", "lidguard.notify", "serve"], capture_output=True, text=True,
                            env=env, timeout=30)
    assert result.returncode == 1 and result.stderr == "lidguard-notify: --port must be a number from 0 to 65535, " \
                                                       "not 'http'.\n"
    result = subprocess.run([sys.executable, "-m", "lidguard.notify", "serve", "--bogus"], capture_output=True,
                            text=True, env=env, timeout=30)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    import lidguard.notify as notify
    import lidguard.shared.extras as extras

    monkeypatch.setattr(extras.importlib.util, "find_spec", lambda name: None if name == "pywebpush" else object())
    with pytest.raises(notify.NotifyExtraMissing, match=r"missing: pywebpush\); install them with: .*\[notify\]"):
        notify.require_extra()
