"""The native hook client (issue 36): the same bytes and the same runtime effect as the Python hook, for
every agent and event; every fallback ends in the Python hook's answer within its budget; the hook's rules
(exit 0, bounded stdin, SIGPIPE) hold for the client too."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lidguard.hooks.payload import MAX_STDIN_BYTES, STDIN_IDLE_SECONDS, STDIN_TOTAL_SECONDS
from lidguard.hooks.runner import HOOK_BUDGET_SECONDS
from lidguard.ipc import hook_frame
from lidguard.platform.hook_client import client_path, hook_client_status
from lidguard.platform.paths import MAX_SOCKET_PATH_BYTES

from .conftest import ENTRY, assert_valid_output
from .test_hook_fuzz import build_arguments, build_payload

SOURCE = Path(__file__).resolve().parents[2] / "native" / "hook_client.c"
CLIENT = client_path()
PYTHON_HOOK = [sys.executable, *ENTRY]
# A fallback that must not happen: the client runs this instead of the Python hook.
NO_FALLBACK = [sys.executable, "-c", "import sys; sys.stdout.write('FELL BACK')"]
CLOSED = {"lid": "closed", "displays": [{"name": "eDP-1", "internal": True}]}
OPEN = {"lid": "open"}


@pytest.fixture(scope="module", autouse=True)
def _built_client():
    status = hook_client_status()
    assert status.usable, f"{status.reason} (build it: python3 setup.py build_ext --inplace)"


def client_run(env: dict[str, str], argv: list[str], stdin: bytes, *, fallback: list[str] | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([CLIENT, *(PYTHON_HOOK if fallback is None else fallback), *argv], env=env,
                          input=stdin, capture_output=True, timeout=timeout)


def python_run(env: dict[str, str], argv: list[str], stdin: bytes,
               timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*PYTHON_HOOK, *argv], env=env, input=stdin, capture_output=True, timeout=timeout)


# -- the mirrors ----------------------------------------------------------------------------------
def _define(name: str) -> str:
    found = re.search(rf"^#define {name} (.+?)\s*(/\*.*)?$", SOURCE.read_text(), re.MULTILINE)
    assert found, name
    return found.group(1)


def test_the_client_mirrors_the_python_lists_and_bounds():
    names = re.search(r"HOOK_ENVIRONMENT\[\] = \{(.*?)\};", SOURCE.read_text(), re.DOTALL)
    assert names and tuple(re.findall(r'"([A-Z_]+)"', names.group(1))) == hook_frame.HOOK_ENVIRONMENT
    assert eval(_define("MAX_STDIN_BYTES")) == MAX_STDIN_BYTES  # noqa: S307 - our own constant expression
    assert int(_define("STDIN_IDLE_MS")) == int(STDIN_IDLE_SECONDS * 1000)
    assert int(_define("STDIN_TOTAL_MS")) == int(STDIN_TOTAL_SECONDS * 1000)
    assert int(_define("MAX_SOCKET_PATH_BYTES")) == MAX_SOCKET_PATH_BYTES
    assert int(_define("MAX_ARGUMENTS")) == hook_frame.MAX_ARGUMENTS
    assert eval(_define("MAX_FIELD_BYTES")) == hook_frame.MAX_FIELD_BYTES  # noqa: S307
    assert int(_define("REPLY_MS")) / 1000 < HOOK_BUDGET_SECONDS / 2


def test_the_frame_round_trips_and_refuses_defects():
    data = hook_frame.encode_request(["claude-hook", "--event", "x\udcff"], "/w", {"HOME": "/h", "PWD": "/p"},
                                     b"\x00{}")
    size = hook_frame.frame_length(data[:8])
    frame = hook_frame.decode_request(data[8:8 + size])
    assert (frame.argv, frame.cwd, frame.environ, frame.stdin) == (["claude-hook", "--event", "x\udcff"], "/w",
                                                                  {"HOME": "/h", "PWD": "/p"}, b"\x00{}")
    for broken in (data[8:-1], data[8:] + b"x", data[8:12]):
        with pytest.raises(hook_frame.FrameError):
            hook_frame.decode_request(broken)
    unread = hook_frame.encode_request(["a"], "", {"HOME": "/h"}, b"")[8:].replace(b"HOME=/h", b"PATH=/h")
    with pytest.raises(hook_frame.FrameError):  # only the values the hook reads travel
        hook_frame.decode_request(unread)


# -- the table: the client against the Python hook ---------------------------------------------------
def _claude_like(key: str, session: str) -> list[tuple[list[str], dict[str, Any], dict[str, Any]]]:
    base = {"session_id": session, "cwd": "/w/app", "transcript_path": ""}
    return [
        ([f"{key}-hook"], {**base, "hook_event_name": "UserPromptSubmit", "prompt": "run echo hello"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t1"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "Notification", "notification_type": "idle_prompt"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "PermissionRequest", "tool_name": "Bash"}, CLOSED),
        ([f"{key}-hook"], {**base, "hook_event_name": "PermissionRequest", "tool_name": "Bash"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "Elicitation"}, CLOSED),
        ([f"{key}-hook"], {**base, "hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion"}, CLOSED),
        ([f"{key}-hook"], {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                           "last_assistant_message": "All done: hello"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "SessionEnd", "reason": "exit"}, OPEN),
        ([f"{key}-hook"], {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash"}, OPEN),  # after the end
    ]


def _table() -> list[tuple[list[str], bytes, dict[str, Any]]]:
    steps: list[tuple[list[str], Any, dict[str, Any]]] = []
    steps += _claude_like("claude", "c1") + _claude_like("qwen", "q1")
    codex = {"session_id": "x1", "cwd": "/w/app", "turn_id": "u1"}
    steps += [(["codex-hook"], {**codex, "hook_event_name": name, **extra}, machine) for name, extra, machine in [
        ("UserPromptSubmit", {"prompt": "go"}, OPEN), ("PreToolUse", {"tool_name": "shell"}, OPEN),
        ("PermissionRequest", {"tool_name": "shell"}, CLOSED), ("PostToolUse", {"tool_name": "shell"}, OPEN),
        ("Stop", {"last_assistant_message": "ok"}, OPEN)]]
    copilot = {"sessionId": "p1", "cwd": "/w/app", "timestamp": 1}
    steps += [(["copilot-hook", "--event", name], {**copilot, **extra}, machine) for name, extra, machine in [
        ("userPromptSubmitted", {"prompt": "go"}, OPEN), ("preToolUse", {"toolName": "bash"}, OPEN),
        ("permissionRequest", {"toolName": "bash"}, CLOSED), ("preToolUse", {"toolName": "ask_user"}, CLOSED),
        ("postToolUse", {"toolName": "bash"}, OPEN), ("agentStop", {}, OPEN), ("sessionEnd", {}, OPEN)]]
    opencode = {"sessionID": "o1", "directory": "/w/app"}
    steps += [(["opencode-hook"], {**opencode, "event": name, **extra}, machine) for name, extra, machine in [
        ("chat.message", {"prompt": "go"}, OPEN), ("tool.execute.before", {"tool": "bash", "callID": "k"}, OPEN),
        ("permission.asked", {"tool": "bash"}, CLOSED), ("tool.execute.after", {"tool": "bash", "callID": "k"}, OPEN),
        ("session.idle", {}, OPEN)]]
    gemini = {"session_id": "g1", "cwd": "/w/app"}
    steps += [(["gemini-hook"], {**gemini, "hook_event_name": name, **extra}, machine) for name, extra, machine in [
        ("BeforeAgent", {"prompt": "go"}, OPEN), ("BeforeTool", {"tool_name": "run_shell_command"}, CLOSED),
        ("AfterTool", {"tool_name": "run_shell_command"}, OPEN), ("AfterAgent", {"prompt_response": "ok"}, OPEN),
        ("SessionEnd", {}, OPEN)]]
    cursor = {"conversation_id": "r1", "cwd": "/w/app"}
    steps += [(["cursor-hook"], {**cursor, "hook_event_name": name, **extra}, OPEN) for name, extra in [
        ("beforeSubmitPrompt", {"prompt": "go"}), ("stop", {"status": "completed"})]]
    # Garbage and edge inputs go the same way too.
    steps += [(["claude-hook"], b"not json", OPEN), (["claude-hook"], b"", OPEN), (["codex-hook"], b"[1,2]", OPEN),
              (["claude-hook", "--event", "x"], b'{"hook_event_name": "PreToolUse"', OPEN)]
    return [(argv, payload if isinstance(payload, bytes) else json.dumps(payload).encode(), machine)
            for argv, payload, machine in steps]


class _Home:
    """A second isolated HOME with its own runtime (short path: a Unix socket path is bounded), made like the
    ``lidguard`` fixture's."""

    def __init__(self, like: Any) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lg-"))
        (self.root / "run").mkdir(mode=0o700)
        self.processes = type(like)(self.root)

    def close(self) -> None:
        self.processes.kill_runtimes()
        shutil.rmtree(self.root, ignore_errors=True)


