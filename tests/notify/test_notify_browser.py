"""The pages in a real headless Chromium (Debian's chromium driven by Playwright, never `playwright
install`): sign in, reply, Extend (capped), Sleep now, wrong token, and the service worker showing a push.
Skips only when chromium or Playwright is missing and CI is not set."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from notify_harness import ServerProcess, chromium, sign_in, skip_without_a_browser, stop_follow_up, wait_for

from lidguard.notify.store import parse_iso

skip_without_a_browser()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    context.set_default_timeout(10_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def new_follow_up(server: ServerProcess, config: Any, seconds: float = 120) -> tuple[dict[str, Any], str]:
    body = stop_follow_up(seconds=seconds)
    answer = httpx.post(f"{server.base}/api/webhooks/lidguard/{config.webhook_secret}", json=body)
    assert answer.status_code == 202
    return body, answer.json()["pollUrl"]


def test_sign_in_and_reply_turns_the_poll_replied(page: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    body, poll = new_follow_up(notify_server, notify_config)
    sign_in(page, notify_server, f"/follow-ups/{body['followUpId']}", notify_config.access_token)
    page.wait_for_url(f"**/follow-ups/{body['followUpId']}")
    assert page.text_content("#prompt-preview") == "add the login form"
    assert page.text_content("#last-message") == "The login form is done and the tests pass."
    assert page.text_content("#status") == "Pending"
    wait_for(lambda: "s left" in (page.text_content("#countdown") or ""), what="the live countdown")
    page.fill("#reply-text", "now run the integration tests")
    with page.expect_navigation():
        page.click("#reply-button")
    page.wait_for_selector("#reply")
    assert page.text_content("#status") == "Replied"
    state = httpx.get(poll).json()
    assert (state["status"], state["reply"]) == ("Replied", "now run the integration tests")
    assert parse_iso(state["expiresAtUtc"]) == parse_iso(body["expiresAtUtc"])
    assert page.query_selector("#reply-button") is None  # final: no second reply


def test_wrong_token_shows_the_login_page_again(page: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    body, poll = new_follow_up(notify_server, notify_config)
    sign_in(page, notify_server, f"/follow-ups/{body['followUpId']}", "wrong-" + notify_config.access_token)
    page.wait_for_selector("#login-error")
    assert "/login" in page.url and page.query_selector("#access-token") is not None
    assert page.query_selector("#reply-text") is None
    assert not [cookie for cookie in page.context.cookies() if cookie["name"] == "LidGuard.Notifications"]
    assert httpx.get(poll).json()["status"] == "Pending"


def test_extend_moves_the_deadline_but_never_past_five_minutes(page: Any, notify_server: ServerProcess,
                                                               notify_config: Any) -> None:
    body, poll = new_follow_up(notify_server, notify_config, seconds=60)
    initial = parse_iso(httpx.get(poll).json()["expiresAtUtc"])
    sign_in(page, notify_server, f"/follow-ups/{body['followUpId']}", notify_config.access_token)
    page.wait_for_url(f"**/follow-ups/{body['followUpId']}")
    # "Extend 5 min": one tap reaches the cap (initial deadline + 5 min); more taps never pass it.
    with page.expect_navigation():
        page.click("#extend-button")
    assert parse_iso(httpx.get(poll).json()["expiresAtUtc"]) == initial + timedelta(seconds=300)
    for _ in range(2):
        with page.expect_navigation():
            page.click("#extend-button")
    assert parse_iso(httpx.get(poll).json()["expiresAtUtc"]) == initial + timedelta(seconds=300)
    assert deadline_of(page.get_attribute("#deadline", "datetime")) == initial + timedelta(seconds=300)
    assert httpx.get(poll).json()["status"] == "Pending"


def deadline_of(value: str | None) -> Any:
    assert value
    return parse_iso(value)


def test_sleep_now_cancels(page: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    body, poll = new_follow_up(notify_server, notify_config)
    sign_in(page, notify_server, f"/follow-ups/{body['followUpId']}", notify_config.access_token)
    page.wait_for_url(f"**/follow-ups/{body['followUpId']}")
    with page.expect_navigation():
        page.click("#sleep-button")
    wait_for(lambda: page.text_content("#status") == "Canceled", what="the page to show Canceled")
    assert httpx.get(poll).json()["status"] == "Canceled"


def test_service_worker_shows_the_pushed_notification(browser: Any, notify_server: ServerProcess,
                                                      notify_config: Any) -> None:
    context = browser.new_context()
    try:
        context.set_default_timeout(10_000)
        context.grant_permissions(["notifications"], origin=notify_server.base)
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        registrations: list[str] = []
        cdp.on("ServiceWorker.workerRegistrationUpdated",
               lambda event: registrations.extend(item["registrationId"] for item in event["registrations"]
                                                  if item["scopeURL"].startswith(notify_server.base)))
        cdp.send("ServiceWorker.enable")
        sign_in(page, notify_server, "/", notify_config.access_token)
        page.wait_for_selector("#subscribe-button")
        wait_for(lambda: page.evaluate("navigator.serviceWorker.ready.then(r => r.active.state === 'activated')"),
                 what="the service worker to be activated")
        wait_for(lambda: registrations, what="the service worker registration")
        payload = {"title": "Claude Code finished - reply to continue", "body": "All tests pass.",
                   "url": f"{notify_server.base}/follow-ups/abc", "tag": "lidguard-stopfollowup-abc"}
        script = """async () => {
            const r = await navigator.serviceWorker.ready;
            return (await r.getNotifications()).map(n => ({title: n.title, body: n.body, tag: n.tag, url: n.data.url}));
        }"""
        shown = None
        # Chromium now and then drops a CDP push sent right after the worker activated: deliver again
        # (the same tag replaces the notification, so a repeat cannot show two).
        for _ in range(10):
            cdp.send("ServiceWorker.deliverPushMessage", {"origin": notify_server.base,
                                                          "registrationId": registrations[-1],
                                                          "data": json.dumps(payload)})
            try:
                shown = wait_for(lambda: page.evaluate(script), timeout=1.5, what="the notification")
                break
            except AssertionError:
                continue
        assert shown == [{"title": payload["title"], "body": payload["body"], "tag": payload["tag"],
                          "url": payload["url"]}]
    finally:
        context.close()


def test_dashboard_subscribe_reports_an_unreachable_push_service_and_events_show_local_time(
        browser: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    body, _ = new_follow_up(notify_server, notify_config)
    context = browser.new_context(timezone_id="Asia/Tokyo")
    try:
        context.set_default_timeout(10_000)
        context.grant_permissions(["notifications"], origin=notify_server.base)
        page = context.new_page()
        sign_in(page, notify_server, "/", notify_config.access_token)
        page.wait_for_selector("#subscribe-button")
        assert notify_config.webhook_url() in (page.text_content("#webhook-url") or "")
        page.click("#subscribe-button")
        # Offline there is no push service: the page says so instead of spinning for ever.
        wait_for(lambda: (page.text_content("#push-status") or "").startswith("Subscribing failed: "), timeout=30,
                 what="the subscribe failure message")
        page.goto(f"{notify_server.base}/events")
        cell = page.wait_for_selector("#events time")
        stamp = cell.get_attribute("datetime") or ""
        wait_for(lambda: cell.text_content() != stamp, what="the local time")
        expected = page.evaluate(f"new Date({json.dumps(stamp)}).toLocaleString()")
        assert cell.text_content() == expected and "Z" not in expected
        assert page.query_selector(f"a[href='/follow-ups/{body['followUpId']}']") is not None
    finally:
        context.close()
