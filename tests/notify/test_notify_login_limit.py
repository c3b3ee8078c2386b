"""Failed sign-ins are throttled per address (issue 39 item 15): after ``FREE_FAILURES`` wrong access
tokens an address waits, doubling per further failure up to ``MAX_DELAY_SECONDS``, and meanwhile gets
429 with Retry-After without its token being checked (the form and the Bearer API alike). The table
of addresses is bounded. The clock is a fake one: no test waits."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from lidguard.notify.app import create_app
from lidguard.notify.auth import FREE_FAILURES, MAX_DELAY_SECONDS, LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(notify_config: Any, clock: Clock) -> Iterator[Any]:
    app = create_app(notify_config, idle_poll_seconds=0.2, login_throttle=LoginThrottle(clock=clock))
    with TestClient(app, base_url=notify_config.public_base_url) as test_client:
        yield test_client


def sign_in(client: Any, token: str) -> Any:
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    return client.post("/login", data={"accessToken": token, "csrf": csrf, "returnUrl": "/"}, follow_redirects=False)


def test_failed_sign_ins_back_off_with_429_and_retry_after(client: Any, notify_config: Any, clock: Clock) -> None:
    for _ in range(FREE_FAILURES):
        assert sign_in(client, "wrong-token-wrong-token").status_code == 401
    throttled = sign_in(client, notify_config.access_token)  # even the right token waits: nothing is checked
    assert throttled.status_code == 429
    assert throttled.headers["Retry-After"] == "1"
    assert "Too many failed sign-ins" in throttled.text
    clock.now += 1
    assert sign_in(client, "wrong-token-wrong-token").status_code == 401  # the 6th failure: 2 s
    assert sign_in(client, notify_config.access_token).headers["Retry-After"] == "2"
    clock.now += 2
    assert sign_in(client, "wrong-token-wrong-token").status_code == 401  # 7th: 4 s
    clock.now += 3
    assert sign_in(client, notify_config.access_token).headers["Retry-After"] == "1"
    clock.now += 1
    assert sign_in(client, notify_config.access_token).status_code == 303  # a success forgets the address
    assert sign_in(client, "wrong-token-wrong-token").status_code == 401


def test_a_wrong_bearer_token_counts_and_is_throttled_too(client: Any, notify_config: Any, clock: Clock) -> None:
    wrong = {"Authorization": "Bearer wrong-token-wrong-token"}
    right = {"Authorization": f"Bearer {notify_config.access_token}"}
    for _ in range(FREE_FAILURES):
        assert client.get("/api/follow-ups/x", headers=wrong).status_code == 401
    throttled = client.get("/api/follow-ups/x", headers=right)
    assert throttled.status_code == 429 and throttled.headers["Retry-After"] == "1"
    assert sign_in(client, notify_config.access_token).status_code == 429  # one table for both
    clock.now += 1
    assert client.get("/api/follow-ups/00000000-0000-0000-0000-000000000000", headers=right).status_code == 404


def test_the_delay_is_capped_and_the_table_bounded() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock=clock, max_addresses=3)
    for _ in range(FREE_FAILURES + 40):
        throttle.failed("10.0.0.1")
        clock.now += MAX_DELAY_SECONDS
    throttle.failed("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") == MAX_DELAY_SECONDS
    for address in ("10.0.0.2", "10.0.0.3", "10.0.0.4"):
        throttle.failed(address)
    assert len(throttle) == 3 and throttle.retry_after("10.0.0.1") == 0  # the oldest went first
    # IPv6 addresses count per /64: one host cannot walk its own prefix to escape the delay.
    for index in range(FREE_FAILURES):
        throttle.failed(f"2001:db8::{index + 1:x}")
    assert throttle.retry_after("2001:db8::ffff") == 1
    # A quiet address is forgotten after FORGET_SECONDS without a failure.
    clock.now += 24 * 3600
    assert throttle.retry_after("2001:db8::ffff") == 0 and len(throttle) == 0
