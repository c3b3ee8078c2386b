"""Where the tray's status comes from: the runtime's ``watch`` stream (``lidguard.ipc.watch``).

``status_updates`` yields each status dict (the body of a ``status`` reply) and ``None`` while the
runtime is unreachable, until ``stop`` is set. It uses ``ipc.watch.watch_status`` (the runtime pushes
changes, slow reconnect when it is down); until that client is in this tree it falls back to asking
``status`` every ``POLL_SECONDS`` (``RECONNECT_SECONDS`` while the runtime is down) - the one line
to change is ``_watch_source``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..ipc.client import send_request
from ..platform.paths import LidGuardPaths

__all__ = ["POLL_SECONDS", "RECONNECT_SECONDS", "status_updates"]

POLL_SECONDS = 2.0
RECONNECT_SECONDS = 5.0


def _watch_source() -> Callable[..., Iterator[dict[str, Any] | None]] | None:
    try:
        from ..ipc.watch import watch_status  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return watch_status  # type: ignore[no-any-return,unused-ignore]


def _poll(paths: LidGuardPaths, stop: threading.Event) -> Iterator[dict[str, Any] | None]:
    last: Any = object()
    while not stop.is_set():
        reply = send_request(paths.socket_file, {"Command": "status"}, reply_timeout=10.0)
        status = None if reply.get("RuntimeUnavailable") else reply
        if status != last:
            last = status
            yield status
        stop.wait(RECONNECT_SECONDS if status is None else POLL_SECONDS)


def status_updates(paths: LidGuardPaths, stop: threading.Event) -> Iterator[dict[str, Any] | None]:
    watch = _watch_source()
    if watch is None:
        return _poll(paths, stop)
    return watch(paths, stop=stop, reconnect_seconds=RECONNECT_SECONDS, start_runtime=False)
