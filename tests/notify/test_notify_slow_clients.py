"""Slow and half-sent requests cannot lock lidguard-notify up (issue 39 item 6).

A request has ``HEADER_TIMEOUT_SECONDS`` for its headers and ``BODY_TIMEOUT_SECONDS`` for its body
(shortened here through the test-mode switches), and the server keeps at most ``connection_cap``
connections, below its descriptor limit: at the cap the connection that has waited longest for its
headers makes room. The crowd test lowers the server's RLIMIT_NOFILE to 128 and opens 200 half-sent
requests; before the fix the server ran out of descriptors and never accepted another connection."""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from notify_harness import ServerProcess

resource = pytest.importorskip("resource")

try:
    from lidguard.notify.server import connection_cap
except ImportError:  # before the fix: the crowd test still shows the lock-out
    def connection_cap(limit: int | None) -> int:  # type: ignore[misc]
        raise AssertionError("no connection cap")

CROWD_LIMIT = 128


def half_sent(port: int, data: bytes = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n") -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(data)
    return client


def closed_within(client: socket.socket, seconds: float) -> bytes:
    """What the server sent before closing ``client``; fails when it is still open after ``seconds``."""
    client.settimeout(seconds)
    received = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = client.recv(4096)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"the server kept the connection open for {seconds} s (sent {received!r})")


def lower_descriptor_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (CROWD_LIMIT, hard))


@pytest.fixture
def crowd() -> Iterator[list[socket.socket]]:
    sockets: list[socket.socket] = []
    try:
        yield sockets
    finally:
        for item in sockets:
            item.close()


def sign_in_and_open_the_dashboard(base: str, token: str) -> tuple[int, str, bool]:
    with httpx.Client(base_url=base, timeout=5, follow_redirects=True) as client:
        page = client.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        dashboard = client.post("/login", data={"accessToken": token, "csrf": csrf, "returnUrl": "/"})
        return dashboard.status_code, dashboard.url.path, 'name="csrf-token"' in dashboard.text


def test_a_slowloris_crowd_beyond_the_descriptor_limit_leaves_the_dashboard_answering(
        tmp_path: Path, notify_config: Any, notify_port: int, crowd: list[socket.socket]) -> None:
    server = ServerProcess(tmp_path / "notify.json", notify_port, preexec_fn=lower_descriptor_limit).start()
    try:
        for _ in range(200):  # more than the 128 descriptors the server may have
            crowd.append(half_sent(notify_port))
        started = time.monotonic()
        assert sign_in_and_open_the_dashboard(server.base, notify_config.access_token) == (200, "/", True)
        answered = time.monotonic() - started
        assert answered < 5, answered  # the 10 s header timeout never had to run out
        assert server.process is not None and server.process.poll() is None
        if os.path.isdir(f"/proc/{server.process.pid}/fd"):
            assert len(os.listdir(f"/proc/{server.process.pid}/fd")) < CROWD_LIMIT
        assert "out of system resource" not in server.log.read_text()
    finally:
        server.stop()


def test_half_sent_headers_and_bodies_are_dropped_after_their_timeouts(tmp_path: Path, notify_config: Any,
                                                                       notify_port: int) -> None:
    env = {"LIDGUARD_NOTIFY_HEADER_TIMEOUT_SECONDS": "0.3", "LIDGUARD_NOTIFY_BODY_TIMEOUT_SECONDS": "0.3"}
    server = ServerProcess(tmp_path / "notify.json", notify_port, env=env).start()
    try:
        headers = half_sent(notify_port)
        silent = socket.create_connection(("127.0.0.1", notify_port), timeout=10)
        body = half_sent(notify_port, f"POST /api/webhooks/lidguard/{notify_config.webhook_secret} HTTP/1.1\r\n"
                                      "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                      "Content-Length: 100\r\n\r\n{\"event".encode())
        assert closed_within(headers, 10).startswith(b"HTTP/1.1 408 ")
        assert closed_within(silent, 10) == b""
        closed_within(body, 10)
        assert httpx.get(f"{server.base}/healthz", timeout=5).text == "ok"
        assert "Traceback" not in server.log.read_text()
    finally:
        server.stop()


def test_the_connection_cap_stays_below_the_descriptor_limit() -> None:
    assert connection_cap(128) < 128 - 32
    assert connection_cap(1024) < 1024 - 128
    assert connection_cap(None) == connection_cap(1024)
    assert connection_cap(20) >= 8
