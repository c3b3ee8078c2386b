"""Issue 38.1: the pages look like a product and stay usable - in real headless Chromium at a phone's
390x844 and a laptop's 1280x800, in the light and the dark theme:
- no horizontal scroll; every visible control (links, buttons, text boxes) inside the width, and on the
  phone at least 44x44 CSS px;
- every visible text at WCAG AA contrast (4.5:1; 3:1 for large text), computed from the computed styles
  (the text colour over the first opaque background behind it);
- the dashboard puts waiting follow-ups first as cards with a live countdown that moves, recent events as
  cards with relative times, the subscription as one line with one button;
- hostile text in every field renders as text; the theme toggle is remembered; the reply works without
  JavaScript and says "Sent - the agent continues".
Screenshots go to LIDGUARD_NOTIFY_SCREENSHOT_DIR (else the test's tmp folder): artifacts, never committed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from notify_harness import ServerProcess, chromium, sign_in, skip_without_a_browser, stop_follow_up, wait_for

skip_without_a_browser()

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
LAPTOP = {"viewport": {"width": 1280, "height": 800}}
VIEWS = {"phone": PHONE, "laptop": LAPTOP}
THEMES = ("light", "dark")
HOSTILE = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>&amp;"\'</pre>'
LONG_MESSAGE = ("All tests pass. I changed src/app/login_form.py and tests/test_login_form.py.\n"
                "Should I also run the integration tests? " + "More details follow here. " * 40)

CONTRAST = """() => {
    const parse = (text) => {
        const m = text.match(/rgba?\\(([^)]+)\\)/);
        if (!m) { return null; }
        const parts = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
        return {r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1};
    };
    const mix = (top, bottom, key) => top[key] * top.a + bottom[key] * (1 - top.a);
    const over = (top, bottom) => ({r: mix(top, bottom, 'r'), g: mix(top, bottom, 'g'),
                                   b: mix(top, bottom, 'b'), a: 1});
    const background = (node) => {
        const layers = [];
        for (let at = node; at; at = at.parentElement) {
            const colour = parse(getComputedStyle(at).backgroundColor);
            if (colour && colour.a > 0) { layers.push(colour); if (colour.a >= 0.999) { break; } }
        }
        let result = {r: 255, g: 255, b: 255, a: 1};
        if (layers.length && layers[layers.length - 1].a >= 0.999) { result = layers.pop(); }
        while (layers.length) { result = over(layers.pop(), result); }
        return result;
    };
    const channel = (value) => {
        const c = value / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
    const failures = [];
    let checked = 0;
    for (const node of document.body.querySelectorAll('*')) {
        const own = [...node.childNodes].some(child => child.nodeType === 3 && child.textContent.trim());
        if (!own) { continue; }
        const style = getComputedStyle(node);
        const box = node.getBoundingClientRect();
        const hidden = style.visibility !== 'visible' || style.display === 'none';
        if (hidden || box.width === 0 || box.height === 0) { continue; }
        const back = background(node);
        const fore = over(parse(style.color), back);
        const [light, dark] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
        const ratio = (light + 0.05) / (dark + 0.05);
        const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
        const needed = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
        checked += 1;
        if (ratio < needed) {
            failures.push({text: node.textContent.trim().slice(0, 40), tag: node.tagName, ratio: ratio.toFixed(2),
                           needed, color: style.color, background: `rgb(${back.r},${back.g},${back.b})`});
        }
    }
    return {checked, failures};
}"""

CONTROLS = """() => {
    const width = document.documentElement.clientWidth;
    const out = [];
    for (const node of document.querySelectorAll('a[href], button, textarea, input:not([type=hidden])')) {
        const style = getComputedStyle(node);
        const box = node.getBoundingClientRect();
        if (style.display === 'none' || style.visibility !== 'visible' || box.width === 0) { continue; }
        out.push({id: node.id || node.className || node.tagName, text: (node.textContent || '').trim().slice(0, 30),
                  left: box.left, right: box.right, width: box.width, height: box.height,
                  inline: node.closest('p,pre') !== null});
    }
    const root = document.documentElement;
    return {width, pageWidth: root.scrollWidth, bodyWidth: document.body.scrollWidth, controls: out};
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium()


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("LIDGUARD_NOTIFY_SCREENSHOT_DIR") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def post_webhook(server: ServerProcess, config: Any, body: dict[str, Any]) -> None:
    answer = httpx.post(f"{server.base}/api/webhooks/lidguard/{config.webhook_secret}", json=body)
    assert answer.status_code in (200, 202), answer.text


def fill_the_dashboard(server: ServerProcess, config: Any) -> list[dict[str, Any]]:
    follow_ups = [stop_follow_up(seconds=240, lastAssistantMessage=LONG_MESSAGE,
                                 workingDirectory="/home/me/src/" + "a-long-project-folder-name" * 3),
                  stop_follow_up(seconds=120, provider="Codex", sessionIdentifier=HOSTILE, workingDirectory=HOSTILE,
                                 lastAssistantMessage=HOSTILE, inputPromptPreview=HOSTILE)]
    for body in follow_ups:
        post_webhook(server, config, body)
    post_webhook(server, config, {"eventType": "PreSuspend", "reason": "Completed", "activeSessionCount": 0})
    post_webhook(server, config, {"eventType": "PostSessionEnd", "reason": "SessionEnded", "provider": "Claude",
                                  "sessionIdentifier": HOSTILE})
    return follow_ups


def check_page(page: Any, view: str, name: str) -> None:
    geometry = page.evaluate(CONTROLS)
    assert geometry["pageWidth"] <= geometry["width"] and geometry["bodyWidth"] <= geometry["width"], \
        (name, "scrolls sideways", geometry["pageWidth"], geometry["width"])
    for control in geometry["controls"]:
        assert control["left"] >= 0 and control["right"] <= geometry["width"] + 0.5, (name, control)
        if view == "phone" and not control["inline"]:
            assert control["width"] >= 44 and control["height"] >= 44, (name, "too small to tap", control)
    contrast = page.evaluate(CONTRAST)
    assert contrast["checked"] >= 4, (name, contrast)  # the login page has the fewest texts (5)
    assert contrast["failures"] == [], (name, contrast["failures"])
    assert page.evaluate("window.__xss") is None, (name, "a hostile field ran")
    assert page.query_selector("img[src=x]") is None, (name, "a hostile field became markup")


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("view", list(VIEWS))
def test_pages_fit_read_and_escape_in_both_themes(browser: Any, notify_server: ServerProcess, notify_config: Any,
                                                  tmp_path: Path, view: str, theme: str) -> None:
    follow_ups = fill_the_dashboard(notify_server, notify_config)
    context = browser.new_context(**VIEWS[view], color_scheme=theme)
    context.set_default_timeout(10_000)
    dialogs: list[str] = []
    try:
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{notify_server.base}/login")
        page.wait_for_selector("#theme-toggle")
        page.screenshot(path=str(shots(tmp_path) / f"login-{view}-{theme}.png"), full_page=True)
        check_page(page, view, "login")
        sign_in(page, notify_server, "/", notify_config.access_token)
        page.wait_for_selector(".follow-up-card")
        assert page.evaluate("document.documentElement.dataset.theme || ''") == ""  # the system's choice
        cards = page.query_selector_all(".follow-up-card")
        assert len(cards) == 2
        # Waiting follow-ups come first, then the recent events, then the subscription line.
        order = page.evaluate("[...document.querySelectorAll('main section h2')].map(h => h.id)")
        assert order[:3] == ["waiting-heading", "recent-heading", "push-heading"], order
        first = page.query_selector(f"#card-{follow_ups[0]['followUpId']} .countdown")
        assert first is not None
        before = wait_for(lambda: (first.text_content() or "") if "left" in (first.text_content() or "") else None,
                          what="the card countdown")
        wait_for(lambda: first.text_content() != before, timeout=5, what="the card countdown to move")
        assert "min" in (first.text_content() or "")
        assert page.text_content(f"#card-{follow_ups[1]['followUpId']} .message") == HOSTILE  # text, not markup
        more = page.query_selector(f"button.more[data-target='message-{follow_ups[0]['followUpId']}']")
        assert more is not None and more.is_visible(), "a long message gets 'more'"
        relative = page.query_selector("time.relative")
        assert relative is not None
        wait_for(lambda: "ago" in (relative.text_content() or "") or relative.text_content() == "just now",
                 what="relative event times")
        assert page.is_visible("#subscribe-button") and page.is_hidden("#unsubscribe-button")
        page.screenshot(path=str(shots(tmp_path) / f"dashboard-{view}-{theme}.png"), full_page=True)
        check_page(page, view, "dashboard")
        for body in follow_ups:
            page.goto(f"{notify_server.base}/follow-ups/{body['followUpId']}")
            page.wait_for_selector("#reply-text")
            countdown = page.text_content("#countdown")
            wait_for(lambda shown=countdown: page.text_content("#countdown") != shown, timeout=5,
                     what="the reply page countdown to move")
            page.screenshot(path=str(shots(tmp_path) / f"reply-{view}-{theme}-{body['provider']}.png"),
                            full_page=True)
            check_page(page, view, f"reply page ({body['provider']})")
        assert page.text_content("#last-message") == HOSTILE
        page.fill("#reply-text", "yes, run them")
        with page.expect_navigation():
            page.click("#reply-button")
        page.wait_for_selector("#sent-state")
        assert page.text_content("#sent-state") == "Sent - the agent continues."
        page.screenshot(path=str(shots(tmp_path) / f"reply-sent-{view}-{theme}.png"), full_page=True)
        check_page(page, view, "reply page (sent)")
        assert dialogs == []
    finally:
        context.close()


def test_theme_toggle_is_remembered_over_the_system_choice(browser: Any, notify_server: ServerProcess,
                                                           notify_config: Any) -> None:
    context = browser.new_context(color_scheme="light")
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        sign_in(page, notify_server, "/", notify_config.access_token)
        page.wait_for_selector("#theme-toggle")
        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert page.text_content("#theme-toggle") == "Dark"
        page.click("#theme-toggle")
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert dark != light and page.evaluate("document.documentElement.dataset.theme") == "dark"
        page.reload()
        page.wait_for_selector("#theme-toggle")
        # theme.js runs in the head: the stored choice is there before app.js, with no flash of light.
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark
        assert page.text_content("#theme-toggle") == "Light"
    finally:
        context.close()


def test_dashboard_answers_and_the_reply_work_without_javascript(browser: Any, notify_server: ServerProcess,
                                                                  notify_config: Any) -> None:
    extended, canceled, replied = (stop_follow_up(seconds=60) for _ in range(3))
    for body in (extended, canceled, replied):
        post_webhook(notify_server, notify_config, body)
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(10_000)
    api = f"{notify_server.base}/api/follow-ups"
    bearer = {"Authorization": f"Bearer {notify_config.access_token}"}
    try:
        page = context.new_page()
        sign_in(page, notify_server, "/", notify_config.access_token)
        page.wait_for_selector(f"#card-{extended['followUpId']}")
        assert page.is_hidden("#theme-toggle")  # a control that needs the script is not offered without it
        with page.expect_navigation():
            page.click(f"#card-{extended['followUpId']} .extend-card")
        assert page.url.rstrip("/") == notify_server.base  # back on the dashboard
        state = httpx.get(f"{api}/{extended['followUpId']}", headers=bearer).json()
        assert state["status"] == "Pending" and state["expiresAtUtc"] > extended["expiresAtUtc"]
        with page.expect_navigation():
            page.click(f"#card-{canceled['followUpId']} .sleep-card")
        assert httpx.get(f"{api}/{canceled['followUpId']}", headers=bearer).json()["status"] == "Canceled"
        assert page.query_selector(f"#card-{canceled['followUpId']}") is None
        with page.expect_navigation():
            page.click(f"#card-{replied['followUpId']} .reply-link")
        page.fill("#reply-text", "carry on")
        with page.expect_navigation():
            page.click("#reply-button")
        assert page.text_content("#sent-state") == "Sent - the agent continues."
        assert httpx.get(f"{api}/{replied['followUpId']}", headers=bearer).json()["status"] == "Replied"
    finally:
        context.close()
