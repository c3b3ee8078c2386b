"""The transport Protocols (``transport.py`` implements them for Unix sockets, ``transport_windows.py``
for the named pipe). Apart from ``transport.py`` so the hook path never imports ``typing``."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Protocol

__all__ = ["ClientConnection", "ClientTransport", "ListenerTransport"]


class ClientConnection(Protocol):
    def verify_server(self) -> None:
        """Raises ``UntrustedPeer`` unless the server runs as this user."""

    def send_all(self, data: bytes, timeout: float | None) -> None: ...

    def receive_line(self, max_bytes: int, timeout: float | None) -> bytes:
        """Bytes up to the first newline (excluded), at most ``max_bytes + 1``, or what came before EOF."""

    def receive_some(self, max_bytes: int, timeout: float | None) -> bytes | None:
        """What arrived (up to ``max_bytes``), ``b""`` at EOF, None when nothing came within ``timeout``
        (a stream reader, ``watch.py``; the named pipe ignores ``timeout``)."""

    def close(self) -> None: ...


class ClientTransport(Protocol):
    def connect(self, endpoint: str | Path, timeout: float) -> ClientConnection:
        """Raises ``OSError`` when nobody listens (or the connection does not complete in time)."""


class ListenerTransport(Protocol):
    def bind(self, endpoint: Path) -> socket.socket:
        """A listening, non-blocking socket only this user can reach; replaces a stale endpoint."""

    def peer_is_trusted(self, connection: socket.socket) -> bool: ...

    def unbind(self, endpoint: Path) -> None: ...
