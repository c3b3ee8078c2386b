"""A scripted fake model server on 127.0.0.1 for the real agent CLIs (tests/agents).

It speaks the four streaming APIs the CLIs use (AGENT_CLIS.md, AGENT_CLIS_MORE.md): Anthropic Messages
(``POST /v1/messages``, Claude Code), OpenAI Responses (``POST /v1/responses``, Codex), OpenAI Chat
Completions (``POST /v1/chat/completions``, OpenCode, Copilot BYOK, Qwen Code and Factory Droid) and the Gemini API
(``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``, Gemini CLI), each as server-sent events;
Gemini's side requests (``:generateContent`` asking for JSON, ``:countTokens``) get plain JSON.

The script is one shell tool call, then a final text. It is decided from the conversation itself, so
retries and extra requests do not shift it: a request that offers tools and whose conversation does
not yet hold a tool result gets the tool call; every other request (the tool's result came back, a
Stop hook's continuation, a title request without tools) gets the final text. Every request is
recorded (path, headers, JSON body) for assertions such as "one more model request carried the
continuation text".
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Shell tools by name, per CLI, and how each takes the command line.
_SHELL_TOOLS = ("Bash", "bash", "exec_command", "shell", "run_shell_command", "Execute", "terminal")
_GEMINI_METHODS = (":streamGenerateContent", ":generateContent")


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def text(self) -> str:
        """The whole body as text, for "does this request carry X" checks."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class Script:
    command: str = "echo hello"
    final_text: str = "All done: hello"
    # Codex: ask for escalated permissions, so an on-request approval policy asks the user.
    escalate: bool = False
    description: str = "Print hello"
    # More arguments of Claude's Bash tool (``timeout`` in ms, ``run_in_background``).
    extra_arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeModel:
    script: Script = field(default_factory=Script)
    requests: list[RecordedRequest] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeModel:
        model = self

        class Handler(_Handler):
            fake = model

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- what the tests read -------------------------------------------------------------------
    def model_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0].endswith(
                ("/messages", "/responses", "/chat/completions", *_GEMINI_METHODS))]

    def tool_requests(self) -> list[RecordedRequest]:
        """Model requests that offered tools (the agent loop, not titles or summaries)."""
        return [r for r in self.model_requests() if isinstance(r.body, dict) and r.body.get("tools")]

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return bool(predicate())

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    # -- the script ----------------------------------------------------------------------------
    def wants_tool_call(self, body: dict[str, Any], has_tool_result: bool) -> str | None:
        """The shell tool's name when this request should get the tool call, else None."""
        if has_tool_result:
            return None
        names = _tool_names(body.get("tools"))
        for candidate in _SHELL_TOOLS:
            if candidate in names:
                return candidate
        return None

    def tool_arguments(self, tool: str) -> dict[str, Any]:
        script = self.script
        if tool == "exec_command":
            arguments: dict[str, Any] = {"cmd": script.command}
            if script.escalate:
                arguments.update(sandbox_permissions="require_escalated", justification=script.description)
            return {**arguments, **script.extra_arguments}  # e.g. ``yield_time_ms``
        if tool == "shell":
            return {"command": ["bash", "-lc", script.command]}
        if tool == "Execute":  # Factory Droid: all four required; a "low" risk runs in its read-only default
            return {"command": script.command, "summary": script.description,
                    "riskLevelReason": "prints a word", "riskLevel": "low", **script.extra_arguments}
        if tool == "terminal":  # OpenHands: {command, is_input, timeout, reset} (AGENT_CLIS_NEW.md 7)
            return {"command": script.command, "is_input": False, "security_risk": "LOW", "summary": script.description,
                    **script.extra_arguments}
        return {"command": script.command, "description": script.description, **script.extra_arguments}


