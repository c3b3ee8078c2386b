"""JSON lines over a per-user Unix socket: one request line, one response line, then close.

Every message carries ``"v": 1``. Request and response fields are PascalCase like the original
tool's named-pipe protocol (REFERENCE 3.1). Stdlib only: hooks import this.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "COMMANDS",
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "decode_message",
    "encode_message",
    "failure_response",
]

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 1024 * 1024
COMMANDS = (
    "start",
    "stop",
    "mark-session-active",
    "mark-session-softlocked",
    "remove-session",
    "status",
    "cleanup-orphans",
    "settings",
)


class ProtocolError(ValueError):
    """A message that is not one JSON object of protocol version 1."""


def encode_message(message: dict[str, Any]) -> bytes:
    body = {"v": PROTOCOL_VERSION, **message}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode_message(line: bytes) -> dict[str, Any]:
    text = line.strip()
    if not text:
        raise ProtocolError("The runtime received an empty request.")
    if len(text) > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"The request is larger than {MAX_MESSAGE_BYTES} bytes.")
    try:
        value = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ProtocolError(f"The runtime received invalid JSON: {error}") from error
    if not isinstance(value, dict):
        raise ProtocolError("The runtime received invalid JSON: a request must be a JSON object.")
    version = value.get("v")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"Unsupported protocol version {version!r}; this runtime speaks version 1.")
    return value


def failure_response(message: str, *, runtime_unavailable: bool = False) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "Succeeded": False, "RuntimeUnavailable": runtime_unavailable,
            "Message": message}
