"""A hook's stdin: read it bounded, parse it defensively, read its fields (stdlib only; hook hot path).

Agents send one JSON object (AGENT_CLIS.md): Claude Code and Codex in snake_case (``session_id``),
Copilot CLI in camelCase (``sessionId``), the OpenCode plugin with ``sessionID``. Nothing here trusts
the payload: stdin is capped at :data:`MAX_STDIN_BYTES`, anything that is not one JSON object is a
``PayloadError`` (the hook then logs it and exits 0 with no output), and every text the runtime or the
log will see is valid Unicode and bounded.
"""

from __future__ import annotations

import json
import os
import select  # already loaded by socket (the hook's floor)
import time

from ..ipc.limits import MAX_PATH_CHARS, MAX_SESSION_IDENTIFIER_CHARS
from ..ipc.protocol import nesting_depth_exceeds

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, BinaryIO

__all__ = [
    "MAX_STDIN_BYTES",
    "STDIN_IDLE_SECONDS",
    "STDIN_TOTAL_SECONDS",
    "PayloadError",
    "Payload",
    "bounded",
    "clean_text",
    "fallback_session",
    "parse_payload",
    "read_stdin",
]

MAX_STDIN_BYTES = 1024 * 1024
# An agent that keeps stdin open (issue 39): well inside the hook budget (runner.HOOK_BUDGET_SECONDS).
STDIN_IDLE_SECONDS = 1.0
STDIN_TOTAL_SECONDS = 2.0


class PayloadError(ValueError):
    """Stdin that is not one JSON object (the message is one line for the hook event log)."""


def read_stdin(stream: BinaryIO | None, idle_seconds: float = STDIN_IDLE_SECONDS,
               total_seconds: float = STDIN_TOTAL_SECONDS) -> bytes:
    """At most ``MAX_STDIN_BYTES`` + 1 bytes (one more tells an oversized payload); b"" when closed.

    An agent that never closes stdin never holds the hook up: the read stops at end of file, at a complete
    JSON object with nothing more waiting, after ``idle_seconds`` without a byte, or after
    ``total_seconds`` in all; what arrived by then is the payload. A stream without a descriptor (tests)
    or one ``select`` cannot watch (a Windows pipe) is read to its end as before."""
    if stream is None:
        return b""
    try:
        descriptor = stream.fileno()
        select.select([descriptor], [], [], 0)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both OSError and ValueError
        return _read_to_end(stream)
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + total_seconds
    try:
        while size <= MAX_STDIN_BYTES:
            if not select.select([descriptor], [], [], 0)[0]:  # nothing waiting: done, or wait a bounded time
                if chunks and _complete_object(chunks):
                    break
                wait = min(idle_seconds, deadline - time.monotonic())
                if wait <= 0 or not select.select([descriptor], [], [], wait)[0]:
                    break
            chunk = os.read(descriptor, MAX_STDIN_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (OSError, ValueError):  # closed or unreadable stdin: whatever arrived so far
        pass
    return b"".join(chunks)


def _complete_object(chunks: list[bytes]) -> bool:
    """What arrived is one whole JSON object already (an agent that writes it and keeps stdin open)."""
    if not chunks[-1].rstrip().endswith(b"}"):
        return False
    try:
        parse_payload(b"".join(chunks))
    except PayloadError:
        return False
    return True


def _read_to_end(stream: BinaryIO) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= MAX_STDIN_BYTES:
            chunk = stream.read(MAX_STDIN_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (OSError, ValueError):  # closed or unreadable stdin: whatever arrived so far
        pass
    return b"".join(chunks)


def clean_text(value: str) -> str:
    """Valid Unicode: a lone surrogate (JSON allows ``"\\ud800"``) becomes U+FFFD."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in value)
    return value


def bounded(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit]


class Payload:
    """The parsed object with typed, first-match field readers."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def text(self, *keys: str) -> str:
        """The first of ``keys`` holding a string (numbers are written as text), stripped; else ""."""
        for key in keys:
            value = self.data.get(key)
            if isinstance(value, str):
                return clean_text(value).strip()
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)
        return ""

    def flag(self, *keys: str) -> bool:
        """True for ``true`` (or the string "true"); anything else is False."""
        for key in keys:
            value = self.data.get(key)
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                return value.strip().lower() == "true"
        return False

    def has(self, key: str) -> bool:
        return key in self.data

    def nested(self, *path: str) -> Any:
        value: Any = self.data
        for key in path:
            if not isinstance(value, dict):
                return None
            value = value.get(key)
        return value

    def session_identifier(self, *keys: str) -> str:
        return session_identifier(self.text(*keys))

    def working_directory(self, cwd: str | None = None, environ: Mapping[str, str] | None = None) -> str:
        given = self.text("cwd", "directory", "workingDirectory", "working_directory")
        return working_directory(given, cwd, environ)


def parse_payload(data: bytes) -> Payload:
    """One JSON object, or ``PayloadError``; never anything else."""
    if len(data) > MAX_STDIN_BYTES:
        raise PayloadError(f"stdin is larger than {MAX_STDIN_BYTES} bytes; ignored")
    text = data.strip()
    if not text:
        raise PayloadError("stdin is empty")
    if nesting_depth_exceeds(text):
        raise PayloadError("stdin nests JSON deeper than the protocol allows; ignored")
    try:
        # One leading byte-order mark allowed (what "utf-8-sig" does, without importing that codec).
        value = json.loads((text[3:] if text.startswith(b"\xef\xbb\xbf") else text).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise PayloadError("stdin is not valid UTF-8") from error
    except (ValueError, RecursionError) as error:
        raise PayloadError(f"stdin is not valid JSON: {str(error).splitlines()[0][:200]}") from error
    if not isinstance(value, dict):
        raise PayloadError(f"stdin is JSON but not an object ({type(value).__name__})")
    return Payload(value)


def session_identifier(given: str) -> str:
    """The provider's session id, bounded; an over-long one keeps its head and a digest of the whole."""
    if len(given) <= MAX_SESSION_IDENTIFIER_CHARS:
        return given
    import hashlib  # only for ids no real agent sends

    digest = hashlib.sha256(given.encode("utf-8")).hexdigest()[:16]
    return f"{given[: MAX_SESSION_IDENTIFIER_CHARS - 20]}...{digest}"


def working_directory(given: str, cwd: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The payload's folder (absolute, no trailing separator), else the hook's (``cwd``: the hook
    process's own when None; "" when the hook could not read it); bounded."""
    folder = given if given and len(given) <= MAX_PATH_CHARS and "\0" not in given else ""
    here = cwd
    if here is None:
        try:
            here = os.getcwd()
        except OSError:  # the folder was deleted under the agent
            here = ""
    if not here:
        here = (os.environ if environ is None else environ).get("PWD") or os.sep
    if not folder:
        folder = clean_text(here)
    if not os.path.isabs(folder):
        try:
            folder = os.path.normpath(os.path.join(here, folder)) if os.path.isabs(here) else os.path.abspath(folder)
        except (OSError, ValueError):
            folder = os.sep
    folder = folder.rstrip("/\\") or os.sep
    return folder if len(folder) <= MAX_PATH_CHARS else os.sep


def fallback_session(display: str, folder: str) -> str:
    """``<Provider>:<folder>`` (REFERENCE 4.1) when the payload carries no session id; bounded."""
    return session_identifier(f"{display}:{folder}")
