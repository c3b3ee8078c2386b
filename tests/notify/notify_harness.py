"""Helpers of the notification server tests: a config, the real server as a process, and a local
"push service" that records what it receives and decrypts it with the subscription's private key."""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

CHROMIUM = next((path for path in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "",
                                   shutil.which("chromium-browser") or "") if path and Path(path).exists()), None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def wait_for(condition: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    """Bounded polling (never a fixed sleep): returns as soon as ``condition`` holds, so the bound costs
    nothing when it does. 60 s: a loaded CI run took over 10 s to encrypt, sign and send three pushes."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class PushReceiver:
    """Plays the browser's push service on 127.0.0.1: answers ``status`` (per path), optionally holds
    requests until ``release`` is set, and decrypts bodies with the subscriber's key pair."""

    port: int = 0
    status: dict[str, int] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    hold: threading.Event | None = None
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.public_bytes = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.auth_secret = os.urandom(16)

    def subscription(self, name: str = "phone") -> dict[str, Any]:
        return {"endpoint": f"http://127.0.0.1:{self.port}/push/{name}",
                "keys": {"p256dh": b64url(self.public_bytes), "auth": b64url(self.auth_secret)}}

    def decrypt(self, item: Received) -> dict[str, Any]:
        import http_ece

        plain = http_ece.decrypt(item.body, private_key=self.private_key, auth_secret=self.auth_secret,
                                 version="aes128gcm")
        return json.loads(plain)  # type: ignore[no-any-return]

    @contextlib.contextmanager
    def running(self) -> Iterator[PushReceiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if receiver.hold is not None:
                    receiver.hold.set()
                    receiver.release.wait(30)
                self.send_response(receiver.status.get(self.path, 201))
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()


def verify_vapid(authorization: str, vapid_public_key: str, audience: str) -> dict[str, Any]:
    """Checks ``vapid t=<ES256 JWT>,k=<key>`` against the server's public key; returns the claims."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    scheme, _, rest = authorization.partition(" ")
    assert scheme == "vapid"
    parts = dict(item.strip().split("=", 1) for item in rest.split(","))
    assert parts["k"] == vapid_public_key
    header, claims, signature = parts["t"].split(".")
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(vapid_public_key))
    raw = b64url_decode(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises when forged
    decoded: dict[str, Any] = json.loads(b64url_decode(claims))
    assert decoded["aud"] == audience
    assert time.time() < decoded["exp"] <= time.time() + 24 * 3600
    return decoded


class ServerProcess:
    """``python -m lidguard.notify serve`` as a real process (uvicorn), waited for through /healthz."""

    def __init__(self, config_path: Path, port: int, *, env: dict[str, str] | None = None,
                 preexec_fn: Callable[[], None] | None = None) -> None:
        self.config_path = config_path
        self.port = port
        self.extra_env = env or {}
        self.preexec_fn = preexec_fn
        self.base = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        env = {**os.environ, **self.extra_env}
        env.pop("PYTEST_CURRENT_TEST", None)
        self.log = self.config_path.parent / f"server-{time.monotonic_ns()}.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "lidguard.notify", "serve", "--config", str(self.config_path),
                 "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT, env=env,
                preexec_fn=self.preexec_fn)

        def healthy() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log.read_text()}")
            try:
                return httpx.get(f"{self.base}/healthz", timeout=1).text == "ok"
            except httpx.HTTPError:
                return False

        wait_for(healthy, what="the notification server to answer /healthz")
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def utc_iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def stop_follow_up(seconds: float = 120, **extra: Any) -> dict[str, Any]:
    """A StopFollowUp body as the runtime sends it (ASK_BEFORE_SLEEP.md)."""
    now = datetime.now(timezone.utc)
    return {"eventType": "StopFollowUp", "reason": "SessionEnded", "followUpId": str(uuid.uuid4()),
            "provider": "Claude", "providerName": None, "sessionIdentifier": "session-1",
            "workingDirectory": "/home/me/src/app", "inputPromptPreview": "add the login form",
            "lastAssistantMessage": "The login form is done and the tests pass.", "createdAtUtc": utc_iso(now),
            "expiresAtUtc": utc_iso(now + timedelta(seconds=seconds)), **extra}


def chromium() -> Iterator[Any]:
    """Debian's headless Chromium through Playwright (never `playwright install`), for a module fixture."""
    assert CHROMIUM, "chromium is not installed (CI=true: the browser tests must run)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield launched
        finally:
            launched.close()


def skip_without_a_browser() -> None:
    """Module-level skip of a browser test module when chromium or Playwright is missing (never under CI)."""
    missing = [] if CHROMIUM else ["chromium (apt-get install chromium)"]
    if importlib.util.find_spec("playwright") is None:
        missing.append("playwright (pip install playwright)")
    if missing and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip(f"the browser tests need {' and '.join(missing)}; run bash ci/install-notify-test-deps.sh",
                    allow_module_level=True)


def sign_in(page: Any, server: ServerProcess, path: str, token: str) -> None:
    """Opens ``path`` signed out (the login page, with the way back) and signs in with ``token``."""
    page.goto(f"{server.base}{path}")
    assert "/login" in page.url
    page.fill("#access-token", token)
    with page.expect_navigation():
        page.click("#login-button")
