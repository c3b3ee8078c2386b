"""``lidguard run-server``: the per-user runtime process.

Single instance per user (an OS lock file; a second server exits 0 at once). Listens on the
endpoint of ``ipc/transport.py`` (a 0600 Unix socket in a 0700 folder). One JSON line in, one JSON
line out per connection. Nothing a client does takes the runtime down:

* every failure while reading, decoding, checking or answering a request becomes a failure reply;
  a connection's own failure is confined to its task;
* at most ``MAX_CONNECTIONS`` connections are open; at the cap (or when ``accept`` runs out of file
  descriptors) the connection that has waited longest without sending its request is dropped, and
  when none can be dropped ``accept`` backs off instead of failing;
* a request must arrive within ``REQUEST_READ_TIMEOUT_SECONDS`` and a reply must be taken within
  ``REPLY_WRITE_TIMEOUT_SECONDS``;
* a peer of another user is refused, after its request has been read (bounded, briefly), so it
  receives the refusal instead of a reset connection.

Sockets are driven directly (non-blocking, ``anyio.wait_readable``/``wait_writable``): one request
costs a few system calls and no stream objects, on asyncio and trio alike. Each connection is served in
its own task (``connection_tasks.py``: a bare asyncio task on asyncio, the task group's on trio).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from typing import Any

import anyio

from ..ipc.hook_frame import REPLY_MAGIC, FrameError, decode_request, frame_length
from ..ipc.protocol import MAX_MESSAGE_BYTES, ProtocolError, decode_message, failure_response
from ..ipc.transport import ListenerTransport, default_transport, named_pipe_server
from ..platform.paths import LidGuardPaths, prepare_runtime_dir
from ..platform.peercred import peer_pid
from .activation import inherited_listener
from .app import Runtime
from .connection_tasks import ConnectionTasks
from .requests import RequestError, check_wire_message
from .responses import encode_reply
from .socket_io import send_all as _send_all
from .watch_stream import serve_watcher

__all__ = ["MAX_CONNECTIONS", "run_server", "serve"]

MAX_CONNECTIONS = 256
REQUEST_READ_TIMEOUT_SECONDS = 10.0
REPLY_WRITE_TIMEOUT_SECONDS = 5.0
REFUSAL_READ_TIMEOUT_SECONDS = 1.0
REFUSAL_READ_LIMIT = 64 * 1024
DRAIN_LIMIT = 4 * MAX_MESSAGE_BYTES
ACCEPT_BACKOFF_SECONDS = (0.01, 1.0)
EXIT_GRACE_SECONDS = 5.0
SOCKET_CHECK_SECONDS = 1.0  # how often the runtime checks that its socket file is still there
TOO_LARGE_DRAIN_SECONDS = 5.0  # reading on after a too-large request, so its sender gets the reply
TOO_LARGE_DRAIN_LIMIT = 256 * MAX_MESSAGE_BYTES
HOOK_FRAME_START = b"LGH"  # ipc/hook_frame.REQUEST_MAGIC's first bytes: a JSON line never starts with them
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

WATCH_UNSUPPORTED = "This runtime cannot stream its state over the named pipe; ask for status instead."
REFUSED = "Connections from other users are refused."
EVICTED = ("The runtime has too many open connections and dropped this one, which had not sent its request; "
           "try again.")


class _Connection:
    __slots__ = ("read_all", "reading", "scope", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.scope = anyio.CancelScope()
        self.reading = True
        self.read_all = False  # the request line was all the client sent: nothing is left to drain at close


class ConnectionPool:
    """The open connections, oldest first; bounded, and able to drop one that never sent anything."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[_Connection, None] = {}
        self._room = anyio.Event()

    def __len__(self) -> int:
        return len(self._open)

    @property
    def answering(self) -> int:
        return sum(1 for connection in self._open if not connection.reading)

    def full(self) -> bool:
        return len(self._open) >= self.limit

    def add(self, connection: _Connection) -> None:
        self._open[connection] = None

    def remove(self, connection: _Connection) -> None:
        if self._open.pop(connection, True) is None:
            self._room.set()

    def evict_oldest_reader(self) -> bool:
        for connection in self._open:
            if connection.reading:
                connection.scope.cancel()
                self.remove(connection)  # its slot is free now; its task still answers and closes it
                return True
        return False

    async def wait_for_room(self) -> None:
        if self.full():
            self._room = anyio.Event()
            await self._room.wait()


