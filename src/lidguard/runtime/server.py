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
costs a few system calls and no stream objects, on asyncio and trio alike.
"""

from __future__ import annotations

import contextlib
import errno
import signal
import socket
from typing import Any

import anyio

from ..fileio import ensure_private_dir
from ..ipc.protocol import MAX_MESSAGE_BYTES, ProtocolError, decode_message, failure_response
from ..ipc.transport import ListenerTransport, default_transport, runtime_listens_on_named_pipe
from ..platform import load_platform
from ..platform.api import Platform
from ..platform.locking import InstanceLock
from ..platform.paths import LidGuardPaths, prepare_runtime_dir, resolve_paths
from ..settings import SettingsFileError, headless_defaults, load_or_create_settings
from .app import Runtime
from .protection import restore_pending_lid_backup
from .requests import RequestError, check_wire_message
from .responses import encode_reply

__all__ = ["MAX_CONNECTIONS", "run_server", "serve"]

MAX_CONNECTIONS = 256
REQUEST_READ_TIMEOUT_SECONDS = 10.0
REPLY_WRITE_TIMEOUT_SECONDS = 5.0
REFUSAL_READ_TIMEOUT_SECONDS = 1.0
REFUSAL_READ_LIMIT = 64 * 1024
DRAIN_LIMIT = 4 * MAX_MESSAGE_BYTES
ACCEPT_BACKOFF_SECONDS = (0.01, 1.0)
EXIT_GRACE_SECONDS = 5.0
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

REFUSED = "Connections from other users are refused."
EVICTED = ("The runtime has too many open connections and dropped this one, which had not sent its request; "
           "try again.")


class _Connection:
    __slots__ = ("reading", "scope", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.scope = anyio.CancelScope()
        self.reading = True


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
    timeout scope, no wait); otherwise the bytes read so far, for ``_receive_line`` to go on from."""
    try:
        chunk = sock.recv(65536)
    except (BlockingIOError, InterruptedError):
        return bytearray()
    if not chunk:
        return b"", "eof"
    newline = chunk.find(b"\n")
    if newline >= 0:
        return chunk[:newline], "line"
    if len(chunk) > limit:
        return b"", "too-large"
    return bytearray(chunk)


async def _receive_line(sock: socket.socket, limit: int, buffer: bytearray | None = None) -> tuple[bytes, str]:
    """(line, "line") or (partial, "eof") or (b"", "too-large"); the newline is not included."""
    buffer = bytearray() if buffer is None else buffer
    while True:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            return bytes(buffer), "eof"
        newline = chunk.find(b"\n")
        if newline >= 0:
            buffer += chunk[:newline]
            return bytes(buffer), "line"
        buffer += chunk
        if len(buffer) > limit:
            return b"", "too-large"