def _sessions(processes: Any) -> list[dict[str, Any]]:
    volatile = {"startedAt", "lastActivityAt", "updatedAt", "lastChangedAt", "softLockedAt", "startedAtUtc",
                "lastActivityAtUtc", "softLockedAtUtc", "watchedProcessIdentifier"}
    sessions = processes.json("status")["sessions"]
    return sorted(({key: value for key, value in session.items() if key not in volatile and "At" not in key}
                   for session in sessions), key=lambda session: session["sessionIdentifier"])


def _log_lines(processes: Any) -> list[str]:
    lines = []
    for path in sorted(processes.data_dir.glob("*-hook-events.log")):
        lines += [f"{path.name} {line.split(' ', 1)[1]}" for line in path.read_text().splitlines()]
    return lines


def _start(processes: Any) -> None:
    warm = json.dumps({"session_id": "warm", "cwd": "/w", "hook_event_name": "UserPromptSubmit", "prompt": "w"})
    assert python_run(processes.env, ["claude-hook"], warm.encode()).returncode == 0
    assert processes.wait_until(lambda: any(s["sessionIdentifier"] == "warm"
                                            for s in processes.json("status")["sessions"]), timeout=60)


@pytest.mark.timeout(600)
def test_the_client_and_the_python_hook_give_the_same_bytes_and_effects(lidguard):
    other = _Home(lidguard)
    try:
        python_side, client_side = lidguard, other.processes
        _start(python_side)
        _start(client_side)
        answered = 0
        for index, (argv, stdin, machine) in enumerate(_table()):
            python_side.set_machine(**machine)
            client_side.set_machine(**machine)
            expected = python_run(python_side.env, argv, stdin)
            got = client_run(client_side.env, argv, stdin, fallback=NO_FALLBACK)
            assert (got.returncode, got.stdout) == (expected.returncode, expected.stdout), (index, argv, stdin)
            assert got.stderr == b"" and expected.stderr == b"", (index, got.stderr, expected.stderr)
            answered += bool(expected.stdout)
            assert_valid_output(argv[0].removesuffix("-hook"), expected.stdout.decode()) \
                if argv[0] != "cursor-hook" else None
        assert answered >= 8  # closed-lid decisions were part of the table
        assert _sessions(client_side) == _sessions(python_side)
        assert _log_lines(client_side) == _log_lines(python_side)
    finally:
        other.close()


