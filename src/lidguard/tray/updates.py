"""Where the tray's status comes from: the runtime's ``watch`` stream (``ipc.watch.watch_status``).

``status_updates`` yields each status dict (the body of a ``status`` reply, plus ``Watch`` and
``Sequence``) as the runtime pushes its changes, and ``None`` once while the runtime is unreachable
(then it looks again every ``RECONNECT_SECONDS``; the tray never starts the runtime by itself),
until ``stop`` is set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from ..ipc.watch import watch_status
from ..platform.paths import LidGuardPaths

__all__ = ["RECONNECT_SECONDS", "status_updates"]

RECONNECT_SECONDS = 5.0


def status_updates(paths: LidGuardPaths, stop: threading.Event) -> Iterator[dict[str, Any] | None]:
    return watch_status(paths, stop=stop, reconnect_seconds=RECONNECT_SECONDS, start_runtime=False)
