"""Non-blocking socket writes shared by the request path (``server.py``) and the watch stream
(``watch_stream.py``): no stream objects, a few system calls per reply, on asyncio and trio alike."""

from __future__ import annotations

import socket

import anyio

__all__ = ["send_all"]


async def send_all(sock: socket.socket, data: bytes) -> None:
    """Writes all of ``data``, waiting for the socket to take more whenever it is full."""
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_writable(sock)
            continue
        view = view[sent:]
