"""Following the runtime's state: ``watch_status`` yields each status reply as the runtime streams it.

One ``watch`` request (``runtime/watch_stream.py``): the runtime answers with the status at once,
again on every change, and with a keep-alive line when quiet. The client

* yields every status (the ``status`` reply's fields plus ``"Watch": true`` and an increasing
  ``"Sequence"``);
* yields ``None`` once each time the runtime becomes unreachable (not running, exited, stopped
  answering: no line for ``KEEPALIVE_TIMEOUT_SECONDS``, a refusal of a runtime exiting), then
  tries again every ``reconnect_seconds`` - never starting the runtime unless ``start_runtime``;
* returns within about ``STOP_CHECK_SECONDS`` of ``stop`` being set (reads wait at most that long);
* polls ``status`` every ``POLL_SECONDS`` instead when the runtime cannot stream (the Windows named
  pipe serves one connection at a time; a runtime older than ``watch``), yielding only changes;
* polls too when the runtime refuses the watcher (``TooManyWatchers``: all its slots taken), each reply
  carrying ``"WatchRefused": <the runtime's reason>``, and asks for the stream again every
  ``REFUSED_RETRY_SECONDS``.

Stdlib only, like the rest of ``ipc/``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from .client import _connect, _connect_or_launch, send_request
from .platform_match import client_platform
from .platform_match import refusal as platform_refusal
from .protocol import MAX_MESSAGE_BYTES, ProtocolError, decode_message, encode_message
from .transport import ClientConnection, UntrustedPeer

if TYPE_CHECKING:
    from ..platform.paths import LidGuardPaths

__all__ = ["KEEPALIVE_TIMEOUT_SECONDS", "POLL_SECONDS", "STOP_CHECK_SECONDS", "watch_status"]

STOP_CHECK_SECONDS = 0.2
KEEPALIVE_TIMEOUT_SECONDS = 65.0  # the runtime sends a line at least every 20 s
POLL_SECONDS = 2.0
CONNECT_HELD_WAIT_SECONDS = 1.0  # a runtime that holds its lock but has no socket yet: look again later
REQUEST_TIMEOUT_SECONDS = 5.0
REFUSED_RETRY_SECONDS = 30.0  # a refused watcher polls, and asks for the stream again this often


class _Unsupported(Exception):
    """The runtime answered ``watch`` with "cannot stream" (named pipe, older runtime)."""


class _Mismatch(Exception):
    """The runtime is on the other kind of platform (fake against real): its refusal, as a reply."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__(str(reply.get("Message")))
        self.reply = reply


class _Refused(Exception):
    """The runtime refused this watcher for now (``TooManyWatchers``): it is there, so poll ``status``."""


def watch_status(paths: LidGuardPaths, *, stop: threading.Event | None = None, reconnect_seconds: float = 5.0,
                 start_runtime: bool = False, poll_seconds: float = POLL_SECONDS) -> Iterator[dict[str, Any] | None]:
    """Status dicts as the runtime's state changes; ``None`` once per time it is unreachable."""
    stop = stop if stop is not None else threading.Event()
    said_unreachable = False
    while not stop.is_set():
        for status in _follow(paths, stop, start_runtime, poll_seconds):
            said_unreachable = False
            yield status
        if stop.is_set():
            return
        if not said_unreachable:
            said_unreachable = True
            yield None
        if stop.wait(max(0.0, reconnect_seconds)):
            return


def _follow(paths: LidGuardPaths, stop: threading.Event, start_runtime: bool,
            poll_seconds: float) -> Iterator[dict[str, Any]]:
    """The statuses of a reachable runtime; returns when it stops answering (or never did). A watcher the
    runtime refuses (all its slots taken) polls ``status`` meanwhile, each reply carrying ``WatchRefused``
    (the runtime's reason), and asks for the stream again every ``REFUSED_RETRY_SECONDS``."""
    while not stop.is_set():
        if start_runtime:
            connection, _failure = _connect_or_launch(paths.socket_file, paths.lock_file)
        else:
            connection, _held = _connect(paths.socket_file, paths.lock_file, CONNECT_HELD_WAIT_SECONDS)
        if connection is None:
            return
        try:
            yield from _stream(connection, stop)
            return
        except _Unsupported:
            connection.close()
            yield from _poll(paths, stop, poll_seconds)
            return
        except _Mismatch as mismatch:  # shown as a failed reply (status --watch, the tray), asked again later
            connection.close()
            yield mismatch.reply
            if stop.wait(max(0.05, poll_seconds)):
                return
        except _Refused as refusal:
            connection.close()
            until = time.monotonic() + REFUSED_RETRY_SECONDS
            if not (yield from _poll(paths, stop, poll_seconds, str(refusal), until)):
                return
        except (OSError, UntrustedPeer, ProtocolError):
            return
        finally:
            connection.close()


def _stream(connection: ClientConnection, stop: threading.Event) -> Iterator[dict[str, Any]]:
    connection.verify_server()  # before anything is sent or believed
    client = client_platform()
    connection.send_all(encode_message({"Command": "watch", "ClientPlatform": client}), REQUEST_TIMEOUT_SECONDS)
    buffer = bytearray()
    deadline = time.monotonic() + KEEPALIVE_TIMEOUT_SECONDS
    while not stop.is_set():
        newline = buffer.find(b"\n")
        if newline < 0:
            if len(buffer) > MAX_MESSAGE_BYTES or time.monotonic() > deadline:
                return  # garbage, or a runtime that stopped talking
            chunk = connection.receive_some(65536, STOP_CHECK_SECONDS)
            if chunk is None:
                continue
            if not chunk:
                return  # the runtime closed the stream (it exited)
            buffer += chunk
            continue
        line = bytes(buffer[:newline])
        del buffer[:newline + 1]
        deadline = time.monotonic() + KEEPALIVE_TIMEOUT_SECONDS
        message = decode_message(line)
        mismatch = platform_refusal(message, client)
        if mismatch is not None:
            raise _Mismatch(mismatch)
        if message.get("Watch") is not True or message.get("Succeeded") is not True:
            if message.get("WatchUnsupported") is True or str(message.get("Message", "")).startswith(
                    "Unsupported command"):
                raise _Unsupported
            if message.get("TooManyWatchers") is True:
                raise _Refused(str(message.get("Message") or "The runtime refused this watcher."))
            return  # a refusal (the watcher cap, a runtime exiting)
        if message.get("KeepAlive") is True:
            continue
        yield message


def _poll(paths: LidGuardPaths, stop: threading.Event, poll_seconds: float, refused: str = "",
          until: float | None = None) -> Generator[dict[str, Any], None, bool]:
    """Changed ``status`` replies (with ``WatchRefused`` when ``refused``); True when ``until`` came with the
    runtime still answering, False when it stopped answering (or ``stop``)."""
    previous: dict[str, Any] | None = None
    while not stop.is_set():
        reply = send_request(paths.socket_file, {"Command": "status"}, reply_timeout=REQUEST_TIMEOUT_SECONDS,
                             lock_file=paths.lock_file)
        if reply.get("Succeeded") is not True and reply.get("PlatformMismatch") is not True:
            return False
        if refused:
            reply["WatchRefused"] = refused
        if reply != previous:
            previous = reply
            yield reply
        if stop.wait(max(0.05, poll_seconds)):
            return False
        if until is not None and time.monotonic() >= until:
            return True
    return False