def _tool_names(tools: Any) -> list[str]:
    """Every offered tool's name (Gemini nests them in ``functionDeclarations``)."""
    names = []
    for tool in tools if isinstance(tools, list) else []:
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        names += [_tool_name(item) for item in declarations] if isinstance(declarations, list) else [_tool_name(tool)]
    return names


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return ""
    if isinstance(tool.get("function"), dict):  # Chat Completions
        return str(tool["function"].get("name", ""))
    return str(tool.get("name", ""))


def _has_anthropic_tool_result(body: dict[str, Any]) -> bool:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
                isinstance(part, dict) and part.get("type") == "tool_result" for part in content):
            return True
    return False


def _has_responses_tool_result(body: dict[str, Any]) -> bool:
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(item, dict) and str(item.get("type", "")).endswith("call_output") for item in items)


def _has_gemini_tool_result(body: dict[str, Any]) -> bool:
    return any(isinstance(part, dict) and "functionResponse" in part
               for content in body.get("contents") or [] if isinstance(content, dict)
               for part in content.get("parts") or [])


def _schema_example(schema: Any) -> Any:
    """A value that fits a (Gemini/OpenAPI) JSON schema: the side requests that ask for JSON."""
    kind = str(schema.get("type", "")).lower() if isinstance(schema, dict) else ""
    if kind == "object":
        return {name: _schema_example(item) for name, item in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_schema_example(schema.get("items"))]
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return "simple"


