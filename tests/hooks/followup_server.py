"""A local fake notification server for ask-before-sleep tests (ASK_BEFORE_SLEEP.md): the StopFollowUp
webhook answers 202 with a same-origin poll URL; the poll answers Pending until the test replies."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _utc(seconds: float) -> str:
    moment = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class FollowUpServer:
    """POST /hook: records the body; StopFollowUp -> 202 {pollUrl, expiresAtUtc}. GET /poll/<id>: the
    status (``reply(text)`` / ``cancel()`` answer it)."""

    def __init__(self, *, window: float = 60.0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.polls = 0
        self.status: dict[str, Any] = {"status": "Pending"}
        self.window = window
        self.started = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, code: int, body: Any = None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.posts.append({"at": time.monotonic(), "path": self.path, "body": body})
                if body.get("eventType") != "StopFollowUp":
                    self._answer(204)
                    return
                follow_up = body.get("followUpId") or str(uuid.uuid4())
                self._answer(202, {"pollUrl": f"{server.base}/poll/{follow_up}",
                                   "expiresAtUtc": _utc(server.window)})
                server.started.set()

            def do_GET(self) -> None:  # noqa: N802
                if not self.path.startswith("/poll/"):
                    self._answer(404, {"error": "not found"})
                    return
                server.polls += 1
                self._answer(200, {"expiresAtUtc": _utc(server.window), **server.status})

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.base}/hook"

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [post["body"] for post in self.posts if post["body"].get("eventType") == kind]

    def reply(self, text: str) -> None:
        self.status = {"status": "Replied", "reply": text}

    def cancel(self) -> None:
        self.status = {"status": "Canceled"}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