def _receive_now(sock: socket.socket, limit: int) -> tuple[bytes, str] | bytearray:
    """What ``_receive_line`` returns when the whole request is already there (the usual case: no
    timeout scope, no wait); otherwise the bytes read so far, for ``_receive_line`` to go on from.
    "line-only": the line ended the bytes received (nothing after its newline)."""
    try:
        chunk = sock.recv(65536)
    except (BlockingIOError, InterruptedError):
        return bytearray()
    if not chunk:
        return b"", "eof"
    if chunk.startswith(HOOK_FRAME_START):  # the native hook client's frame (never the start of a JSON line)
        return chunk, "hook"
    newline = chunk.find(b"\n")
    if newline >= 0:
        return chunk[:newline], "line" if newline + 1 < len(chunk) else "line-only"
    if len(chunk) > limit:
        return b"", "too-large"
    return bytearray(chunk)


async def _receive_line(sock: socket.socket, limit: int, buffer: bytearray | None = None) -> tuple[bytes, str]:
    """(line, "line" or "line-only") or (partial, "eof") or (b"", "too-large"); the newline is not included."""
    buffer = bytearray() if buffer is None else buffer
    while True:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            return bytes(buffer), "eof"
        if not buffer and chunk.startswith(HOOK_FRAME_START):
            return chunk, "hook"
        newline = chunk.find(b"\n")
        if newline >= 0:
            buffer += chunk[:newline]
            return bytes(buffer), "line" if newline + 1 < len(chunk) else "line-only"
        buffer += chunk
        if len(buffer) > limit:
            return b"", "too-large"


async def _receive_frame(sock: socket.socket, start: bytes) -> bytes | None:
    """The rest of a hook frame after its first bytes ``start``: the body, or None (malformed, too long,
    or the client stopped sending). Bounded by the caller's read timeout."""
    buffer = bytearray(start)
    size: int | None = None
    while True:
        if size is None and len(buffer) >= 8:
            try:
                size = frame_length(bytes(buffer[:8]))
            except FrameError:
                return None
        if size is not None and len(buffer) >= 8 + size:
            return bytes(buffer[8:8 + size]) if len(buffer) == 8 + size else None
        try:
            chunk = sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            return None
        buffer += chunk


async def _serve_hook_frame(runtime: Runtime, sock: socket.socket, start: bytes, connection: _Connection) -> None:
    """The native hook client: its frame in, the hook's reply out (``runtime/hook_requests.py``)."""
    from .hook_requests import answer_hook_frame

    body: bytes | None = None
    with connection.scope, anyio.move_on_after(REQUEST_READ_TIMEOUT_SECONDS):
        body = await _receive_frame(sock, start)
    connection.read_all = True  # the client shut its side down after its frame
    connection.reading = False
    magic = [REPLY_MAGIC]  # sent once, ahead of the first message (a hold, or the reply)

    async def hold(message: bytes) -> None:
        await _send_all(sock, magic.pop() + message if magic else message)

    try:
        frame = decode_request(body) if body is not None and not connection.scope.cancel_called else None
    except FrameError:
        frame = None
    if frame is None:  # not a frame after all: answered as any bad request is, one JSON line
        data = encode_reply(failure_response("The runtime received an incomplete or malformed hook frame."))
        with anyio.move_on_after(REPLY_WRITE_TIMEOUT_SECONDS):
            await _send_all(sock, data)
        return
    data = await answer_hook_frame(runtime, frame, peer_pid(sock), hold)
    with anyio.move_on_after(REPLY_WRITE_TIMEOUT_SECONDS):
        await hold(data)


async def _drain(sock: socket.socket, limit: int) -> None:
    """Reads and drops the rest of a request that was too large (up to ``limit`` bytes or EOF), so a
    sender still writing it is not reset before it reads the "too large" reply."""
    drained = 0
    while drained < limit:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            return
        drained += len(chunk)


def _drain_and_close(sock: socket.socket, drain: bool = True) -> None:
    """Reads what the client still sent (closing over unread input would reset its connection); not
    when ``drain`` is False (the client's request was all it sent, and a client sends one line)."""
    if drain:
        with contextlib.suppress(OSError):
            drained = 0
            while drained < DRAIN_LIMIT:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


async def _answer(runtime: Runtime, line: bytes, status: str) -> dict[str, Any]:
    if status == "too-large":
        return failure_response(f"The request is larger than {MAX_MESSAGE_BYTES} bytes.")
    if status == "eof" and line.strip():
        return failure_response("The runtime received an incomplete request (no newline before the end).")
    try:
        message = decode_message(line)
        check_wire_message(message)
    except (ProtocolError, RequestError) as error:
        return failure_response(str(error))
    return await runtime.handle_message(message, wire_checked=True)


