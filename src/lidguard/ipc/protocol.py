"""JSON lines over a per-user local channel: one request line, one response line, then close.

Except ``watch``: the runtime keeps that connection open and writes a status line at once, again on
every change and a keep-alive line when quiet (``runtime/watch_stream.py``; client: ``ipc/watch.py``).

Every message carries ``"v": 1``. Request and response fields are PascalCase like the original
tool's named-pipe protocol (REFERENCE 3.1). Stdlib only: hooks import this.

Both ends are defensive: ``decode_message`` turns every malformed line (invalid UTF-8, invalid JSON,
nesting deeper than ``MAX_NESTING_DEPTH``, numbers Python refuses, anything else) into a
``ProtocolError``; ``encode_message`` never raises and writes pure ASCII (a lone surrogate in a
string becomes the escape ``\\udXXX`` instead of an encoding error).
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = [
    "COMMANDS",
    "MAX_MESSAGE_BYTES",
    "MAX_NESTING_DEPTH",
    "PROTOCOL_VERSION",
    "RUNTIME_STOPPING_MESSAGE",
    "ProtocolError",
    "decode_message",
    "encode_message",
    "failure_response",
    "nesting_depth_exceeds",
]

PROTOCOL_VERSION = 1
# A runtime that is exiting refuses new sessions with this message (and ``"RuntimeStopping": true``);
# a client that auto-starts the runtime waits for it to go and starts a new one.
RUNTIME_STOPPING_MESSAGE = "LidGuard runtime is stopping; try again in a moment."
MAX_MESSAGE_BYTES = 1024 * 1024
MAX_NESTING_DEPTH = 64
COMMANDS = (
    "start",
    "stop",
    "mark-session-active",
    "mark-session-softlocked",
    "remove-session",
    "status",
    "watch",
    "cleanup-orphans",
    "settings",
    "shutdown",
    "pause",
    "resume",
    "emergency-restore",
)

_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')  # once escapes are gone, a string cannot hold a quote
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


class ProtocolError(ValueError):
    """A message that is not one JSON object of protocol version 1."""


def nesting_depth_exceeds(text: bytes, limit: int = MAX_NESTING_DEPTH) -> bool:
    """True when arrays/objects nest deeper than ``limit`` (brackets inside strings do not count).

    Cheap and linear (C-level regex and ``accumulate``): a line with at most ``limit`` opening
    brackets cannot nest deeper, so ordinary requests are never scanned.
    """
    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"", text)).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets), initial=0)) > limit


def encode_message(message: dict[str, Any]) -> bytes:
    """One ASCII JSON line; never raises (an unencodable message becomes a failure reply)."""
    body = {"v": PROTOCOL_VERSION, **message}
    try:
        text = json.dumps(body, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str)
    except Exception as error:  # circular data, NaN, a broken __str__: still answer something readable
        reason = f"{type(error).__name__}: {error}".encode("ascii", "backslashreplace").decode("ascii")
        text = json.dumps(failure_response(f"The runtime could not encode its reply ({reason})."))
    return text.encode("ascii") + b"\n"


def decode_message(line: bytes) -> dict[str, Any]:
    """Parses one request or reply line; every failure is a ``ProtocolError``, never anything else."""
    try:
        return _decode(line)
    except ProtocolError:
        raise
    except Exception as error:  # RecursionError, MemoryError-free oddities: never let them escape
        raise ProtocolError(f"The runtime received invalid JSON: {type(error).__name__}") from error


def _decode(line: bytes) -> dict[str, Any]:
    text = bytes(line).strip()
    if not text:
        raise ProtocolError("The runtime received an empty request.")
    if len(text) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"The request is larger than {MAX_MESSAGE_BYTES} bytes.")
    if nesting_depth_exceeds(text):
        raise ProtocolError(f"The runtime received invalid JSON: nested deeper than {MAX_NESTING_DEPTH} levels.")
    try:
        value = json.loads(text.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ProtocolError("The runtime received invalid JSON: the line is not valid UTF-8.") from error
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"The runtime received invalid JSON: {error}") from error
    if not isinstance(value, dict):
        raise ProtocolError("The runtime received invalid JSON: a request must be a JSON object.")
    version = value.get("v")
    if type(version) is not int or version != PROTOCOL_VERSION:
        shown = repr(version)[:40].encode("ascii", "backslashreplace").decode("ascii")
        raise ProtocolError(f"Unsupported protocol version {shown}; this runtime speaks version 1.")
    return value


def failure_response(message: str, *, runtime_unavailable: bool = False) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "Succeeded": False, "RuntimeUnavailable": runtime_unavailable,
            "Message": message}
