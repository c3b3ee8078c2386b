"""Both MCP servers as real processes, spoken to byte by byte over stdio (no SDK client in between):
a message the SDK's reader cannot parse (a lone-surrogate escape, broken JSON, a non-JSON-RPC object)
gets a JSON-RPC error, and the server answers the next message; ``serverInfo.version`` is lidguard's."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install 'lidguard[mcp]'")

SERVERS = {"mcp-server": ["mcp-server"], "provider-mcp-server": ["provider-mcp-server", "--provider-name", "wire"]}
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "wire-test", "version": "1"}}}


class WireServer:
    """One server process; lines it writes to stdout arrive on a queue (a thread reads them)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next message on stdout, within ``timeout`` (a silent server fails the test, never hangs it)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer within {timeout} s (server alive: {self.process.poll() is None})") \
                from None
        assert line, f"the server closed stdout (exit {self.process.poll()})"
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, raw: bytes) -> dict[str, Any]:
        self.send(raw)
        return self.receive()


@contextmanager
def wire_server(lidguard: Any, name: str) -> Iterator[WireServer]:
    process = subprocess.Popen([sys.executable, "-m", "lidguard", *SERVERS[name]], env=lidguard.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    server = WireServer(process)
    try:
        answer = server.request(json.dumps(INITIALIZE).encode())
        assert answer["id"] == 0 and "result" in answer, answer
        server.initialize_result = answer["result"]  # type: ignore[attr-defined]
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield server
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_unparsable_messages_get_a_json_rpc_error_and_the_server_answers_the_next(lidguard: Any, name: str) -> None:
    with wire_server(lidguard, name) as server:
        assert server.request(ping(1)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        # A lone-surrogate escape anywhere in a request: an error for that request's id.
        for request_id, raw in (
                (2, b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":"\\ud800"}}}'),
                ("three", b'{"jsonrpc":"2.0","id":"three","method":"tools/call",'
                          b'"params":{"name":"list_sessions","arguments":{"x":"\\udfff"}}}'),
                (4, b'{"jsonrpc":"2.0","id":4,"method":"\\ud83d"}')):
            answer = server.request(raw)
            assert answer["id"] == request_id and "result" not in answer, answer
            assert answer["error"]["code"] == -32600 and "surrogate" in answer["error"]["message"], answer
            assert server.request(ping(10)) == {"jsonrpc": "2.0", "id": 10, "result": {}}
        # A notification never gets an answer (JSON-RPC), even a broken one; the next request does.
        server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"\\ud800"}}')
        assert server.request(ping(11)) == {"jsonrpc": "2.0", "id": 11, "result": {}}
        # Not JSON at all: a parse error with a null id. A JSON object that is no JSON-RPC message: invalid
        # request (with its id when it has a usable one).
        parse_error = server.request(b'{"jsonrpc":"2.0","id":5,"method":"ping"')
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700, parse_error
        invalid = server.request(b'{"jsonrpc":"1.0","id":6,"method":"ping"}')
        assert invalid["id"] == 6 and invalid["error"]["code"] == -32600, invalid
        assert server.request(b'[1, 2]')["error"]["code"] == -32600
        assert server.request(ping(12)) == {"jsonrpc": "2.0", "id": 12, "result": {}}
        # A paired surrogate escape is valid Unicode and works as before.
        assert server.request(b'{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{"x":"\\ud83d\\ude00"}}}') \
            == {"jsonrpc": "2.0", "id": 13, "result": {}}
        assert server.process.poll() is None


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_server_info_reports_the_lidguard_version(lidguard: Any, name: str) -> None:
    with wire_server(lidguard, name) as server:
        info = server.initialize_result["serverInfo"]  # type: ignore[attr-defined]
    assert info["name"] == ("lidguard" if name == "mcp-server" else "lidguard-provider")
    assert info["version"] == version("lidguard") and info["version"] != version("mcp")


def test_a_burst_of_broken_lines_is_answered_in_order(lidguard: Any) -> None:
    with wire_server(lidguard, "mcp-server") as server:
        started = time.monotonic()
        for request_id in range(100, 150):
            server.send(b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"_meta":{"x":"\\ud800"}}}' % request_id)
            server.send(ping(request_id + 1000))
        answers = [server.receive() for _ in range(100)]
        assert time.monotonic() - started < 60
    errors = [answer["id"] for answer in answers if "error" in answer]
    results = [answer["id"] for answer in answers if "result" in answer]
    assert errors == list(range(100, 150)) and sorted(results) == list(range(1100, 1150))


