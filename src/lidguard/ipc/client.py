"""Talking to the runtime: connect with short retries, auto-start it for start events.

The connection goes through ``transport.py``; a server running as another user is never trusted.

Timings follow the original tool (REFERENCE 3.1): 250 ms connect timeout, retry every 100 ms for
up to 750 ms; an auto-started runtime gets up to 5 s to answer (up to 30 s while it is visibly still
starting on a loaded machine). Stdlib only (hook hot path).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from .protocol import (
    MAX_MESSAGE_BYTES,
    RUNTIME_STOPPING_MESSAGE,
    ProtocolError,
    decode_message,
    encode_message,
    failure_response,
)
from .transport import ClientConnection, UntrustedPeer, client_transport

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
AUTO_START_MAX_WAIT_SECONDS = 30.0  # only while the launched runtime is still alive (a loaded machine)
RELAUNCH_CHECK_SECONDS = 0.5
# A launched run-server that exited 0 at once found another runtime holding the lock: that one is
# starting (or exiting). Wait for it up to the longest wait, relaunching only this often.
RELAUNCH_WHILE_LOCK_HELD_SECONDS = 2.0
STOPPING_RETRY_SECONDS = 10.0


class _NoReply(Exception):
    """The runtime closed the connection without answering (it was exiting)."""


def _connect(socket_path: Path, window: float) -> ClientConnection | None:
    transport = client_transport()
    deadline = time.monotonic() + window
    while True:
        try:
            return transport.connect(socket_path, CONNECT_TIMEOUT_SECONDS)
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(CONNECT_RETRY_SECONDS)


def launch_runtime() -> Any:
    """Starts ``lidguard run-server`` detached (own session, stdio on /dev/null).

    Returns the process (something with ``poll()``), or None when it could not be started.
    """
    import subprocess  # only start events launch a runtime; keep it off the common hook path

    command = [sys.executable, "-m", "lidguard", "run-server"]
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
        )
    except OSError:
        return None


def _exchange(connection: ClientConnection, request: dict[str, Any], reply_timeout: float | None) -> dict[str, Any]:
    connection.verify_server()  # before anything is sent or believed
    connection.send_all(encode_message(request), reply_timeout)
    line = connection.receive_line(MAX_MESSAGE_BYTES, reply_timeout)
    if not line.strip():
        raise _NoReply
    return decode_message(line)


def _still_starting(process: Any) -> bool:
    poll = getattr(process, "poll", None)
    return poll is not None and poll() is None


def _connect_or_launch(socket_path: Path) -> ClientConnection | None:
    """Connects, launching the runtime when nobody answers. The launched process gets
    ``AUTO_START_WAIT_SECONDS`` to answer, more while it is still alive on a loaded machine (up to
    ``AUTO_START_MAX_WAIT_SECONDS``); one that exited at once (the lock was still held by a runtime
    that was exiting) is launched again."""
    connection = _connect(socket_path, CONNECT_WINDOW_SECONDS)
    started = time.monotonic()
    process: Any = None
    launched_at = 0.0
    lock_held_elsewhere = False
    while connection is None:
        now = time.monotonic()
        waited = now - started
        starting = _still_starting(process)
        if process is not None and not starting and getattr(process, "poll", lambda: None)() == 0:
            lock_held_elsewhere = True  # run-server exits 0 at once when another runtime holds the lock
        patient = starting or lock_held_elsewhere
        if waited >= AUTO_START_MAX_WAIT_SECONDS or (waited >= AUTO_START_WAIT_SECONDS and not patient):
            return None
        due = not lock_held_elsewhere or now - launched_at >= RELAUNCH_WHILE_LOCK_HELD_SECONDS
        if not starting and due:
            process = launch_runtime()
            launched_at = now
            if process is None:
                return None
        connection = _connect(socket_path, RELAUNCH_CHECK_SECONDS)
    return connection


def _attempt(socket_path: Path, request: dict[str, Any], auto_start: bool,
             reply_timeout: float | None) -> tuple[dict[str, Any], bool]:
    """One exchange; the flag says the runtime was exiting (an auto-starting request tries again)."""
    connection = _connect_or_launch(socket_path) if auto_start else _connect(socket_path, CONNECT_WINDOW_SECONDS)
    if connection is None:
        if auto_start:
            return failure_response("Failed to start the LidGuard runtime.", runtime_unavailable=True), False
        return failure_response(RUNTIME_NOT_RUNNING, runtime_unavailable=True), False
    try:
        reply = _exchange(connection, request, reply_timeout)
    except _NoReply:
        return failure_response("The LidGuard runtime closed the connection without answering.",
                                runtime_unavailable=True), True
    except UntrustedPeer as error:
        return failure_response(str(error)), False
    except ProtocolError as error:
        return failure_response(f"The runtime sent an unreadable response: {error}"), False
    except OSError as error:
        lost = failure_response(f"Lost the connection to the LidGuard runtime: {error}", runtime_unavailable=True)
        return lost, isinstance(error, (ConnectionResetError, BrokenPipeError))  # reset by an exiting runtime
    finally:
        connection.close()
    stopping = reply.get("RuntimeStopping") is True or reply.get("Message") == RUNTIME_STOPPING_MESSAGE
    return reply, stopping and reply.get("Succeeded") is False


def send_request(socket_path: Path, request: dict[str, Any], *, auto_start: bool = False,
                 reply_timeout: float | None = 30.0) -> dict[str, Any]:
    """One request, one response. A down runtime gives ``RuntimeUnavailable: true``.

    With ``auto_start`` (start events) a missing runtime is launched, and a runtime that is exiting
    (it refuses new sessions, or closes the connection unanswered) is waited out and replaced, so a
    start racing the idle exit still protects its session.
    """
    deadline = time.monotonic() + STOPPING_RETRY_SECONDS
    while True:
        reply, runtime_was_exiting = _attempt(socket_path, request, auto_start, reply_timeout)
        if not (auto_start and runtime_was_exiting) or time.monotonic() >= deadline:
            return reply
        time.sleep(CONNECT_RETRY_SECONDS)