def test_the_fuzz_corpus_through_the_client(lidguard):
    """A sample of the hook fuzz corpus (tests/hooks/test_hook_fuzz.py's generators) as processes: the client
    answers each exactly as the Python hook does against the same runtime."""
    _start(lidguard)
    lidguard.set_machine(**CLOSED)
    for provider in ("claude", "codex", "copilot", "opencode", "gemini", "qwen"):
        for case in range(6):
            rng = random.Random(f"client-{provider}-{case}")
            stdin, argv = build_payload(rng, provider), [f"{provider}-hook", *build_arguments(rng, provider)]
            expected = python_run(lidguard.env, argv, stdin)
            got = client_run(lidguard.env, argv, stdin, fallback=NO_FALLBACK)
            assert (got.returncode, got.stdout) == (0, expected.stdout), (provider, case, argv, stdin[:200])
            assert_valid_output(provider, got.stdout.decode())


# -- the fallbacks ---------------------------------------------------------------------------------
START = json.dumps({"session_id": "f1", "cwd": "/w", "hook_event_name": "UserPromptSubmit", "prompt": "p"}).encode()


def _has_session(lidguard, name: str) -> bool:
    result = lidguard.run("status", "--json")
    return result.returncode == 0 and any(s["sessionIdentifier"] == name
                                          for s in json.loads(result.stdout).get("sessions", []))


def test_no_runtime_falls_back_to_the_python_hook_which_starts_it(lidguard):
    result = client_run(lidguard.env, ["claude-hook"], START)
    assert (result.returncode, result.stdout) == (0, b"")
    assert _has_session(lidguard, "f1")


def test_a_socket_nobody_listens_on_falls_back(lidguard):
    lidguard.socket.parent.mkdir(parents=True, mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(lidguard.socket))
    stale.close()  # the file stays: connecting is refused
    result = client_run(lidguard.env, ["claude-hook"], START)
    assert (result.returncode, result.stdout) == (0, b"")
    assert _has_session(lidguard, "f1")


