"""Talking to the runtime: connect with short retries, auto-start it for start events.

The connection goes through ``transport.py``; a server running as another user is never trusted.

Timings follow the original tool (REFERENCE 3.1): 250 ms connect timeout, retry every 100 ms for
up to 750 ms; an auto-started runtime gets up to 5 s to answer. Stdlib only (hook hot path).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from .protocol import MAX_MESSAGE_BYTES, ProtocolError, decode_message, encode_message, failure_response
from .transport import ClientConnection, UntrustedPeer, default_transport

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "RUNTIME_NOT_RUNNING",
    "launch_runtime",
    "send_request",
]

RUNTIME_NOT_RUNNING = "LidGuard runtime is not running."
CONNECT_TIMEOUT_SECONDS = 0.25
CONNECT_RETRY_SECONDS = 0.1
CONNECT_WINDOW_SECONDS = 0.75
AUTO_START_WAIT_SECONDS = 5.0


def _connect(socket_path: Path, window: float) -> ClientConnection | None:
    transport = default_transport()
    deadline = time.monotonic() + window
    while True:
        try:
            return transport.connect(socket_path, CONNECT_TIMEOUT_SECONDS)
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(CONNECT_RETRY_SECONDS)


def launch_runtime() -> bool:
    """Starts ``lidguard run-server`` detached (own session, stdio on /dev/null)."""
    import subprocess  # only start events launch a runtime; keep it off the common hook path

    command = [sys.executable, "-m", "lidguard", "run-server"]
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
        )
    except OSError:
        return False
    return True


def _exchange(connection: ClientConnection, request: dict[str, Any], reply_timeout: float | None) -> dict[str, Any]:
    connection.verify_server()  # before anything is sent or believed
    connection.send_all(encode_message(request), reply_timeout)
    return decode_message(connection.receive_line(MAX_MESSAGE_BYTES, reply_timeout))


def send_request(socket_path: Path, request: dict[str, Any], *, auto_start: bool = False,
                 reply_timeout: float | None = 30.0) -> dict[str, Any]:
    """One request, one response. A down runtime gives ``RuntimeUnavailable: true``."""
    sock = _connect(socket_path, CONNECT_WINDOW_SECONDS)
    if sock is None and auto_start:
        if not launch_runtime():
            return failure_response("Failed to start the LidGuard runtime.", runtime_unavailable=True)
        sock = _connect(socket_path, AUTO_START_WAIT_SECONDS)
        if sock is None:
            return failure_response("Failed to start the LidGuard runtime.", runtime_unavailable=True)
    if sock is None:
        return failure_response(RUNTIME_NOT_RUNNING, runtime_unavailable=True)
    try:
        return _exchange(sock, request, reply_timeout)
    except UntrustedPeer as error:
        return failure_response(str(error))
    except ProtocolError as error:
        return failure_response(f"The runtime sent an unreadable response: {error}")
    except OSError as error:
        return failure_response(f"Lost the connection to the LidGuard runtime: {error}", runtime_unavailable=True)
    finally:
        sock.close()