async def _serve_connection(runtime: Runtime, transport: ListenerTransport, pool: ConnectionPool,
                            connection: _Connection) -> None:
    sock = connection.sock
    try:
        try:
            trusted = transport.peer_is_trusted(sock)
        except Exception:  # noqa: BLE001 - who cannot be identified is refused
            trusted = False
        limit = MAX_MESSAGE_BYTES if trusted else REFUSAL_READ_LIMIT
        line, status = b"", "timeout"
        received = _receive_now(sock, limit) if trusted else bytearray()
        if isinstance(received, tuple):
            line, status = received
        else:
            with connection.scope, anyio.move_on_after(
                    REQUEST_READ_TIMEOUT_SECONDS if trusted else REFUSAL_READ_TIMEOUT_SECONDS):
                line, status = await _receive_line(sock, limit, received)
        if status == "line-only":
            connection.read_all, status = True, "line"
        if status == "hook" and trusted:
            await _serve_hook_frame(runtime, sock, line, connection)
            return
        connection.reading = False
        if not trusted:
            reply = failure_response(REFUSED)
        elif connection.scope.cancel_called:
            reply = failure_response(EVICTED)
        elif status == "timeout":
            reply = failure_response("The request was not completed in time.")
        else:
            try:
                reply = await _answer(runtime, line, status)
            except Exception as error:  # noqa: BLE001 - the runtime never dies of a request
                runtime.exception_log.record("request-failed", error)
                reply = failure_response("The runtime failed to handle the request.")
        if reply.get("Watch") is True:  # the ``watch`` command: this connection becomes a state stream
            pool.remove(connection)
            await serve_watcher(runtime.status_stream, sock)
            return
        data = encode_reply(reply)
        try:
            sent = sock.send(data)  # a reply usually fits the socket buffer: no timeout scope needed
        except (BlockingIOError, InterruptedError):
            sent = 0
        if sent < len(data):
            with anyio.move_on_after(REPLY_WRITE_TIMEOUT_SECONDS):
                await _send_all(sock, data[sent:])
        if trusted and status == "too-large":
            with anyio.move_on_after(TOO_LARGE_DRAIN_SECONDS):
                await _drain(sock, TOO_LARGE_DRAIN_LIMIT)
    except OSError:
        pass  # the client went away; nothing to answer
    except Exception as error:  # noqa: BLE001 - confined to this connection
        runtime.exception_log.record("connection-failed", error)
    finally:
        pool.remove(connection)
        _drain_and_close(sock, drain=not connection.read_all)


async def _accept_loop(runtime: Runtime, transport: ListenerTransport, listener: socket.socket,
                       pool: ConnectionPool, tasks: ConnectionTasks) -> None:
    backoff = ACCEPT_BACKOFF_SECONDS[0]
    failing = False
    while True:
        if pool.full() and not pool.evict_oldest_reader():
            await pool.wait_for_room()
            continue
        try:
            client, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(listener)
            continue
        except Exception as error:  # noqa: BLE001 - EMFILE and friends: never fatal
            if isinstance(error, OSError) and error.errno == errno.ECONNABORTED:
                continue
            if isinstance(error, OSError) and error.errno in _OUT_OF_RESOURCES and pool.evict_oldest_reader():
                await anyio.sleep(0)  # the dropped connection answers and closes, freeing its descriptor
                continue
            if not failing:
                failing = True
                runtime.log("ipc-accept-failed", "run-server",
                            f"Accepting connections failed ({error}); backing off and retrying.", succeeded=False)
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, ACCEPT_BACKOFF_SECONDS[1])
            continue
        if failing:
            failing = False
            runtime.log("ipc-accept-recovered", "run-server", "Accepting connections again.")
        backoff = ACCEPT_BACKOFF_SECONDS[0]
        try:
            client.setblocking(False)
        except OSError:
            client.close()
            continue
        connection = _Connection(client)
        pool.add(connection)
        tasks.start(_serve_connection, runtime, transport, pool, connection)


class _Listening:
    """The bound socket and what identifies its file; replaced when the file vanishes."""

    def __init__(self, sock: socket.socket, identity: tuple[int, int] | None) -> None:
        self.sock = sock
        self.identity = identity
        self.scope = anyio.CancelScope()


def _socket_identity(path: Any) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISSOCK(info.st_mode) else None


async def _accept_until_replaced(runtime: Runtime, transport: ListenerTransport, listening: _Listening,
                                 pool: ConnectionPool, tasks: ConnectionTasks) -> None:
    try:
        with listening.scope:
            await _accept_loop(runtime, transport, listening.sock, pool, tasks)
    finally:
        listening.sock.close()


