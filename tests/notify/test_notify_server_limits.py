"""The timers and the connection cap of ``lidguard.notify.server.GuardedH11Protocol`` on a fake event
loop and transport: the clock is moved by hand, nothing waits (the real server: test_notify_slow_clients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import h11
import pytest
import uvicorn
from uvicorn.server import ServerState

from lidguard.notify.server import REQUEST_TIMEOUT, guarded_protocol


class Handle:
    def __init__(self, when: float, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.when, self.callback, self.args, self.cancelled = when, callback, args, False

    def cancel(self) -> None:
        self.cancelled = True


class Task:
    def add_done_callback(self, callback: Any) -> None:
        pass


class Loop:
    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[Handle] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Handle:
        handle = Handle(self.now + delay, callback, args)
        self.timers.append(handle)
        return handle

    def create_task(self, coroutine: Any, **_: Any) -> Task:
        coroutine.close()  # the app never runs here: the request stays "in the app"
        return Task()

    def advance_to(self, moment: float) -> None:
        self.now = moment
        for handle in sorted(self.timers, key=lambda item: item.when):
            if not handle.cancelled and handle.when <= moment:
                handle.cancelled = True
                handle.callback(*handle.args)


class Transport:
    def __init__(self) -> None:
        self.written = b""
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - never run
    pass


@pytest.fixture
def loop() -> Loop:
    return Loop()


@pytest.fixture
def connect(loop: Loop) -> Callable[..., Any]:
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    state = ServerState()
    protocol_class = guarded_protocol(header_timeout=10, body_timeout=30, cap=2)

    def open_connection() -> Any:
        protocol = protocol_class(config=config, server_state=state, app_state={}, _loop=loop)
        protocol.connection_made(Transport())
        return protocol

    return open_connection


GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def test_headers_trickled_in_still_have_10_s_in_all_then_408(loop: Loop, connect: Callable[..., Any]) -> None:
    client = connect()
    for moment, data in ((3, b"GET / HTTP/1.1\r\n"), (6, b"Host: x\r\n"), (9, b"X-A: b\r\n")):
        loop.advance_to(moment)
        client.data_received(data)
    loop.advance_to(9.99)
    assert not client.transport.closed
    loop.advance_to(10)
    assert client.transport.closed and client.transport.written == REQUEST_TIMEOUT


def test_a_silent_connection_is_closed_without_a_reply(loop: Loop, connect: Callable[..., Any]) -> None:
    client = connect()
    loop.advance_to(10)
    assert client.transport.closed and client.transport.written == b""


def test_a_body_has_30_s_once_its_headers_are_in(loop: Loop, connect: Callable[..., Any]) -> None:
    client = connect()
    loop.advance_to(1)
    client.data_received(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab")
    loop.advance_to(30.9)
    assert not client.transport.closed
    loop.advance_to(31)
    assert client.transport.closed and client.transport.written == b""  # the app reads a disconnect


def test_a_request_in_the_app_has_no_deadline_and_a_kept_alive_one_starts_again(
        loop: Loop, connect: Callable[..., Any]) -> None:
    client = connect()
    client.data_received(GET)
    loop.advance_to(1000)
    assert not client.transport.closed
    client.conn.send(h11.Response(status_code=204, headers=[]))
    client.conn.send(h11.EndOfMessage())
    client.on_response_complete()  # the app answered: keep-alive 5 s, then 10 s for the next headers
    loop.advance_to(1001)
    client.data_received(b"GET / HTTP/1.1\r\n")  # stops uvicorn's keep-alive timer
    loop.advance_to(1014.9)
    assert not client.transport.closed
    loop.advance_to(1015)
    assert client.transport.closed and client.transport.written.endswith(REQUEST_TIMEOUT)


def test_at_the_cap_the_longest_waiting_for_headers_makes_room(loop: Loop, connect: Callable[..., Any]) -> None:
    first = connect()
    loop.advance_to(1)
    busy = connect()
    busy.data_received(GET)  # in the app: never closed to make room
    loop.advance_to(2)
    newcomer = connect()
    assert first.transport.closed and not busy.transport.closed and not newcomer.transport.closed
    first.connection_lost(None)
    newcomer.data_received(GET)
    refused = connect()  # everybody is in a request: the newcomer itself goes
    assert refused.transport.closed and not busy.transport.closed and not newcomer.transport.closed