def _has_chat_tool_result(body: dict[str, Any]) -> bool:
    return any(isinstance(message, dict) and message.get("role") == "tool" for message in body.get("messages") or [])


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    # -- plumbing ------------------------------------------------------------------------------
    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, name: str | None, payload: Any) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        chunk = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    # -- routes --------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.fake.record(RecordedRequest("GET", self.path, dict(self.headers), None))
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 1700000000, "owned_by": "fake"}
                for name in ("fake-model", "gpt-4.1", "claude-sonnet-4-5")]})
            return
        self._send_json(404, {"error": {"message": f"not found: {self.path}", "type": "not_found"}})

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        body = self._read_body()
        self.fake.record(RecordedRequest("POST", self.path, dict(self.headers), body))
        path = self.path.split("?")[0].rstrip("/")
        if not isinstance(body, dict):
            self._send_json(400, {"error": {"message": "expected a JSON object", "type": "invalid_request_error"}})
        elif path.endswith("/messages/count_tokens"):
            self._send_json(200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif path.endswith(":countTokens"):
            self._send_json(200, {"totalTokens": 100})
        elif path.endswith(_GEMINI_METHODS):
            self._gemini(body, stream=path.endswith(":streamGenerateContent"))
        else:
            self._send_json(404, {"error": {"message": f"not found: {self.path}", "type": "not_found"}})

    # -- Anthropic Messages --------------------------------------------------------------------
    def _anthropic(self, body: dict[str, Any]) -> None:
        fake = self.fake
        tool = fake.wants_tool_call(body, _has_anthropic_tool_result(body))
        number = fake.next_id()
        model = str(body.get("model") or "claude-sonnet-4-5")
        usage = {"input_tokens": 50, "output_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if tool is not None:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_fake{number:04d}", "name": tool,
                                     "input": fake.tool_arguments(tool)}
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": fake.script.final_text}
            stop_reason = "end_turn"
        message = {"id": f"msg_fake{number:04d}", "type": "message", "role": "assistant", "model": model,
                   "content": [block], "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._send_json(200, message)
            return
        self._start_stream()
        self._event("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}})
        if block["type"] == "tool_use":
            self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {**block, "input": {}}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        else:
            self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": block["text"]}})
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                      "usage": {"output_tokens": usage["output_tokens"]}})
        self._event("message_stop", {"type": "message_stop"})

    # -- OpenAI Responses ----------------------------------------------------------------------
    def _responses(self, body: dict[str, Any]) -> None:
        fake = self.fake
        tool = fake.wants_tool_call(body, _has_responses_tool_result(body))
        number = fake.next_id()
        response_id = f"resp_fake{number:04d}"
        if tool is not None:
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_fake{number:04d}",
                                    "call_id": f"call_fake{number:04d}", "name": tool,
                                    "arguments": json.dumps(fake.tool_arguments(tool)), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_fake{number:04d}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": fake.script.final_text, "annotations": []}]}
        usage = {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 60}
        response: dict[str, Any] = {"id": response_id, "object": "response", "created_at": int(time.time()),
                                    "status": "in_progress", "model": str(body.get("model") or "fake-model"),
                                    "output": [], "usage": None}
        if not body.get("stream"):
            self._send_json(200, {**response, "status": "completed", "output": [item], "usage": usage})
            return
        self._start_stream()
        sequence = itertools.count()

        def event(name: str, **payload: Any) -> None:
            self._event(name, {"type": name, "sequence_number": next(sequence), **payload})

        event("response.created", response=response)
        event("response.in_progress", response=response)
        if item["type"] == "function_call":
            event("response.output_item.added", output_index=0, item={**item, "arguments": "", "status": "in_progress"})
            event("response.function_call_arguments.delta", item_id=item["id"], output_index=0,
                  delta=item["arguments"])
            event("response.function_call_arguments.done", item_id=item["id"], output_index=0,
                  arguments=item["arguments"])
        else:
            text = fake.script.final_text
            event("response.output_item.added", output_index=0,
                  item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            event("response.content_part.added", item_id=item["id"], output_index=0, content_index=0, part=part)
            event("response.output_text.delta", item_id=item["id"], output_index=0, content_index=0, delta=text)
            event("response.output_text.done", item_id=item["id"], output_index=0, content_index=0, text=text)
            event("response.content_part.done", item_id=item["id"], output_index=0, content_index=0,
                  part={**part, "text": text})
        event("response.output_item.done", output_index=0, item=item)
        event("response.completed", response={**response, "status": "completed", "output": [item], "usage": usage})

    # -- OpenAI Chat Completions ---------------------------------------------------------------
    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.fake
        tool = fake.wants_tool_call(body, _has_chat_tool_result(body))
        number = fake.next_id()
        base = {"id": f"chatcmpl-fake{number:04d}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": str(body.get("model") or "fake-model")}
        usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        call: dict[str, Any] | None = None
        arguments = ""
        if tool is not None:
            arguments = json.dumps(fake.tool_arguments(tool))
            call = {"id": f"call_fake{number:04d}", "type": "function",
                    "function": {"name": tool, "arguments": arguments}}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": None if call else fake.script.final_text}
            if call:
                message["tool_calls"] = [call]
            self._send_json(200, {**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}]})
            return
        self._start_stream()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            self._event(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        if call is not None:
            chunk({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": call["id"], "type": "function", "function": {"name": tool, "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})
            chunk({}, "tool_calls")
        else:
            chunk({"role": "assistant", "content": ""})
            chunk({"content": fake.script.final_text})
            chunk({}, "stop")
        self._event(None, {**base, "choices": [], "usage": usage})
        self._event(None, "[DONE]")

    # -- Gemini API --------------------------------------------------------------------------------
    def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
        fake = self.fake
        config = body.get("generationConfig") if isinstance(body.get("generationConfig"), dict) else {}
        usage = {"promptTokenCount": 50, "candidatesTokenCount": 10, "totalTokenCount": 60}
        if config.get("responseMimeType") == "application/json":  # a side request (the model router)
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            part: dict[str, Any] = {"text": json.dumps(_schema_example(schema))}
        else:
            tool = fake.wants_tool_call(body, _has_gemini_tool_result(body))
            if tool is not None:
                part = {"functionCall": {"name": tool, "args": fake.tool_arguments(tool)}}
            else:
                part = {"text": fake.script.final_text}
        fake.next_id()
        reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": "fake-model"}
        if not stream:
            self._send_json(200, reply)
            return
        self._start_stream()
        self._event(None, reply)
