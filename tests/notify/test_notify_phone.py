"""Issue 18: the reply page is made for a phone. Real headless Chromium (Debian's, through Playwright) as a
390x844 phone (mobile viewport, touch, 3x pixels) on the real server: the question, the last assistant
message and the reply box fit the width without horizontal scrolling (also with long unbroken paths and
code lines), and every button is thumb-sized (at least 44x44 CSS px) - asserted from the page's layout.
A screenshot goes to ``LIDGUARD_NOTIFY_SCREENSHOT_DIR`` when set (to look at it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from notify_harness import ServerProcess, chromium, sign_in, skip_without_a_browser, stop_follow_up

skip_without_a_browser()

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True,
         "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/126.0 Mobile Safari/537.36"}
THUMB_PX = 44
LONG_PATH = "/home/me/src/" + "/".join(["a-rather-long-folder-name-without-spaces"] * 4) + "/src/login_form.py"
LAST_MESSAGE = ("The login form is done and the tests pass. I changed these files:\n"
                f"- {LONG_PATH}\n"
                "- tests/test_login_form.py\n\n"
                "    def validate(self, field_name_that_is_long: str, another_argument: int) -> ValidationResult:\n\n"
                "Should I also run the integration tests against https://staging.example.org/api/v2/"
                "really/long/endpoint?with=query&parameters=that&never=break ? " + "Details. " * 60)
PROMPT = "add the login form, " * 30


@pytest.fixture(scope="module")
def phone_browser() -> Iterator[Any]:
    yield from chromium()


@pytest.fixture
def phone(phone_browser: Any) -> Iterator[Any]:
    context = phone_browser.new_context(**PHONE)
    context.set_default_timeout(10_000)
    try:
        yield context.new_page()
    finally:
        context.close()


GEOMETRY = """selectors => {
    const width = document.documentElement.clientWidth;
    const boxes = {};
    for (const selector of selectors) {
        const node = document.querySelector(selector);
        if (!node) { boxes[selector] = null; continue; }
        const r = node.getBoundingClientRect();
        boxes[selector] = {left: r.left, right: r.right, width: r.width, height: r.height,
                           scrollWidth: node.scrollWidth, clientWidth: node.clientWidth,
                           fontSize: parseFloat(getComputedStyle(node).fontSize)};
    }
    return {viewport: width, innerWidth: window.innerWidth, pageWidth: document.documentElement.scrollWidth,
            bodyWidth: document.body.scrollWidth, boxes: boxes};
}"""
CONTENT = ["h1", "#last-message", "#prompt-preview", "#reply-text", "#working-directory"]
BUTTONS = ["#reply-button", "#extend-button", "#sleep-button", "#logout-button"]


def layout(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(GEOMETRY, CONTENT + BUTTONS)
    return result


def assert_fits_a_phone(page: Any, buttons: list[str]) -> dict[str, Any]:
    geometry = layout(page)
    width = geometry["viewport"]
    assert width == 390 and geometry["innerWidth"] == 390, geometry  # the page set a mobile viewport
    assert geometry["pageWidth"] <= width and geometry["bodyWidth"] <= width, geometry  # no horizontal scrolling
    for selector in CONTENT:
        box = geometry["boxes"][selector]
        if box is None:
            continue
        assert box["left"] >= 0 and box["right"] <= width, (selector, box)
        assert box["scrollWidth"] <= box["clientWidth"] + 1, (selector, "scrolls sideways", box)
    for selector in buttons:
        box = geometry["boxes"][selector]
        assert box is not None, selector
        assert box["width"] >= THUMB_PX and box["height"] >= THUMB_PX, (selector, box)
        assert box["left"] >= 0 and box["right"] <= width, (selector, box)
    reply = geometry["boxes"]["#reply-text"]
    if reply is not None:
        assert reply["fontSize"] >= 16, reply  # smaller makes mobile browsers zoom in on focus
    return geometry


def screenshot(page: Any, name: str) -> None:
    folder = os.environ.get("LIDGUARD_NOTIFY_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def test_reply_page_fits_a_phone(phone: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    body = stop_follow_up(lastAssistantMessage=LAST_MESSAGE, inputPromptPreview=PROMPT, workingDirectory=LONG_PATH,
                          sessionIdentifier="0f9c2d7e-5b1a-4c3e-9d8f-2a6b7c8d9e0f-with-a-long-suffix")
    answer = httpx.post(f"{notify_server.base}/api/webhooks/lidguard/{notify_config.webhook_secret}", json=body)
    assert answer.status_code == 202
    sign_in(phone, notify_server, f"/follow-ups/{body['followUpId']}", notify_config.access_token)
    phone.wait_for_url(f"**/follow-ups/{body['followUpId']}")
    phone.wait_for_selector("#reply-text")
    assert phone.text_content("h1") == "Claude Code finished - reply to continue"
    assert (phone.text_content("#last-message") or "").startswith("The login form is done")
    screenshot(phone, "reply-page-pending")  # before the asserts: a failing layout can be looked at
    assert_fits_a_phone(phone, ["#reply-button", "#extend-button", "#sleep-button", "#logout-button"])
    # The reply box is on the first screen's reach: no more than one more screen of scrolling.
    top = phone.evaluate("document.querySelector('#reply-text').getBoundingClientRect().top")
    assert top < 2 * 844, top
    phone.fill("#reply-text", "yes, run them")
    with phone.expect_navigation():
        phone.tap("#reply-button")
    phone.wait_for_selector("#reply")
    screenshot(phone, "reply-page-replied")
    assert_fits_a_phone(phone, ["#logout-button"])


def test_login_and_dashboard_fit_a_phone(phone: Any, notify_server: ServerProcess, notify_config: Any) -> None:
    phone.goto(f"{notify_server.base}/login")
    screenshot(phone, "login")
    geometry = layout(phone)
    assert geometry["pageWidth"] <= 390, geometry
    login = phone.evaluate("(() => { const r = document.querySelector('#login-button').getBoundingClientRect();"
                           " return [r.width, r.height]; })()")
    assert min(login) >= THUMB_PX, login
    sign_in(phone, notify_server, "/", notify_config.access_token)
    phone.wait_for_selector("#subscribe-button")
    screenshot(phone, "dashboard")
    geometry = layout(phone)
    assert geometry["pageWidth"] <= 390, geometry  # the long webhook URL wraps
    # One subscription button shows at a time (this browser is not subscribed: "Turn on").
    assert phone.is_hidden("#unsubscribe-button")
    phone.wait_for_selector("#theme-toggle")
    for selector in ("#subscribe-button", "#theme-toggle", "#logout-button"):
        size = phone.evaluate(f"(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect();"
                              " return [r.width, r.height]; })()")
        assert min(size) >= THUMB_PX, (selector, size)
