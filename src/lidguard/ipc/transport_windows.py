"""The runtime channel on Windows: a per-user named pipe, ``\\\\.\\pipe\\lidguard-<user SID>``.

Same JSON-lines protocol and the same ``ClientTransport``/``ClientConnection`` interface as the Unix
socket (``transport.py``). The pipe is created with a protected DACL granting access to the current
user only (SDDL ``O:<sid>D:P(A;;GA;;;<sid>)``), rejects remote clients, and the first instance is
created with FILE_FLAG_FIRST_PIPE_INSTANCE so a pipe squatted by another process makes the runtime
fail instead of sharing the name. The client checks the server process's user
(GetNamedPipeServerProcessId -> its token's SID) before it trusts a reply; the listener checks each
client's the same way and answers a refusal to another user.

Every Win32 call goes through the Windows binding (:class:`lidguard.platform.windows.winapi.WindowsApi`,
loaded on first use); this module imports only the standard library, as the hook path requires.
Pipe reads and writes are blocking: ``timeout`` is honoured for connecting (WaitNamedPipeW) only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .transport import UntrustedPeer

if TYPE_CHECKING:
    from ..platform.windows.winapi import WindowsApi

__all__ = ["PIPE_BUFFER_BYTES", "NamedPipeConnection", "NamedPipeListener", "NamedPipeTransport",
           "pipe_name_for", "pipe_sddl_for"]

PIPE_PREFIX = "\\\\.\\pipe\\lidguard-"
PIPE_BUFFER_BYTES = 64 * 1024
REFUSED_REPLY = (b'{"v": 1, "Succeeded": false, "RuntimeUnavailable": false, '
                 b'"Message": "Connections from other users are refused."}\n')


def pipe_name_for(sid: str) -> str:
    return PIPE_PREFIX + sid


def pipe_sddl_for(sid: str) -> str:
    """Owner = the user; protected DACL (no inherited entries) with one entry: GENERIC_ALL for the user."""
    return f"O:{sid}D:P(A;;GA;;;{sid})"


def _live_api() -> WindowsApi:
    from ..platform.errors import Unsupported
    from ..platform.windows._binding import load_windows_api

    api, reason = load_windows_api()
    if api is None:
        raise Unsupported("ipc", f"the Windows API binding is unavailable: {reason}")
    return api


def _read_line(api: WindowsApi, handle: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = api.read_file(handle, PIPE_BUFFER_BYTES)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _same_user(api: WindowsApi, pid: int) -> tuple[bool, str | None]:
    try:
        peer = api.process_user_sid(pid)
        return peer == api.current_user_sid(), peer
    except OSError:
        return False, None


class NamedPipeConnection:
    def __init__(self, api: WindowsApi, handle: int, name: str) -> None:
        self._api = api
        self._handle: int | None = handle
        self._name = name

    def _open_handle(self) -> int:
        if self._handle is None:
            raise OSError(f"the connection to {self._name} is closed")
        return self._handle

    def verify_server(self) -> None:
        try:
            pid = self._api.pipe_server_process_id(self._open_handle())
        except OSError as error:
            raise UntrustedPeer(f"Cannot tell which process serves {self._name} ({error}); "
                                "its reply is not trusted.") from error
        trusted, peer = _same_user(self._api, pid)
        if not trusted:
            owner = peer or "an unknown user"
            raise UntrustedPeer(f"The process serving {self._name} (pid {pid}) runs as {owner}, not as you; "
                                "its reply is not trusted.")

    def send_all(self, data: bytes, timeout: float | None) -> None:
        self._api.write_file(self._open_handle(), data)

    def receive_line(self, max_bytes: int, timeout: float | None) -> bytes:
        return _read_line(self._api, self._open_handle(), max_bytes)

    def receive_some(self, max_bytes: int, timeout: float | None) -> bytes | None:
        return self._api.read_file(self._open_handle(), min(max_bytes, PIPE_BUFFER_BYTES))

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                self._api.close_handle(handle)
            except OSError:
                pass


class NamedPipeTransport:
    """ClientTransport over the user's named pipe; the ``endpoint`` path is not used on Windows."""

    def __init__(self, api: WindowsApi | None = None) -> None:
        self._api = api

    @property
    def api(self) -> WindowsApi:
        if self._api is None:
            self._api = _live_api()
        return self._api

    def pipe_name(self) -> str:
        return pipe_name_for(self.api.current_user_sid())

    def connect(self, endpoint: Path, timeout: float) -> NamedPipeConnection:
        name = self.pipe_name()
        handle = self.api.open_named_pipe(name, max(int(timeout * 1000), 1))
        return NamedPipeConnection(self.api, handle, name)


class NamedPipeListener:
    """The runtime's side: one pipe instance per connection, served one at a time (REFERENCE 3.1).

    ``serve_forever(handle_line)`` blocks (run it in a worker thread): each request line goes to
    ``handle_line`` and its result is written back as one line. ``stop()`` ends it, waking a
    pending ConnectNamedPipe by connecting once itself.
    """

    def __init__(self, api: WindowsApi | None = None, *, max_request_bytes: int = 1024 * 1024) -> None:
        self._api = api if api is not None else _live_api()
        self._sid = self._api.current_user_sid()
        self.name = pipe_name_for(self._sid)
        self._max_request_bytes = max_request_bytes
        self._stop = threading.Event()
        self._first = True

    def serve_forever(self, handle_line: Callable[[bytes], bytes]) -> None:
        while not self._stop.is_set():
            self.serve_one(handle_line)

    def serve_one(self, handle_line: Callable[[bytes], bytes]) -> None:
        api = self._api
        handle = api.create_named_pipe(self.name, pipe_sddl_for(self._sid), buffer_size=PIPE_BUFFER_BYTES,
                                       first_instance=self._first)
        self._first = False
        try:
            api.connect_named_pipe(handle)
            if self._stop.is_set():
                return
            trusted, _peer = _same_user(api, api.pipe_client_process_id(handle))
            line = _read_line(api, handle, self._max_request_bytes)
            reply = handle_line(line) if trusted else REFUSED_REPLY
            api.write_file(handle, reply if reply.endswith(b"\n") else reply + b"\n")
        except OSError:
            pass  # one client's broken connection never stops the listener
        finally:
            try:
                api.disconnect_named_pipe(handle)
            except OSError:
                pass
            try:
                api.close_handle(handle)
            except OSError:
                pass

    def stop(self) -> None:
        self._stop.set()
        try:
            wake = self._api.open_named_pipe(self.name, 100)
        except OSError:
            return
        try:
            self._api.close_handle(wake)
        except OSError:
            pass
