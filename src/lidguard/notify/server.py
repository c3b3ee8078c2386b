"""uvicorn's HTTP/1.1 protocol with the limits a public server needs (issue 39 item 6).

uvicorn (0.55, h11) has no time limit on a request's headers or body: ~1,020 half-sent requests held
every descriptor of a 1,024 limit and nobody got in again. Here:

- a request has ``header_timeout`` seconds for its headers, counted from the connection (or the end
  of the previous response on a kept-alive connection, plus uvicorn's keep-alive time): a client that
  sent part of a request then gets ``408``, one that sent nothing is closed;
- a request body has ``body_timeout`` seconds; then the connection is closed (the app reads a
  disconnect);
- at most ``connection_cap(limit)`` connections, below the descriptor limit (``RLIMIT_NOFILE``):
  at the cap the connection that has waited longest for its headers is closed to make room (the
  newcomer itself when every connection is in a request), so a crowd of slow clients never keeps a
  real one out. The accept backlog is bounded too: asyncio accepts up to ``backlog`` connections in
  one go, before any of them can be closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["RESERVED_DESCRIPTORS", "accept_backlog", "connection_cap", "guarded_protocol"]

DEFAULT_DESCRIPTOR_LIMIT = 1024  # where the limit cannot be read, or is unlimited
RESERVED_DESCRIPTORS = 64  # database, listener, event loop, log, outgoing pushes ...
REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


def connection_cap(limit: int | None) -> int:
    """Three quarters of the descriptors left after ``RESERVED_DESCRIPTORS`` (at least 8)."""
    limit = limit or DEFAULT_DESCRIPTOR_LIMIT
    return max(8, (limit - RESERVED_DESCRIPTORS) * 3 // 4)


def accept_backlog(limit: int | None) -> int:
    """The listen backlog, which is also how many connections asyncio accepts in one go: 8..128."""
    return max(8, min(128, (limit or DEFAULT_DESCRIPTOR_LIMIT) // 8))


class GuardedH11Protocol(H11Protocol):
    header_timeout = 10.0
    body_timeout = 30.0
    cap = connection_cap(None)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase: str | None = None  # "headers", "body" or None (a request in the app, or closed)
        self._phase_started = 0.0
        self._partial = False
        self._deadline: asyncio.TimerHandle | None = None

    # Phases ----------------------------------------------------------------------------------------
    def _arm(self, seconds: float | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(seconds, self._expired) if seconds is not None else None

    def _await_headers(self, seconds: float) -> None:
        self._phase, self._phase_started, self._partial = "headers", self.loop.time(), False
        self._arm(seconds)

    def _follow(self) -> None:
        """Moves on to the body (or the app) once h11 has read the headers (or the body)."""
        state = self.conn.their_state
        if self._phase == "headers" and state is h11.IDLE:
            return
        if state is h11.SEND_BODY:
            if self._phase != "body":
                self._phase = "body"
                self._arm(self.body_timeout)
        elif self._phase is not None:
            self._phase = None
            self._arm(None)

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._phase == "headers" and self._partial and self.conn.our_state is h11.IDLE:
            self.transport.write(REQUEST_TIMEOUT)
        if self._phase is not None:
            self._phase = None
            self.transport.close()

    def _make_room(self) -> None:
        waiting = [item for item in self.connections
                   if isinstance(item, GuardedH11Protocol) and item._phase == "headers"]
        victim = min(waiting, key=lambda item: item._phase_started) if waiting else self
        victim._phase = None
        victim._arm(None)
        victim.transport.close()

    # uvicorn's protocol ----------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        full = len(self.connections) >= self.cap
        super().connection_made(transport)
        self._await_headers(self.header_timeout)
        if full:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        if self._phase == "headers":
            self._partial = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE:
            self._await_headers(self.timeout_keep_alive + self.header_timeout)
        else:  # a pipelined request was read at once
            self._phase = "headers"
            self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._phase = None
        self._arm(None)
        super().connection_lost(exc)


def guarded_protocol(*, header_timeout: float, body_timeout: float, cap: int) -> type[GuardedH11Protocol]:
    """A ``GuardedH11Protocol`` class with these limits (uvicorn's ``Config(http=...)`` takes a class)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"header_timeout": header_timeout, "body_timeout": body_timeout, "cap": cap})
