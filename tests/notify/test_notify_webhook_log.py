"""``lidguard-notify serve`` logs one line per webhook it receives (issue 33.15): the event type and what
became of it; never the secret of the webhook URL or a text of the body. A real server process."""

from __future__ import annotations

from typing import Any

import httpx
from notify_harness import stop_follow_up, wait_for

PROMPT = "refactor-the-SECRET-parser"
REPLY = "all-done-PRIVATE-reply"


def test_each_webhook_is_one_line_with_its_type_and_outcome(notify_server: Any, notify_config: Any) -> None:
    url = f"{notify_server.base}/api/webhooks/lidguard/{notify_config.webhook_secret}"
    sent = [
        httpx.post(url, json={"eventType": "PreSuspend", "reason": "Completed", "inputPromptPreview": PROMPT,
                              "lastAssistantMessage": REPLY}, timeout=30),
        httpx.post(url, json=stop_follow_up(provider="Claude", sessionIdentifier="s1", lastAssistantMessage=REPLY),
                   timeout=30),
        httpx.post(url, json={"eventType": "Bogus", "lastAssistantMessage": REPLY}, timeout=30),
        httpx.post(f"{notify_server.base}/api/webhooks/lidguard/not-the-secret-{PROMPT}",
                   json={"eventType": "PreSuspend", "reason": "Completed"}, timeout=30),
    ]
    assert [response.status_code for response in sent] == [202, 202, 400, 404]

    def lines() -> list[str]:
        return [line for line in notify_server.log.read_text().splitlines() if " webhook " in line]

    logged = wait_for(lambda: (found := lines()) and len(found) >= 4 and found, what="four webhook lines")
    assert len(logged) == 4, logged
    assert all(line.startswith("lidguard-notify: ") for line in logged)
    assert "webhook PreSuspend (Completed) accepted as event " in logged[0], logged
    assert "webhook StopFollowUp (SessionEnded) accepted as event " in logged[1] and "follow-up open until" in logged[1]
    assert "webhook refused (400): eventType is required" in logged[2]
    assert "webhook refused (404)" in logged[3]
    text = notify_server.log.read_text()
    for secret in (notify_config.webhook_secret, notify_config.access_token, PROMPT, REPLY):
        assert secret not in text, secret