async def _keep_socket(runtime: Runtime, transport: ListenerTransport, paths: LidGuardPaths,
                       current: list[_Listening], pool: ConnectionPool, connections: Any,
                       tasks: ConnectionTasks) -> None:
    """Re-creates the socket when its file is deleted or replaced (a cleaner, ``rm -r`` of the run
    folder): a runtime that holds the lock must stay reachable, or its sessions' protection would be
    held with no way to reach or stop it."""
    failing = False
    while True:
        await anyio.sleep(SOCKET_CHECK_SECONDS)
        if _socket_identity(paths.socket_file) == current[0].identity:
            continue
        try:
            prepare_runtime_dir(paths.runtime_dir)
            sock = transport.bind(paths.socket_file)
        except (OSError, ValueError) as error:
            if not failing:
                failing = True
                runtime.log("ipc-socket-recreate-failed", "run-server",
                            f"The socket {paths.socket_file} vanished and cannot be re-created yet: {error}",
                            succeeded=False)
            continue
        failing = False
        previous, current[0] = current[0], _Listening(sock, _socket_identity(paths.socket_file))
        connections.start_soon(_accept_until_replaced, runtime, transport, current[0], pool, tasks)
        previous.scope.cancel()
        runtime.log("ipc-socket-recreated", "run-server",
                    f"The socket {paths.socket_file} had vanished; listening on a new one.")


async def serve(runtime: Runtime, paths: LidGuardPaths, *, task_status: Any = anyio.TASK_STATUS_IGNORED,
                max_connections: int = MAX_CONNECTIONS) -> None:
    """Runs the runtime until it asks to exit or is cancelled; always releases protection."""
    pipe_server = named_pipe_server()
    if pipe_server is not None:
        await _serve_named_pipe(runtime, pipe_server, task_status=task_status)
        return
    prepare_runtime_dir(paths.runtime_dir)
    transport = default_transport()
    passed, note = inherited_listener(paths.socket_file)  # systemd socket activation (LISTEN_FDS)
    if note is not None:
        runtime.log("ipc-socket-activation", "run-server", note, succeeded=passed is not None)
    activated_identity = _socket_identity(paths.socket_file) if passed is not None else None
    current = [_Listening(passed or transport.bind(paths.socket_file), _socket_identity(paths.socket_file))]
    pool = ConnectionPool(max_connections)
    try:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            async with anyio.create_task_group() as connections:
                tasks = ConnectionTasks(connections, runtime.exception_log.record)
                try:
                    connections.start_soon(_accept_until_replaced, runtime, transport, current[0], pool, tasks)
                    connections.start_soon(_keep_socket, runtime, transport, paths, current, pool, connections, tasks)
                    task_status.started()
                    await runtime.exit_requested.wait()
                    # Let the replies being written (the one that asked for the exit first) reach their clients.
                    with anyio.move_on_after(EXIT_GRACE_SECONDS):
                        while pool.answering:
                            await anyio.sleep(0.01)
                    connections.cancel_scope.cancel()
                finally:
                    await tasks.aclose()
            task_group.cancel_scope.cancel()
    finally:
        current[0].sock.close()
        identity = _socket_identity(paths.socket_file)
        if identity == current[0].identity and identity != activated_identity:  # the manager's stays
            transport.unbind(paths.socket_file)
        await runtime.shutdown()


async def _serve_named_pipe(runtime: Runtime, serve_pipe: Any, *,
                            task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Windows: the same one-line-in, one-line-out protocol over the per-user named pipe (the loop
    from ``ipc.transport.named_pipe_server`` runs the blocking pipe calls in a worker thread)."""

    async def answer(line: bytes) -> bytes:
        status = "line" if line.endswith(b"\n") else "eof"
        try:
            reply = await _answer(runtime, line, status)
            if reply.get("Watch") is True:  # one pipe instance at a time: no streams (clients poll status)
                reply = {**failure_response(WATCH_UNSUPPORTED), "WatchUnsupported": True}
            return encode_reply(reply)
        except Exception as error:  # the runtime never dies of a request
            runtime.exception_log.record("request-failed", error)
            return encode_reply(failure_response("The runtime failed to handle the request."))

    try:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            async with anyio.create_task_group() as pipes:
                await pipes.start(serve_pipe, answer)
                task_status.started()
                await runtime.exit_requested.wait()
                pipes.cancel_scope.cancel()
            task_group.cancel_scope.cancel()
    finally:
        await runtime.shutdown()


def run_server() -> int:
    """Entry point of ``lidguard run-server`` (``startup.py``: the checks, the readiness line, the loop)."""
    from .startup import run_server as run

    return run()
