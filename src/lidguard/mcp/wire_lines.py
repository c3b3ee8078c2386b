"""Bounded stdin lines for the MCP stdio transport, and the top-level members of a line read without recursion.

The SDK's own reader takes a whole line whatever its length (a 64 MiB line took a server from 71 MB to
297 MB of peak memory) and leaves lines it cannot parse to ``wire.py``, which needs the request's id to
answer. Here a line is read with ``readline(limit)``: past ``MAX_LINE_BYTES`` the rest is read on in
chunks and dropped, and the reader yields an ``OversizedLine`` (the members found before the cut) instead
of text. ``top_level_members`` reads the members of a JSON object's outermost level with one regex pass,
skipping nested values whatever their depth (Python's ``json`` recurses: 1,000 levels raise
``RecursionError``; the SDK's parser stops at about 200).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO

__all__ = ["DISCARD_CHUNK_BYTES", "MAX_LINE_BYTES", "NESTED", "BoundedLines", "OversizedLine", "top_level_members"]

MAX_LINE_BYTES = 1 << 20  # every message this server takes is a few KiB (tool arguments are short texts)
DISCARD_CHUNK_BYTES = 1 << 16
MAX_MEMBERS = 64  # a JSON-RPC message has four or five; past this many keys the scan stops (0.36 s per MiB)

NESTED = object()  # a member whose value is an object or array (not read)
_UNREADABLE = object()  # a member whose value is cut off or broken
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[{]+|[\]}]+', re.DOTALL)
_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match is not None else position


def _scalar_at(text: str, position: int) -> Any:
    """The value starting at ``position`` when it is a string, number, true, false or null (never recurses)."""
    position = _skip_space(text, position)
    if text.startswith(("{", "["), position):
        return NESTED
    try:
        return _DECODER.raw_decode(text, position)[0]
    except ValueError:
        return _UNREADABLE


def top_level_members(text: str, wanted: frozenset[str] = frozenset({"id", "method"})) -> dict[str, Any] | None:
    """``{key: value}`` for the members of the outermost object (first occurrence of a key wins; an object
    or array value is ``NESTED``, a cut-off one left out), or None when ``text`` is no JSON object.

    Stops once every ``wanted`` key is found, at the object's end, where ``text`` is cut off (an
    unterminated string), or after ``MAX_MEMBERS`` keys. Runs of brackets are one token each, so depth costs nothing."""
    start = _skip_space(text, 0)
    if not text.startswith("{", start):
        return None
    members: dict[str, Any] = {}
    depth = seen = 0
    for token in _TOKEN.finditer(text, start):
        piece = token.group()
        first = piece[0]
        if first == "{" or first == "[":
            depth += len(piece)
        elif first == "}" or first == "]":
            depth -= len(piece)
            if depth <= 0:
                break
        elif len(piece) == 1:
            break  # an unterminated string: the text is cut off here
        elif depth == 1:
            after = _skip_space(text, token.end())
            if not text.startswith(":", after):
                continue  # a string value, not a key
            seen += 1
            if seen > MAX_MEMBERS:
                break
            try:
                key = json.loads(piece)
            except ValueError:
                continue
            if key not in members:
                value = _scalar_at(text, after + 1)
                if value is not _UNREADABLE:
                    members[key] = value
            if wanted <= members.keys():
                break
    return members


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """What the reader yields for a line longer than the cap: its length and the members before the cut."""

    size: int
    members: dict[str, Any] = field(default_factory=dict)


class BoundedLines:
    """stdin as an async iterator of text lines of at most ``limit`` bytes (UTF-8, broken bytes replaced, as
    the SDK's own reader does); a longer line becomes one ``OversizedLine``. Each line is read in a worker
    thread, the discarded rest of a long one in the same call."""

    def __init__(self, buffer: BinaryIO, limit: int = MAX_LINE_BYTES) -> None:
        self._buffer = buffer
        self._limit = limit

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str | OversizedLine:
        import anyio

        line = await anyio.to_thread.run_sync(self.read_line)
        if line is None:
            raise StopAsyncIteration
        return line

    def read_line(self) -> str | OversizedLine | None:
        """The next line (None at the end of input)."""
        data = self._buffer.readline(self._limit + 1)
        if not data:
            return None
        if len(data) <= self._limit or data.endswith(b"\n"):
            return data.decode("utf-8", errors="replace")
        members = top_level_members(data.decode("utf-8", errors="replace")) or {}
        size = len(data)
        del data
        while True:
            chunk = self._buffer.readline(DISCARD_CHUNK_BYTES)
            size += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                return OversizedLine(size, members)
