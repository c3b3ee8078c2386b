"""The notification pages in the browser's language (Accept-Language; issue 38.2): the reply page, the
dashboard and the sign-in page in ko, ja, zh-Hans and zh-Hant through the app's test client, the reply
without JavaScript, app.js's words handed over translated, and the push texts (each subscription's in the
language of the browser that subscribed, else the server's: test_notify_push.py)."""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest
from notify_harness import stop_follow_up

from lidguard import l10n

CULTURES = {"ko": "ko-KR,ko;q=0.9,en;q=0.5", "ja": "ja,en-US;q=0.7", "zh-Hans": "zh-CN,zh;q=0.9",
            "zh-Hant": "zh-TW,zh;q=0.9,en;q=0.3"}


def t(culture: str, message: str) -> str:
    text = l10n.translation(culture).gettext(message)
    assert text != message, (culture, message)
    return text


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _sign_in(client: Any, token: str, headers: dict[str, str]) -> None:
    page = client.get("/login", headers=headers)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    answer = client.post("/login", data={"csrf": csrf.group(1), "accessToken": token, "returnUrl": "/"},
                         headers=headers, follow_redirects=False)
    assert answer.status_code == 303, answer.text


@pytest.mark.parametrize("culture", CULTURES)
def test_the_reply_page_follows_accept_language(notify_client: Any, notify_config: Any, culture: str) -> None:
    headers = {"Accept-Language": CULTURES[culture]}
    login = notify_client.get("/login", headers=headers)
    assert f'<html lang="{culture}">' in login.text
    assert t(culture, "Access token") in _text(login.text) and "Access token" not in _text(login.text)
    _sign_in(notify_client, notify_config.access_token, headers)
    body = stop_follow_up()
    assert notify_client.post(notify_config.webhook_url(), json=body).status_code == 202
    page = notify_client.get(f"/follow-ups/{body['followUpId']}", headers=headers)
    assert page.status_code == 200
    text = _text(page.text)
    assert f'<html lang="{culture}">' in page.text
    assert t(culture, "{agent} finished - reply to continue").format(agent="Claude Code") in text
    for word in ("Last assistant message", "Reply to continue", "Send", "Extend 5 min", "Let it sleep",
                 "Your prompt", "Deadline:"):
        assert t(culture, word) in text, word
    for english in ("Last assistant message", "Let it sleep", "Extend 5 min", "Your prompt"):
        assert english not in text, english
    assert "The login form is done and the tests pass." in text  # the agent's own words stay as they are
    words = json.loads(unescape(re.search(r"data-words='([^']*)'", page.text).group(1)))
    assert words["{seconds} s left"] == t(culture, "{seconds} s left")
    # Without JavaScript: the plain form posts the reply; the page says so in the same language.
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    sent = notify_client.post(f"/follow-ups/{body['followUpId']}/reply", data={"csrf": csrf, "text": "go on"},
                              headers=headers, follow_redirects=True)
    assert sent.status_code == 200
    assert t(culture, "Sent - the agent continues.") in _text(sent.text)
    again = notify_client.post(f"/follow-ups/{body['followUpId']}/extend", data={"csrf": csrf, "seconds": "300"},
                               headers=headers)
    assert again.status_code == 409
    assert t(culture, "The follow-up is already {status}.").format(status="Replied") in _text(again.text)


@pytest.mark.parametrize("culture", CULTURES)
def test_the_dashboard_follows_accept_language(notify_client: Any, notify_config: Any, culture: str) -> None:
    headers = {"Accept-Language": CULTURES[culture]}
    _sign_in(notify_client, notify_config.access_token, headers)
    body = stop_follow_up()
    notify_client.post(notify_config.webhook_url(), json=body)
    text = _text(notify_client.get("/", headers=headers).text)
    for word in ("Waiting for you", "Reply", "Let it sleep", "Recent", "This browser", "Turn on notifications",
                 "An agent asked before sleep"):
        assert t(culture, word) in text, word
    assert "Waiting for you" not in text and "Turn on notifications" not in text
    events = _text(notify_client.get("/events", headers=headers).text)
    assert t(culture, "Latest events") in events and t(culture, "Last error") in events


def test_english_without_the_header_or_with_an_unknown_language(notify_client: Any, notify_config: Any) -> None:
    for headers in ({}, {"Accept-Language": "fr-FR,de;q=0.8"}):
        login = notify_client.get("/login", headers=headers)
        assert '<html lang="en">' in login.text and "Access token" in login.text
        assert "data-words='{}'" in login.text


def test_every_word_of_app_js_is_handed_over() -> None:
    from lidguard.notify.pages import SCRIPT_WORDS
    from lidguard.notify.static import APP_JS

    used = set(re.findall(r"\bt\('((?:[^'\\]|\\.)*)'", APP_JS))
    used |= set(re.findall(r"withTimeout\([^;]*?, \d+, '([^']+)'\)", APP_JS))
    assert used and used <= set(SCRIPT_WORDS), sorted(used - set(SCRIPT_WORDS))
    for culture in CULTURES:
        for word in SCRIPT_WORDS:
            assert l10n.translation(culture).gettext(word) != word or word.startswith("{"), (culture, word)


@pytest.mark.parametrize("culture", CULTURES)
def test_push_texts_in_the_servers_language(culture: str) -> None:
    from lidguard.notify.events import push_payload

    translate = l10n.translation(culture).gettext
    follow_up = push_payload(stop_follow_up(lastAssistantMessage=""), "https://n.example", translate)
    assert follow_up["title"] == t(culture, "{agent} finished - reply to continue").format(agent="Claude Code")
    assert follow_up["body"] == t(culture, "Reply to continue, or let it sleep.")
    completed = push_payload({"eventType": "PreSuspend", "reason": "Completed"}, "https://n.example", translate)
    assert completed["title"] == t(culture, "LidGuard session completed")
    assert completed["tag"] == "lidguard-presuspend-completed" and completed["url"] == "https://n.example/events"
    english = push_payload({"eventType": "PreSuspend", "reason": "Completed"}, "https://n.example")
    assert english["title"] == "LidGuard session completed"