class _FakeRuntime:
    """Listens on the runtime's socket path: ``mode`` "silent" (never answers), "close" (reads, then closes
    unanswered: a runtime killed mid-request), "old" (a runtime that knows only JSON lines)."""

    def __init__(self, path: Path, mode: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(16)
        self.mode = mode
        self.received: list[bytes] = []
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            connection.settimeout(5)
            try:
                data = connection.recv(1 << 20)
            except OSError:
                data = b""
            self.received.append(data)
            if self.mode == "silent":
                self.held.append(connection)
                continue
            if self.mode == "old":
                connection.sendall(b'{"v":1,"Succeeded":false,"RuntimeUnavailable":false,'
                                   b'"Message":"The runtime received invalid JSON."}\n')
            connection.close()

    def close(self) -> None:
        self.listener.close()
        for connection in self.held:
            connection.close()


@pytest.mark.parametrize("mode", ["silent", "close", "old"])
def test_a_runtime_that_cannot_answer_ends_in_the_python_hooks_answer(lidguard, mode, load_allowance):
    fake = _FakeRuntime(lidguard.socket, mode)
    try:
        payload = json.dumps({"session_id": "f2", "cwd": "/w", "hook_event_name": "PermissionRequest",
                              "tool_name": "Bash"}).encode()
        began = time.monotonic()
        result = client_run(lidguard.env, ["claude-hook"], payload)
        elapsed = time.monotonic() - began
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
        assert fake.received[0].startswith(hook_frame.REQUEST_MAGIC)
        assert any(data.startswith(b"{") for data in fake.received[1:])  # the Python hook asked the same socket
        assert elapsed < int(_define("REPLY_MS")) / 1000 + HOOK_BUDGET_SECONDS + load_allowance()
    finally:
        fake.close()


def test_a_fallback_reply_runs_the_python_hook(lidguard):
    _start(lidguard)
    payload = json.dumps({"session_id": "f3", "cwd": "/w", "hook_event_name": "PreToolUse"}).encode()
    other_mode = {**lidguard.env, "LIDGUARD_TEST_MODE": "yes"}  # same folder, another spelling: not this runtime's
    assert client_run(other_mode, ["claude-hook"], payload, fallback=NO_FALLBACK).stdout == b"FELL BACK"
    assert client_run(lidguard.env, ["claude-hook", "--help"], b"", fallback=NO_FALLBACK).stdout == b"FELL BACK"
    assert client_run(lidguard.env, ["nobody-hook"], payload, fallback=NO_FALLBACK).stdout == b"FELL BACK"
    assert client_run(lidguard.env, ["claude-hook"], payload, fallback=NO_FALLBACK).stdout == b""


def test_the_fallback_gets_the_stdin_the_client_read(lidguard, tmp_path):
    out = tmp_path / "stdin.bin"
    echo = [sys.executable, "-c", f"import sys; open({str(out)!r}, 'wb').write(sys.stdin.buffer.read())"]
    for data in (b"", b"{}", os.urandom(40000)):  # a pipe, and the temp file for what a pipe may not hold
        assert client_run(lidguard.env, ["claude-hook"], data, fallback=echo).returncode == 0
        assert out.read_bytes() == data


# -- the hook's rules -------------------------------------------------------------------------------
def test_garbage_huge_and_never_closed_stdin(lidguard, load_allowance):
    _start(lidguard)
    for data in (b"\xff\xfe garbage", b"{" * 100000, b"[" * 70 + b"]" * 70):
        result = client_run(lidguard.env, ["claude-hook"], data, fallback=NO_FALLBACK)
        assert (result.returncode, result.stdout) == (0, b"")
    # 50 MB: read to its bound (the rest is never read: the writer gets EPIPE), answered with nothing.
    process = subprocess.Popen([CLIENT, *NO_FALLBACK, "claude-hook"], env=lidguard.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"{" + b" " * (50 * 1024 * 1024))
    except BrokenPipeError:
        pass
    process.stdin.close()
    assert process.wait(timeout=60) == 0 and process.stdout.read() == b""
    # stdin never closed: a complete object ends the read at once; an incomplete one after the idle bound.
    for data, bound in ((b'{"session_id": "n", "hook_event_name": "PreToolUse"}', 1.0),
                        (b'{"session_id": "n"', STDIN_TOTAL_SECONDS + 1.0)):
        process = subprocess.Popen([CLIENT, *NO_FALLBACK, "claude-hook"], env=lidguard.env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)
        began = time.monotonic()
        process.stdin.write(data)
        process.stdin.flush()
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - began < bound + load_allowance()
        assert process.stdout.read() == b""
        process.stdin.close()


def test_a_reader_that_went_away_costs_nothing(lidguard):
    _start(lidguard)
    lidguard.set_machine(**CLOSED)
    payload = json.dumps({"session_id": "s", "cwd": "/w", "hook_event_name": "PermissionRequest",
                          "tool_name": "Bash"}).encode()
    read, write = os.pipe()
    os.close(read)  # stdout is a pipe nobody reads: SIGPIPE is ignored, the write fails quietly
    try:
        result = subprocess.run([CLIENT, *NO_FALLBACK, "claude-hook"], env=lidguard.env, input=payload,
                                stdout=write, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert result.returncode == 0 and result.stderr == b""
    assert result.returncode != -signal.SIGPIPE