async def _send_all(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            sent = sock.send(view)
        except (BlockingIOError, InterruptedError):
            await anyio.wait_writable(sock)
            continue
        view = view[sent:]


def _drain_and_close(sock: socket.socket) -> None:
    """Reads what the client still sent (closing over unread input would reset its connection)."""
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
    return await runtime.handle_message(message)


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
        data = encode_reply(reply)
        try:
            sent = sock.send(data)  # a reply usually fits the socket buffer: no timeout scope needed
        except (BlockingIOError, InterruptedError):
            sent = 0
        if sent < len(data):
            with anyio.move_on_after(REPLY_WRITE_TIMEOUT_SECONDS):
                await _send_all(sock, data[sent:])
    except OSError:
        pass  # the client went away; nothing to answer
    except Exception as error:  # noqa: BLE001 - confined to this connection
        runtime.exception_log.record("connection-failed", error)
    finally:
        pool.remove(connection)
        _drain_and_close(sock)


async def _accept_loop(runtime: Runtime, transport: ListenerTransport, listener: socket.socket,
                       pool: ConnectionPool, task_group: Any) -> None:
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
        task_group.start_soon(_serve_connection, runtime, transport, pool, connection)


async def serve(runtime: Runtime, paths: LidGuardPaths, *, task_status: Any = anyio.TASK_STATUS_IGNORED,
                max_connections: int = MAX_CONNECTIONS) -> None:
    """Runs the runtime until it asks to exit or is cancelled; always releases protection."""
    if runtime_listens_on_named_pipe():
        await _serve_named_pipe(runtime, task_status=task_status)
        return
    prepare_runtime_dir(paths.runtime_dir)
    transport = default_transport()
    listener = transport.bind(paths.socket_file)
    pool = ConnectionPool(max_connections)
    try:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            async with anyio.create_task_group() as connections:
                connections.start_soon(_accept_loop, runtime, transport, listener, pool, connections)
                task_status.started()
                await runtime.exit_requested.wait()
                # Let the replies being written (the one that asked for the exit first) reach their clients.
                with anyio.move_on_after(EXIT_GRACE_SECONDS):
                    while pool.answering:
                        await anyio.sleep(0.01)
                connections.cancel_scope.cancel()
            task_group.cancel_scope.cancel()
    finally:
        listener.close()
        transport.unbind(paths.socket_file)
        await runtime.shutdown()


async def _serve_named_pipe(runtime: Runtime, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Windows: the same one-line-in, one-line-out protocol over the per-user named pipe
    (``platform/windows/pipe_server.py`` runs the blocking pipe calls in a worker thread)."""
    from ..platform.windows.pipe_server import serve_named_pipe

    async def answer(line: bytes) -> bytes:
        status = "line" if line.endswith(b"\n") else "eof"
        try:
            return encode_reply(await _answer(runtime, line, status))
        except Exception as error:  # the runtime never dies of a request
            runtime.exception_log.record("request-failed", error)
            return encode_reply(failure_response("The runtime failed to handle the request."))

    try:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            async with anyio.create_task_group() as pipes:
                await pipes.start(serve_named_pipe, answer)
                task_status.started()
                await runtime.exit_requested.wait()
                pipes.cancel_scope.cancel()
            task_group.cancel_scope.cancel()
    finally:
        await runtime.shutdown()


def _recover_lid_policy(platform: Platform, paths: LidGuardPaths, runtime: Runtime) -> None:
    try:
        if restore_pending_lid_backup(platform, paths.lid_backup_file):
            runtime.log("lid-action-restored-from-pending-backup", "run-server",
                        f"Restored the lid policy from {paths.lid_backup_file} left by an earlier runtime.")
    except Exception as error:  # a bad backup must not keep the runtime from starting
        runtime.log("lid-action-restore-failed", "run-server", f"Could not restore the lid policy: {error}",
                    succeeded=False)


async def _main(platform: Platform, paths: LidGuardPaths) -> None:
    """Everything that logs happens here, inside the event loop."""
    try:
        settings = load_or_create_settings(paths.settings_file)
        settings_error: SettingsFileError | None = None
    except SettingsFileError as error:
        settings, settings_error = headless_defaults(), error
    runtime = Runtime(platform=platform, paths=paths, settings=settings)
    if settings_error is not None:
        runtime.log("settings-load-failed", "run-server", f"{settings_error} Using defaults.", succeeded=False)
    _recover_lid_policy(platform, paths, runtime)
    async with anyio.create_task_group() as task_group:

        async def watch_signals() -> None:
            names = ("SIGTERM", "SIGINT", "SIGHUP")  # SIGHUP does not exist on Windows
            wanted = [getattr(signal, name) for name in names if hasattr(signal, name)]
            try:
                receiver = anyio.open_signal_receiver(*wanted)
            except NotImplementedError:  # Windows: Ctrl+C still raises KeyboardInterrupt
                return
            with receiver as signals:
                async for _ in signals:
                    runtime.exit_requested.set()
                    return

        task_group.start_soon(watch_signals)
        await serve(runtime, paths)
        task_group.cancel_scope.cancel()


def run_server() -> int:
    """Entry point of ``lidguard run-server``; exit 0 when another runtime already runs."""
    paths = resolve_paths()
    ensure_private_dir(paths.data_dir)
    prepare_runtime_dir(paths.runtime_dir)
    lock = InstanceLock(paths.lock_file)
    if not lock.try_acquire():
        return 0
    try:
        anyio.run(_main, load_platform(), paths)
    except Exception as error:
        from .logs import ExceptionLog

        ExceptionLog(paths.exception_log_file).record("runtime-crashed", error)
        raise
    finally:
        lock.release()
    return 0
