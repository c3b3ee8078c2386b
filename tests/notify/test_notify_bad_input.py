"""Issue 17 (defects 9 and 12): every bad input to lidguard-notify is a 4xx with a reason, never a 500.
The reproducers run against the real server process (uvicorn); ``test_notify_fuzz.py`` fuzzes every body."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlencode

import httpx
from notify_harness import ServerProcess, stop_follow_up

from lidguard.notify.auth import COOKIE_NAME


def refused(response: httpx.Response, status: int = 400) -> str:
    """The answer is ``status`` with a readable reason (JSON ``error`` or page text); returns the reason."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    if response.headers.get("content-type", "").startswith("application/json"):
        reason = response.json()["error"]
    else:
        reason = response.text
    assert isinstance(reason, str) and len(reason.strip()) >= 8, response.text
    return reason


def new_follow_up(client: httpx.Client, config: Any) -> str:
    body = stop_follow_up()
    assert client.post(f"/api/webhooks/lidguard/{config.webhook_secret}", json=body).status_code == 202
    return str(body["followUpId"])


def signed_in(client: httpx.Client, config: Any) -> str:
    """Signs ``client`` in through the login form; returns the session's CSRF token."""
    page = client.get("/login")
    login_csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    answer = client.post("/login", data={"accessToken": config.access_token, "csrf": login_csrf, "returnUrl": "/"})
    assert answer.status_code == 303 and COOKIE_NAME in client.cookies
    return re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text).group(1)  # type: ignore[union-attr]


def test_extend_seconds_that_int_cannot_read_are_refused(notify_server: ServerProcess, notify_config: Any) -> None:
    with httpx.Client(base_url=notify_server.base, timeout=30) as client:
        follow_up = new_follow_up(client, notify_config)
        bearer = {"Authorization": f"Bearer {notify_config.access_token}"}
        api = f"/api/follow-ups/{follow_up}/extend"
        for seconds in ("²", "1" * 5000, "٣", "1_0", "1e3", 10**30, 1.5, float("1e308"), None, [], {}):
            reason = refused(client.post(api, json={"seconds": seconds}, headers=bearer))
            assert "seconds must be a whole number from 1 to 300" in reason, (seconds, reason)
        # The same values through the reply page's form (signed in, with the form's CSRF token).
        csrf = signed_in(client, notify_config)
        for seconds in ("²", "1" * 5000, "-5", "0x10"):
            answer = client.post(f"/follow-ups/{follow_up}/extend",
                                 content=urlencode({"csrf": csrf, "seconds": seconds}),
                                 headers={"content-type": "application/x-www-form-urlencoded"})
            assert "seconds must be a whole number" in refused(answer), seconds
        assert client.post(api, json={"seconds": "30"}, headers=bearer).status_code == 200  # still works
        # A 5,000-digit number literal (not a string) is not JSON this server reads.
        assert "JSON" in refused(client.post(api, content=b'{"seconds": ' + b"7" * 5000 + b"}", headers=bearer))


def test_webhook_times_at_the_edges_of_the_calendar_are_refused(notify_server: ServerProcess,
                                                                notify_config: Any) -> None:
    url = f"{notify_server.base}/api/webhooks/lidguard/{notify_config.webhook_secret}"
    for expires in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59.999999Z",
                    "2026-02-30T00:00:00Z", "1" * 5000, 10**30):
        reason = refused(httpx.post(url, json=stop_follow_up(expiresAtUtc=expires), timeout=30))
        assert "expiresAtUtc" in reason, (expires, reason)
    surrogate = json.dumps(stop_follow_up(expiresAtUtc="\ud800")).encode()  # ASCII: the escape "\\ud800"
    assert "surrogate" in refused(httpx.post(url, content=surrogate, timeout=30))


def test_webhook_fields_of_the_wrong_type_are_refused_before_the_database(notify_server: ServerProcess,
                                                                          notify_config: Any) -> None:
    url = f"{notify_server.base}/api/webhooks/lidguard/{notify_config.webhook_secret}"
    pre_suspend = {"eventType": "PreSuspend", "reason": "Completed"}
    for key, value in (("provider", 10**29), ("provider", -(10**29)), ("sessionIdentifier", 2**63),
                       ("workingDirectory", 1.5), ("providerName", True), ("softLockedSessionCount", 10**30)):
        reason = refused(httpx.post(url, json={**pre_suspend, key: value}, timeout=30))
        assert key in reason, (key, value, reason)
    for raw in (b'{"eventType":"PreSuspend","reason":"Completed","\\ud800":1}',
                b'{"eventType":"PreSuspend","reason":"Completed","extra":NaN}',
                b'{"eventType":"PreSuspend","reason":"Completed","extra":' + b"9" * 5000 + b"}"):
        refused(httpx.post(url, content=raw, timeout=30))
    assert httpx.post(url, json={**pre_suspend, "provider": "Claude", "extra": 10**29}, timeout=30).status_code == 202


def test_logout_without_csrf_is_refused(notify_server: ServerProcess, notify_config: Any) -> None:
    with httpx.Client(base_url=notify_server.base, timeout=30) as anonymous:
        refused(anonymous.post("/logout"))
        refused(anonymous.post("/logout", data={"csrf": "forged"}))
        refused(anonymous.post("/logout", content=b"csrf=" + b"x" * 70000,
                               headers={"content-type": "application/x-www-form-urlencoded"}), 413)
    with httpx.Client(base_url=notify_server.base, timeout=30) as client:
        csrf = signed_in(client, notify_config)
        refused(client.post("/logout"))
        assert client.get("/").status_code == 200  # still signed in
        out = client.post("/logout", data={"csrf": csrf})
        assert out.status_code == 303 and out.headers["location"] == "/login"
        assert client.get("/").status_code == 303
