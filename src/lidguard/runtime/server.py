"""``lidguard run-server``: the per-user runtime process.

Single instance per user (an OS lock file; a second server exits 0 at once). Listens on a Unix
socket in a 0700 folder (socket 0600); peers of another uid are refused. One JSON line in, one
JSON line out per connection; a bad request gets an error reply and never takes the runtime down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from ..fileio import ensure_private_dir
from ..ipc.protocol import MAX_MESSAGE_BYTES, ProtocolError, decode_message, encode_message, failure_response
from ..platform import load_platform
from ..platform.api import Platform
from ..platform.host import current_user_id
from ..platform.locking import InstanceLock
from ..platform.paths import LidGuardPaths, resolve_paths
from ..platform.peercred import peer_uid
from ..settings import SettingsFileError, headless_defaults, load_or_create_settings
from .daemon import Runtime
from .protection import restore_pending_lid_backup

__all__ = ["run_server", "serve"]

logger = logging.getLogger(__name__)
REQUEST_READ_TIMEOUT_SECONDS = 10.0


async def _read_request_line(stream: SocketStream) -> bytes:
    buffered = BufferedByteReceiveStream(stream)
    return await buffered.receive_until(b"\n", MAX_MESSAGE_BYTES + 1)


async def _handle_connection(runtime: Runtime, stream: SocketStream) -> None:
    async with stream:
        raw_socket: socket.socket = stream.extra(SocketAttribute.raw_socket)
        uid = current_user_id()
        if uid is not None and peer_uid(raw_socket) != uid:
            await stream.send(encode_message(failure_response("Connections from other users are refused.")))
            return
        try:
            with anyio.fail_after(REQUEST_READ_TIMEOUT_SECONDS):
                line = await _read_request_line(stream)
            message = decode_message(line)
        except anyio.DelimiterNotFound:
            response: dict[str, Any] = failure_response(f"The request is larger than {MAX_MESSAGE_BYTES} bytes.")
        except (anyio.IncompleteRead, anyio.EndOfStream):
            response = failure_response("The runtime received an empty request.")
        except TimeoutError:
            response = failure_response("The request was not completed in time.")
        except ProtocolError as error:
            response = failure_response(str(error))
        else:
            try:
                response = await runtime.handle_message(message)
            except Exception as error:  # the runtime never dies of a request
                runtime.exception_log.record("request-failed", error)
                response = failure_response(f"The runtime failed to handle the request: {error}")
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await stream.send(encode_message(response))


async def serve(runtime: Runtime, paths: LidGuardPaths, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Runs the runtime until it asks to exit or is cancelled; always releases protection."""
    ensure_private_dir(paths.runtime_dir)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(paths.socket_file)
    old_umask = os.umask(0o177)
    try:
        listener = await anyio.create_unix_listener(paths.socket_file)
    finally:
        os.umask(old_umask)
    os.chmod(paths.socket_file, 0o600)
    connections = 0
    try:
        async with listener, anyio.create_task_group() as task_group:
            await runtime.run(task_group)

            async def serve_one(stream: SocketStream) -> None:
                nonlocal connections
                connections += 1
                try:
                    await _handle_connection(runtime, stream)
                finally:
                    connections -= 1

            async def accept_loop() -> None:
                await listener.serve(serve_one, task_group=task_group)

            task_group.start_soon(accept_loop)
            task_status.started()
            await runtime.exit_requested.wait()
            # Let the reply that asked for the exit reach its client first.
            with anyio.move_on_after(5):
                while connections:
                    await anyio.sleep(0.01)
            task_group.cancel_scope.cancel()
    finally:
        await runtime.shutdown()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(paths.socket_file)


def _recover_lid_policy(platform: Platform, paths: LidGuardPaths, runtime: Runtime) -> None:
    try:
        if restore_pending_lid_backup(platform, paths.lid_backup_file):
            runtime.log("lid-action-restored-from-pending-backup", "run-server",
                        f"Restored the lid policy from {paths.lid_backup_file} left by an earlier runtime.")
    except Exception as error:  # a bad backup must not keep the runtime from starting
        runtime.log("lid-action-restore-failed", "run-server", f"Could not restore the lid policy: {error}",
                    succeeded=False)


async def _serve_with_signals(runtime: Runtime, paths: LidGuardPaths) -> None:
    async with anyio.create_task_group() as task_group:

        async def watch_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
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
    ensure_private_dir(paths.runtime_dir)
    lock = InstanceLock(paths.lock_file)
    if not lock.try_acquire():
        return 0
    try:
        platform = load_platform()
        try:
            settings = load_or_create_settings(paths.settings_file)
            settings_error = None
        except SettingsFileError as error:
            settings, settings_error = headless_defaults(), error
        runtime = Runtime(platform=platform, paths=paths, settings=settings)
        if settings_error is not None:
            runtime.log("settings-load-failed", "run-server", f"{settings_error} Using defaults.", succeeded=False)
        _recover_lid_policy(platform, paths, runtime)
        anyio.run(_serve_with_signals, runtime, paths)
    except Exception as error:
        from .logs import ExceptionLog

        ExceptionLog(paths.exception_log_file).record("runtime-crashed", error)
        raise
    finally:
        lock.release()
    return 0

