"""A ``watch`` connection: after the request line, the runtime writes status lines until either end goes.

``server.py`` hands a connection here once the runtime answered its request line with a watch reply
(``"Watch": true``); from then on the connection is no longer one of the server's request
connections (no cap, no request timeouts). What it sends:

* the current state at once, then every change (``components/status_stream.py``: coalesced, newest
  only, numbered by ``Sequence``);
* a keep-alive line (``"KeepAlive": true``) after ``KEEPALIVE_SECONDS`` without one, so a client can
  tell a dead runtime from a quiet one.

What ends it: the client closing its end (a half-close counts: EOF is the only sign a Unix socket
gives of a client that went away, and a gone watcher must not hold one of the few watcher slots),
the client sending more than ``INPUT_LIMIT`` bytes after its request (anything it sends is read and
dropped), a client that takes nothing for ``STALL_SECONDS`` (its socket buffer stays full), the
watcher cap (one failure line instead), and the runtime exiting (the server cancels every
connection; the stream just ends).
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import anyio

from ..ipc.protocol import failure_response
from .responses import encode_reply
from .socket_io import send_all as _send_all

if TYPE_CHECKING:
    from .components.status_stream import StatusStreamComponent

__all__ = ["INPUT_LIMIT", "KEEPALIVE_SECONDS", "STALL_SECONDS", "TOO_MANY_WATCHERS", "serve_watcher"]

KEEPALIVE_SECONDS = 20.0
STALL_SECONDS = 30.0
INPUT_LIMIT = 64 * 1024
TOO_MANY_WATCHERS = "The runtime already streams its state to {limit} watchers; try again later."


async def _until_peer_leaves(sock: socket.socket, limit: int) -> None:
    """Returns at EOF or a broken connection, or once the peer sent more than ``limit`` bytes."""
    received = 0
    while received <= limit:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(sock)
            continue
        except OSError:
            return
        if not chunk:
            return
        received += len(chunk)


async def serve_watcher(stream: StatusStreamComponent, sock: socket.socket) -> None:
    """Streams to one non-blocking socket until the stream ends; never raises ``OSError``."""
    watcher = stream.open()
    try:
        if watcher is None:
            refusal = failure_response(TOO_MANY_WATCHERS.format(limit=stream.max_watchers))
            with anyio.move_on_after(STALL_SECONDS):
                await _send_all(sock, encode_reply({**refusal, "Watch": False, "TooManyWatchers": True}))
            return
        async with anyio.create_task_group() as group:
            async def watch_peer() -> None:
                await _until_peer_leaves(sock, INPUT_LIMIT)
                group.cancel_scope.cancel()

            group.start_soon(watch_peer)
            while True:
                with anyio.move_on_after(KEEPALIVE_SECONDS) as quiet:
                    line = await watcher.take()
                if quiet.cancelled_caught:
                    line = stream.keepalive_line()
                try:
                    with anyio.move_on_after(STALL_SECONDS) as stalled:
                        await _send_all(sock, line)
                except OSError:
                    break  # the client went away
                if stalled.cancelled_caught:
                    break  # it takes nothing: dropped
            group.cancel_scope.cancel()
    except OSError:
        pass  # the refusal could not be written
    finally:
        if watcher is not None:
            stream.close(watcher)
