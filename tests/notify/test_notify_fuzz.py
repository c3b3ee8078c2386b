"""Issue 17 defect 9: hypothesis over the JSON and form body of every endpoint lidguard-notify has (and
raw bytes): no answer is ever a 5xx, and every refusal is a 4xx with a reason. One app per test, kept
across examples (signed in, one pending follow-up), so the bodies reach the checks behind sign-in/CSRF."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notify_harness import stop_follow_up

EXAMPLES = 150  # per test: 450 bodies per run (1,500 per test found nothing more)

_surrogates = st.integers(0xD800, 0xDFFF).map(chr)
_text = st.one_of(
    st.text(max_size=12),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=4), _surrogates, st.text(max_size=4)),
    st.sampled_from(["²", "٣", "1" * 5000, "-1", "0", "60", "300", "301", " 7 ", "1e3", "0x10", "NaN", "",
                     "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "2026-02-30T00:00:00Z",
                     "http://[::1", "https://[", "http://127.0.0.1:99999/x", "https://push.example/a",
                     "https://push.example/" + "a" * 3000, "https://push.example/\ud800", "https://\udcff.example/",
                     "x" * 9000, "Mcp", "Claude", "\x00", "\u2028"]),
)
_numbers = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([10**30, -(10**30), 2**63, 0, -1, 1, 300, 301]),
                     st.floats())  # floats: NaN and infinities too (written as NaN / Infinity)
_values = st.recursive(st.one_of(st.none(), st.booleans(), _numbers, _text),
                       lambda children: st.one_of(st.lists(children, max_size=3),
                                                  st.dictionaries(_text, children, max_size=3)),
                       max_leaves=8)

WEBHOOK_KEYS = ["eventType", "reason", "provider", "providerName", "sessionIdentifier", "workingDirectory",
                "transcriptPath", "followUpId", "expiresAtUtc", "createdAtUtc", "inputPromptPreview",
                "lastAssistantMessage", "softLockedSessionCount", "activeSessionCount", "endReason"]
API_KEYS = ["text", "seconds", "endpoint", "keys", "csrf", "accessToken", "returnUrl"]


def _encode(body: Any, draw: st.DrawFn) -> bytes:
    """JSON as a client would send it: escapes (``"\\ud800"``), raw UTF-8 (surrogates as raw bytes), or
    with a huge number literal spliced in."""
    if draw(st.booleans()):
        raw = json.dumps(body).encode()
    else:
        raw = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:
        raw = raw.replace(b"1", b"1" * 5000, 1) if draw(st.booleans()) else raw.replace(b"0", b"1e400", 1)
    return raw


@st.composite
def webhook_bodies(draw: st.DrawFn) -> bytes:
    body: dict[str, Any] = stop_follow_up() if draw(st.booleans()) else {
        "eventType": draw(st.sampled_from(["PreSuspend", "PostSessionEnd", "StopFollowUp", "x"])),
        "reason": draw(st.sampled_from(["Completed", "SoftLocked", "EmergencyHibernation", "SessionEnded"])),
        "provider": "Codex", "sessionIdentifier": "s"}
    for _ in range(draw(st.integers(1, 4))):
        body[draw(st.one_of(st.sampled_from(WEBHOOK_KEYS), _text))] = draw(_values)
    return _encode(body, draw)


@st.composite
def api_bodies(draw: st.DrawFn) -> bytes:
    body: Any = {"text": "carry on", "seconds": 60, "endpoint": f"https://push.example/{draw(_text)}",
                 "keys": {"p256dh": "BAAA", "auth": "AAAA"}}
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.one_of(st.sampled_from(API_KEYS), _text))
        if key == "keys" and draw(st.integers(0, 3)):
            body["keys"] = {"p256dh": draw(_values), "auth": draw(_values)}
        else:
            body[key] = draw(_values)
    if draw(st.integers(0, 9)) == 0:
        body = draw(_values)  # not an object at all
    return _encode(body, draw)


@st.composite
def form_bodies(draw: st.DrawFn, csrf: str) -> bytes:
    fields = {"csrf": csrf if draw(st.integers(0, 4)) else draw(_text), "text": "carry on", "seconds": "60"}
    for _ in range(draw(st.integers(1, 4))):
        fields[draw(st.one_of(st.sampled_from(API_KEYS), _text))] = draw(_text)
    pairs = [(quote(key.encode("utf-8", "surrogatepass")), quote(value.encode("utf-8", "surrogatepass")))
             for key, value in fields.items()]
    raw = "&".join(f"{key}={value}" for key, value in pairs).encode()
    return raw if draw(st.integers(0, 9)) else draw(st.binary(max_size=200))


def check(response: Any, what: str) -> None:
    status = response.status_code
    assert status < 500, f"{what}: {status} {response.text[:200]}"
    if status >= 400:
        reason = response.json()["error"] if response.headers.get("content-type", "").startswith(
            "application/json") else response.text
        assert reason.strip(), f"{what}: {status} without a reason"


@pytest.fixture
def app(notify_config: Any) -> Iterator[dict[str, Any]]:
    """The app in process (500s come back as responses), signed in, with one pending follow-up."""
    from starlette.testclient import TestClient

    from lidguard.notify.app import create_app

    with TestClient(create_app(notify_config, idle_poll_seconds=0.2), base_url=notify_config.public_base_url,
                    raise_server_exceptions=False) as client:
        body = stop_follow_up(seconds=3600)
        assert client.post(f"/api/webhooks/lidguard/{notify_config.webhook_secret}", json=body).status_code == 202
        login = client.get("/login").text
        login_csrf = re.search(r'name="csrf" value="([^"]+)"', login).group(1)  # type: ignore[union-attr]
        client.post("/login", data={"accessToken": notify_config.access_token, "csrf": login_csrf})
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text).group(1)  # type: ignore
        yield {"client": client, "config": notify_config, "follow_up": body["followUpId"], "csrf": csrf}


FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                               HealthCheck.too_slow])
JSON_HEADERS = {"content-type": "application/json"}
FORM_HEADERS = {"content-type": "application/x-www-form-urlencoded"}


@FUZZ
@given(raw=webhook_bodies())
def test_webhook_bodies(app: dict[str, Any], raw: bytes) -> None:
    check(app["client"].post(f"/api/webhooks/lidguard/{app['config'].webhook_secret}", content=raw,
                             headers=JSON_HEADERS), f"webhook {raw[:200]!r}")


@FUZZ
@given(raw=api_bodies(), target=st.sampled_from(["reply", "extend", "cancel", "subscribe", "unsubscribe"]),
       follow_up=st.sampled_from(["own", "other", "surrogate"]), auth=st.sampled_from(["bearer", "cookie"]))
def test_json_api_bodies(app: dict[str, Any], raw: bytes, target: str, follow_up: str, auth: str) -> None:
    client = app["client"]
    headers = {**JSON_HEADERS, **({"Authorization": f"Bearer {app['config'].access_token}"} if auth == "bearer"
                                  else {"X-CSRF-Token": app["csrf"]})}
    if target in ("subscribe", "unsubscribe"):
        method = "POST" if target == "subscribe" else "DELETE"
        response = client.request(method, "/api/push/subscriptions", content=raw, headers=headers)
    else:
        identifier = {"own": app["follow_up"], "other": str(uuid.uuid4()), "surrogate": "%ED%A0%80"}[follow_up]
        response = client.post(f"/api/follow-ups/{identifier}/{target}", content=raw, headers=headers)
    check(response, f"{target} {raw[:200]!r}")


@FUZZ
@given(data=st.data(), target=st.sampled_from(["reply", "extend", "cancel", "nope", "login", "logout"]))
def test_form_bodies(app: dict[str, Any], data: st.DataObject, target: str) -> None:
    client = app["client"]
    raw = data.draw(form_bodies(app["csrf"]))
    path = {"login": "/login", "logout": "/logout"}.get(target, f"/follow-ups/{app['follow_up']}/{target}")
    response = client.post(path, content=raw, headers=FORM_HEADERS, follow_redirects=False)
    check(response, f"{path} {raw[:200]!r}")
    if target in ("login", "logout") and response.status_code == 303:  # signed out (or in again): sign in again
        login_csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)  # type: ignore
        client.post("/login", data={"accessToken": app["config"].access_token, "csrf": login_csrf})
        app["csrf"] = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text).group(1)  # type: ignore
