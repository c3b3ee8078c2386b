"""The local channel between the CLI/hooks and the runtime, behind one small interface.

A client ``connect``s to an endpoint with a timeout and gets a ``ClientConnection``; before it
trusts a reply it checks that the server runs as the same user (``SO_PEERCRED``/``getpeereid``
through ``platform.peercred``). The runtime's listener is bound through the same transport and
checks its peers the same way. ``UnixSocketTransport`` is the implementation on Linux and macOS; a
Windows named pipe implements the same two Protocols later and ``default_transport`` picks it.

Stdlib only (the hook path imports this). The runtime wraps the bound socket in anyio itself.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any, Protocol

from ..platform.host import current_user_id, host_os_name
from ..platform.peercred import peer_uid

__all__ = [
    "LISTEN_BACKLOG",
    "ClientConnection",
    "ClientTransport",
    "EndpointError",
    "ListenerTransport",
    "UntrustedPeer",
    "UnixSocketTransport",
    "client_transport",
    "default_transport",
    "named_pipe_server",
]

LISTEN_BACKLOG = 4096


class EndpointError(OSError):
    """The endpoint cannot be bound (its path is a folder...); the message is one readable line."""


class UntrustedPeer(OSError):
    """The other end runs as another user (or the OS cannot tell who it is)."""


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
    def connect(self, endpoint: Path, timeout: float) -> ClientConnection:
        """Raises ``OSError`` when nobody listens (or the connection does not complete in time)."""


class ListenerTransport(Protocol):
    def bind(self, endpoint: Path) -> socket.socket:
        """A listening, non-blocking socket only this user can reach; replaces a stale endpoint."""

    def peer_is_trusted(self, connection: socket.socket) -> bool: ...

    def unbind(self, endpoint: Path) -> None: ...


def _same_user(sock: socket.socket) -> tuple[bool, int | None]:
    uid = current_user_id()
    if uid is None:  # an OS without uids: the endpoint's own access control is the boundary
        return True, None
    try:
        peer = peer_uid(sock)
    except OSError:
        return False, None
    return peer == uid, peer


class UnixSocketConnection:
    def __init__(self, sock: socket.socket, endpoint: Path) -> None:
        self._sock = sock
        self._endpoint = endpoint

    def verify_server(self) -> None:
        trusted, peer = _same_user(self._sock)
        if not trusted:
            owner = f"uid {peer}" if peer is not None else "an unknown user"
            raise UntrustedPeer(f"The process listening on {self._endpoint} runs as {owner}, not as you; "
                                "its reply is not trusted.")

    def send_all(self, data: bytes, timeout: float | None) -> None:
        self._sock.settimeout(timeout)
        try:
            self._sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            # The server stopped reading (a request over its limit) and may have answered already:
            # let ``receive_line`` find that reply instead of reporting a reset.
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)

    def receive_line(self, max_bytes: int, timeout: float | None) -> bytes:
        self._sock.settimeout(timeout)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = self._sock.recv(65536)
            if not chunk:
                break
            newline = chunk.find(b"\n")
            if newline >= 0:
                chunks.append(chunk[:newline])
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def receive_some(self, max_bytes: int, timeout: float | None) -> bytes | None:
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv(max_bytes)
        except TimeoutError:
            return None

    def close(self) -> None:
        self._sock.close()


class UnixSocketTransport:
    """Unix domain stream sockets (the socket file is 0600 in a private folder)."""

    def connect(self, endpoint: Path, timeout: float) -> UnixSocketConnection:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(os.fspath(endpoint))
        except BaseException:
            sock.close()
            raise
        return UnixSocketConnection(sock, endpoint)

    def bind(self, endpoint: Path) -> socket.socket:
        if os.path.isdir(endpoint) and not os.path.islink(endpoint):
            raise EndpointError(f"The runtime socket path {endpoint} is a folder. Remove it and try again.")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(endpoint)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            old_umask = os.umask(0o177)  # never world-connectable, not even for an instant
            try:
                sock.bind(os.fspath(endpoint))
            finally:
                os.umask(old_umask)
            os.chmod(endpoint, 0o600)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    def peer_is_trusted(self, connection: socket.socket) -> bool:
        return _same_user(connection)[0]

    def unbind(self, endpoint: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(endpoint)


def default_transport() -> UnixSocketTransport:
    """The Unix-socket transport (Linux, macOS): the runtime's listener and its clients."""
    return UnixSocketTransport()


def runtime_listens_on_named_pipe() -> bool:
    """True where the runtime serves the per-user named pipe (Windows) instead of a Unix socket."""
    return host_os_name() == "windows"


def named_pipe_server() -> Any:
    """Where the runtime serves a named pipe (Windows): its loop, ``serve(answer, *, task_status)``
    (``platform/windows/pipe_server.py``, found here so the runtime never imports an OS backend);
    None where it listens on a Unix socket."""
    if not runtime_listens_on_named_pipe():
        return None
    from ..platform.windows import pipe_server

    return pipe_server.serve_named_pipe


def client_transport() -> ClientTransport:
    """The client side for this OS: the per-user named pipe on Windows (``transport_windows.py``)."""
    if host_os_name() == "windows":
        from .transport_windows import NamedPipeTransport

        return NamedPipeTransport()
    return default_transport()
