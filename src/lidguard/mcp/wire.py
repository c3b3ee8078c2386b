"""The stdio transport of both MCP servers: the SDK's own ``stdio_server`` (it claims fd 0/1 so stray
output never reaches the wire), plus a JSON-RPC answer to every line the SDK's reader cannot parse.

The SDK (``mcp`` 2.3) parses each stdin line with pydantic's strict JSON parser, which refuses a
lone-surrogate escape such as ``"\\ud800"`` (and any line that is not JSON, or not a JSON-RPC message);
its reader then passes the exception on as a stream item, and the dispatcher drops it (logged at debug
level): the client waits forever for an answer to that id. Here such an item becomes a JSON-RPC error:
``-32600`` (Invalid Request) carrying the request's id when the line is JSON with a usable id, ``-32700``
(Parse error) with a null id when it is no JSON at all; a notification or a response is never answered.

Two more (issue 39): a line nested deeper than the SDK's parser goes (about 200 levels; Python's ``json``
gives up at 1,000) is answered with its id, read by ``wire_lines.top_level_members`` without recursion;
and stdin is read through ``wire_lines.BoundedLines`` (the SDK takes any reader of text lines), so a line
longer than ``MAX_LINE_BYTES`` is dropped as it is read and answered ``-32600``, with the id when it comes
before the cut, else a null one (the client must not wait for ever).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.stdio import _claim_fd, _open_stdin_diversion, stdio_server  # the SDK's own fd 0 claim
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError

from ..shared.text import has_lone_surrogate
from .wire_lines import MAX_LINE_BYTES, NESTED, BoundedLines, OversizedLine, top_level_members

__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "error_for_unreadable", "serve_stdio"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_log = logging.getLogger("lidguard.mcp")


def _whole_input(error: Exception) -> Any:
    """What the SDK tried to parse: the raw line (invalid JSON) or the decoded message (wrong shape).

    A pydantic ``ValidationError`` over the SDK's union of message types carries the whole input in an
    error at the top (``json_invalid``, ``model_type``) or as the parent of a missing field."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return None
    try:
        details = errors(include_url=False)
    except Exception:  # noqa: BLE001 - not pydantic's ValidationError after all
        return None
    for detail in details:
        location = tuple(detail.get("loc", ()))
        if len(location) <= 1 or (detail.get("type") == "missing" and len(location) == 2):
            return detail.get("input")
    return None




def _usable_id(message: dict[str, Any]) -> int | str | None:
    value = message.get("id")
    if value is NESTED:
        return None
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _too_deep(error: Exception) -> bool:
    """The SDK's parser stopped at its nesting limit (pydantic: json_invalid, "recursion limit exceeded")."""
    try:
        details = error.errors(include_url=False)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not pydantic's ValidationError
        return False
    return any(detail.get("type") == "json_invalid" and "recursion limit" in str(detail.get("msg", ""))
               for detail in details)


def _deep_answer(members: dict[str, Any]) -> JSONRPCError | None:
    if "method" in members and "id" not in members:
        return None  # a notification is never answered
    if "method" not in members and ("result" in members or "error" in members):
        return None  # a response of the client is never answered
    return JSONRPCError(jsonrpc="2.0", id=_usable_id(members), error=ErrorData(
        code=INVALID_REQUEST, message="Invalid Request: the message is nested too deeply to be read."))


def error_for_unreadable(error: Exception) -> JSONRPCError | None:
    """The answer to a line the SDK could not parse (``error`` is what its reader passed on), or None
    when JSON-RPC forbids one (a notification, or a response of the client)."""
    whole = _whole_input(error)
    if isinstance(whole, OversizedLine):
        return JSONRPCError(jsonrpc="2.0", id=_usable_id(whole.members), error=ErrorData(
            code=INVALID_REQUEST, message=f"Invalid Request: the line is longer than {MAX_LINE_BYTES} bytes "
                                          f"({whole.size} bytes); it was not read."))
    if isinstance(whole, str) and _too_deep(error):
        members = top_level_members(whole)
        if members is not None:
            return _deep_answer(members)
    if isinstance(whole, str):
        try:
            whole = json.loads(whole)  # Python's parser takes what pydantic's refuses (lone surrogates, ...)
        except (ValueError, RecursionError):
            return JSONRPCError(jsonrpc="2.0", id=None,
                                error=ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON."))
    if isinstance(whole, dict):
        if "method" in whole and "id" not in whole:
            return None  # a notification is never answered
        if "method" not in whole and ("result" in whole or "error" in whole):
            return None  # a response of the client is never answered
        request_id = _usable_id(whole)
    else:
        request_id = None
    if has_lone_surrogate(whole):
        text = ("Invalid Request: the message contains a lone surrogate escape (\\ud800-\\udfff without its "
                "pair), which is not valid Unicode.")
    else:
        text = "Invalid Request: not a JSON-RPC 2.0 request this server accepts."
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=text))


async def _answer_unreadable(source: ObjectReceiveStream[Any], sink: ObjectSendStream[Any],
                             replies: Any) -> None:
    """Passes parsed messages on to the server; answers (or drops) what the SDK could not parse."""
    async with sink:
        async for item in source:
            if not isinstance(item, Exception):
                await sink.send(item)
                continue
            answer = error_for_unreadable(item)
            _log.warning("unreadable message on stdin (%s): %s", type(item).__name__,
                         f"answered {answer.error.code}" if answer is not None else "not answered (no request)")
            if answer is not None:
                try:
                    await replies.send(SessionMessage(answer))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return


async def serve_stdio(server: Any) -> None:
    """``server.run_stdio_async`` of the SDK, with the unreadable-line answers in between."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - MCPServer.run_stdio_async does the same
    # fd 0 claimed as the SDK claims it for its own reader (handlers and children read /dev/null; the
    # wire goes on through a private duplicate, restored at the end); the SDK claims fd 1 itself.
    buffer, release = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
    try:
        await _serve(lowlevel, BoundedLines(buffer))
    finally:
        if release is not None:
            release()


async def _serve(lowlevel: Any, lines: BoundedLines) -> None:
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        sink, parsed = anyio.create_memory_object_stream[Any](0)
        async with anyio.create_task_group() as group:
            group.start_soon(_answer_unreadable, read_stream, sink, write_stream)
            await lowlevel.run(parsed, write_stream, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()