def test_a_broken_first_message_is_answered_and_initialize_still_works(lidguard: Any) -> None:
    process = subprocess.Popen([sys.executable, "-m", "lidguard", "mcp-server"], env=lidguard.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    server = WireServer(process)
    try:
        broken = json.dumps(INITIALIZE).replace("wire-test", "wire-\\ud800")  # the JSON escape of a lone surrogate
        assert '"name": "wire-\\ud800"' in broken
        answer = server.request(broken.encode())
        assert answer["id"] == 0 and answer["error"]["code"] == -32600, answer
        answer = server.request(json.dumps(INITIALIZE).encode())
        assert answer["id"] == 0 and answer["result"]["serverInfo"]["name"] == "lidguard", answer
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def deep_request(request_id: Any, depth: int, *, id_last: bool = False) -> bytes:
    """A tools/call whose arguments nest ``depth`` arrays deep (valid JSON, valid JSON-RPC framing)."""
    deep = "[" * depth + "]" * depth
    head = '{"jsonrpc":"2.0",' + ("" if id_last or request_id is None else f'"id":{json.dumps(request_id)},')
    tail = f',"id":{json.dumps(request_id)}' if id_last else ""
    return (head + '"method":"tools/call","params":{"name":"list_sessions","arguments":{"x":' + deep + "}}"
            + tail + "}").encode()


def test_a_deeply_nested_request_is_answered_with_its_id(lidguard: Any) -> None:
    """Issue 39 item 14: valid JSON nested past what the SDK's parser takes (about 200 levels) - and past
    Python's own recursion limit (1,000) - is answered with the request's id, read without recursion."""
    with wire_server(lidguard, "mcp-server") as server:
        for request_id, depth, id_last in ((21, 300, False), (22, 1_500, False), ("deep", 100_000, False),
                                           (23, 5_000, True)):
            answer = server.request(deep_request(request_id, depth, id_last=id_last))
            assert answer["id"] == request_id and "result" not in answer, (depth, answer)
            assert answer["error"]["code"] == -32600 and "nested" in answer["error"]["message"], answer
        # A deep notification gets no answer (JSON-RPC), the next request does.
        server.send(deep_request(None, 5_000))
        assert server.request(ping(24)) == {"jsonrpc": "2.0", "id": 24, "result": {}}
        assert server.process.poll() is None


def peak_memory_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def test_an_oversized_line_is_answered_and_memory_stays_bounded(lidguard: Any) -> None:
    """Issue 39 item 14: a 64 MiB stdin line is read in bounded chunks and dropped past the cap: a JSON-RPC
    error (with the id when it comes before the cut), the peak memory barely moves, the server answers on."""
    line_size = 64 << 20
    with wire_server(lidguard, "mcp-server") as server:
        assert server.request(ping(30)) == {"jsonrpc": "2.0", "id": 30, "result": {}}
        before = peak_memory_kib(server.process.pid)
        head = b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"list_sessions","arguments":{"x":"'
        answer = server.request(head + b"a" * line_size + b'"}}}')
        assert answer["id"] == 31 and "result" not in answer, answer
        assert answer["error"]["code"] == -32600 and "longer than" in answer["error"]["message"], answer
        grown_kib = peak_memory_kib(server.process.pid) - before
        assert grown_kib * 1024 < line_size // 8, f"peak memory grew by {grown_kib} KiB for a {line_size} B line"
        # The id only after the cut: an error with a null id. The next line is read from its start.
        answer = server.request(b'{"jsonrpc":"2.0","method":"ping","params":{"x":"' + b"b" * (4 << 20) + b'"},"id":32}')
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert server.request(ping(33)) == {"jsonrpc": "2.0", "id": 33, "result": {}}
        assert server.process.poll() is None
        assert os.readlink(f"/proc/{server.process.pid}/fd/0") == os.devnull  # stdin still claimed from handlers
