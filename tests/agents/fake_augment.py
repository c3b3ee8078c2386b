"""A scripted fake Augment tenant on 127.0.0.1 for the real ``auggie`` CLI (tests/agents).

auggie talks to no model API of its own: every model turn goes to the user's Augment tenant (its
``tenantURL``), which a test gives it through ``AUGMENT_SESSION_AUTH``. The facts this fake answers from
(../shared/spec/AGENT_CLIS_NEW.md section 6, observed with auggie 0.36.0):

* ``POST /get-models``: the default model, one model entry and the server's feature flags; hooks load
  only when the flags carry ``enable_hooks: true`` (``hooks`` here; a test may turn it off);
* ``POST /chat-stream``: newline-delimited JSON objects. A request whose ``nodes`` hold no tool result
  (request node type 1) gets one ``launch-process`` tool call (response node type 5) and
  ``stop_reason`` 3 (tool use); the request carrying the tool's result gets the final text (response
  node type 0) and ``stop_reason`` 1 (end of turn);
* every other path (``record-session-events``, ``client-metrics``, ``find-missing``, ...): ``{}``.

Every request is recorded (path, headers, JSON body), as in ``fake_model.FakeModel``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_model import RecordedRequest

MODEL = "fake-augment-model"
SHELL_TOOL = "launch-process"
_TOOL_RESULT_NODE = 1  # request node: a tool's result going back to the model
_TEXT_NODE, _TOOL_USE_NODE = 0, 5  # response nodes: text, a tool call
_END_TURN, _TOOL_USE = 1, 3  # stop_reason values


@dataclass
class FakeAugment:
    command: str = "echo hello"
    final_text: str = "All done: hello"
    hooks: bool = True  # the server feature flag that makes auggie load its hooks at all
    requests: list[RecordedRequest] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def start(self) -> FakeAugment:
        tenant = self

        class Handler(_Handler):
            fake = tenant

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-augment", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAugment:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def session_auth(self) -> str:
        """The value of ``AUGMENT_SESSION_AUTH`` that points auggie at this tenant."""
        return json.dumps({"accessToken": "fake-local-token", "tenantURL": f"{self.base_url}/", "scopes": ["email"]})

    # -- what the tests read -------------------------------------------------------------------
    def model_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.split("?")[0].rstrip("/").endswith("/chat-stream")]

    def tool_requests(self) -> list[RecordedRequest]:
        """Every chat request (auggie offers its tools in each)."""
        return self.model_requests()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    # -- the answers ---------------------------------------------------------------------------
    def models(self) -> dict[str, Any]:
        return {"default_model": MODEL,
                "models": [{"name": MODEL, "internal_name": MODEL, "suggested_prefix_char_count": 4000,
                            "suggested_suffix_char_count": 4000}],
                "feature_flags": {"enable_hooks": self.hooks}, "user_tier": "PROFESSIONAL_TIER"}

    def chat(self, body: Any) -> list[dict[str, Any]]:
        nodes = body.get("nodes") if isinstance(body, dict) else None
        answered = isinstance(nodes, list) and any(
            isinstance(node, dict) and node.get("type") == _TOOL_RESULT_NODE for node in nodes)
        if answered:
            return [{"text": self.final_text, "nodes": [{"id": 0, "type": _TEXT_NODE, "content": self.final_text}]},
                    {"text": "", "stop_reason": _END_TURN}]
        arguments = {"command": self.command, "wait": True, "max_wait_seconds": 30, "cwd": "."}
        call = {"tool_use_id": f"toolu_fake_{next(self._ids)}", "tool_name": SHELL_TOOL,
                "input_json": json.dumps(arguments)}
        return [{"text": "", "nodes": [{"id": 0, "type": _TOOL_USE_NODE, "tool_use": call}]},
                {"text": "", "stop_reason": _TOOL_USE}]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAugment
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.fake.record(RecordedRequest("GET", self.path, dict(self.headers), None))
        self._send("application/json", b"{}")

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.fake.record(RecordedRequest("POST", self.path, dict(self.headers), body))
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/get-models"):
            self._send("application/json", json.dumps(self.fake.models()).encode())
        elif path.endswith("/chat-stream"):
            lines = "".join(json.dumps(line) + "\n" for line in self.fake.chat(body))
            self._send("application/x-ndjson", lines.encode())
        else:
            self._send("application/json", b"{}")
