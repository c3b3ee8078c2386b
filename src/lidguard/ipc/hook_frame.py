"""The native hook client's one request and its reply (issue 36; ``native/hook_client.c``; stdlib only).

The client (``lidguard/_native/lidguard-hook``) does no JSON: it sends the runtime one binary frame
"run this hook" and prints the bytes the runtime sends back. A frame never starts like a JSON line, so the
runtime tells the two apart by the first bytes; a runtime that does not know the frame answers it with a
JSON failure line, which the client takes as "run the Python hook" (its fallback).

Request (integers are unsigned 32-bit big-endian; ``str`` = u32 length + bytes)::

    "LGH1" u32 body-length
    body: u32 argc, argc x str (argv from the hook command on: "claude-hook", "--event", ...),
          str cwd ("" when the client could not read its own),
          u32 envc, envc x str ("NAME=value", only the names of HOOK_ENVIRONMENT the client has),
          str stdin (what the client read, bounded as hooks/payload.read_stdin bounds it)

Reply: "LGR1", then messages ``kind (1 byte) + u32 length + data``:

    "W" hold: data = u32 seconds; the runtime holds the connection (a blocking Stop) up to that long
    "A" answer: data = u32 exit code + the hook's stdout bytes; the last message
    "F" fallback: data = a reason (text); the client runs the Python hook instead; the last message

``HOOK_ENVIRONMENT`` is the one list of environment values the hook reads; the C client mirrors it
(``tests/hooks/test_hook_client.py`` checks that the two lists are the same).
"""

from __future__ import annotations

__all__ = [
    "HOOK_ENVIRONMENT",
    "IDENTITY_ENVIRONMENT",
    "MAX_FRAME_BYTES",
    "REPLY_MAGIC",
    "REQUEST_MAGIC",
    "FrameError",
    "HookFrame",
    "decode_request",
    "encode_request",
    "reply_answer",
    "reply_fallback",
    "reply_hold",
]

REQUEST_MAGIC = b"LGH1"
REPLY_MAGIC = b"LGR1"
# What the hook reads from its environment: the data folder (HOME, XDG_DATA_HOME), the platform and test
# switches (LIDGUARD_PLATFORM, LIDGUARD_TEST_MODE: the demo's own folder, "platform=fake" in the hook log),
# the working folder when the client's own is gone (PWD) and what tells another agent running Claude
# Code's hooks (agents/claude.py CALLER_ENV and COPILOT_HOME).
HOOK_ENVIRONMENT = (
    "HOME",
    "XDG_DATA_HOME",
    "LIDGUARD_PLATFORM",
    "LIDGUARD_TEST_MODE",
    "PWD",
    "CURSOR_VERSION",
    "GROK_HOOK_EVENT",
    "DEVIN_PROJECT_DIR",
    "COPILOT_HOME",
    "OPENHANDS_CONVERSATIONS_DIR",
    "OPENHANDS_PERSISTENCE_DIR",
)
# The runtime answers only a client whose environment names this runtime's data folder and platform
# exactly as its own does; any difference is a fallback (the Python hook then finds its own runtime).
IDENTITY_ENVIRONMENT = ("HOME", "XDG_DATA_HOME", "LIDGUARD_PLATFORM", "LIDGUARD_TEST_MODE")
MAX_ARGUMENTS = 64
MAX_FIELD_BYTES = 64 * 1024
MAX_STDIN_FIELD_BYTES = 1024 * 1024 + 1  # hooks/payload.MAX_STDIN_BYTES + 1 (one more tells an oversized payload)
MAX_FRAME_BYTES = MAX_STDIN_FIELD_BYTES + (MAX_ARGUMENTS + len(HOOK_ENVIRONMENT) + 1) * (MAX_FIELD_BYTES + 4) + 64


class FrameError(ValueError):
    """A frame that is not one well-formed "run this hook" request."""


class HookFrame:
    __slots__ = ("argv", "cwd", "environ", "stdin")

    def __init__(self, argv: list[str], cwd: str, environ: dict[str, str], stdin: bytes) -> None:
        self.argv = argv
        self.cwd = cwd
        self.environ = environ
        self.stdin = stdin


def _u32(value: int) -> bytes:
    return value.to_bytes(4, "big")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")  # as Python decodes its own argv and environment


def encode_request(argv: list[str], cwd: str, environ: dict[str, str], stdin: bytes) -> bytes:
    """The frame the C client sends (tests, and the benchmarks' Python side)."""
    parts = [_u32(len(argv))]
    for word in argv:
        raw = word.encode("utf-8", "surrogateescape")
        parts += [_u32(len(raw)), raw]
    raw_cwd = cwd.encode("utf-8", "surrogateescape")
    parts += [_u32(len(raw_cwd)), raw_cwd]
    entries = [f"{name}={environ[name]}".encode("utf-8", "surrogateescape")
               for name in HOOK_ENVIRONMENT if name in environ]
    parts.append(_u32(len(entries)))
    for entry in entries:
        parts += [_u32(len(entry)), entry]
    parts += [_u32(len(stdin)), stdin]
    body = b"".join(parts)
    return REQUEST_MAGIC + _u32(len(body)) + body


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def u32(self) -> int:
        if self.at + 4 > len(self.data):
            raise FrameError("the frame ends inside a length")
        value = int.from_bytes(self.data[self.at:self.at + 4], "big")
        self.at += 4
        return value

    def field(self, limit: int) -> bytes:
        size = self.u32()
        if size > limit or self.at + size > len(self.data):
            raise FrameError("a field is longer than its bound or than the frame")
        value = self.data[self.at:self.at + size]
        self.at += size
        return value


def frame_length(header: bytes) -> int:
    """The body length from the first 8 bytes; ``FrameError`` when it is not a hook frame or too long."""
    if header[:4] != REQUEST_MAGIC or len(header) < 8:
        raise FrameError("not a hook frame")
    size = int.from_bytes(header[4:8], "big")
    if size > MAX_FRAME_BYTES:
        raise FrameError(f"the hook frame is longer than {MAX_FRAME_BYTES} bytes")
    return size


def decode_request(body: bytes) -> HookFrame:
    """The frame's body (after magic and length); every defect is a ``FrameError``."""
    reader = _Reader(body)
    count = reader.u32()
    if count > MAX_ARGUMENTS:
        raise FrameError("too many arguments")
    argv = [_text(reader.field(MAX_FIELD_BYTES)) for _ in range(count)]
    cwd = _text(reader.field(MAX_FIELD_BYTES))
    count = reader.u32()
    if count > len(HOOK_ENVIRONMENT):
        raise FrameError("too many environment values")
    environ: dict[str, str] = {}
    for _ in range(count):
        name, equals, value = _text(reader.field(MAX_FIELD_BYTES)).partition("=")
        if not equals or name not in HOOK_ENVIRONMENT:
            raise FrameError("an environment value the hook does not read")
        environ[name] = value
    stdin = reader.field(MAX_STDIN_FIELD_BYTES)
    if reader.at != len(body):
        raise FrameError("bytes after the stdin field")
    return HookFrame(argv, cwd, environ, stdin)


def _message(kind: bytes, data: bytes) -> bytes:
    return kind + _u32(len(data)) + data


def reply_hold(seconds: int) -> bytes:
    return _message(b"W", _u32(max(0, min(int(seconds), 2**31))))


def reply_answer(code: int, stdout: bytes) -> bytes:
    return _message(b"A", _u32(code) + stdout)


def reply_fallback(reason: str) -> bytes:
    return _message(b"F", reason.encode("utf-8", "backslashreplace")[:1024])
