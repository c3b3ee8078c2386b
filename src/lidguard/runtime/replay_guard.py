"""Replay-safe events: each hook request id is applied once, and no event comes from the future.

Hooks give every request an id (``RequestId``) and the time they sent it (``SentAtUnixMilliseconds``).
The runtime remembers the last ``RECENT_REQUEST_IDS`` ids of requests that change sessions (bounded
memory; journaled with the registry, so a runtime that restarts remembers them too): a request whose
id was already applied is answered without being applied again. A request sent more than
``FUTURE_TOLERANCE`` after the runtime's now is refused (a wrong clock or a forged event must not
move a session's timestamps into the future, where no timeout would ever reach it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

__all__ = ["FUTURE_TOLERANCE", "RECENT_REQUEST_IDS", "SESSION_COMMANDS", "RecentRequests", "future_dated",
           "sent_at"]

RECENT_REQUEST_IDS = 4096
FUTURE_TOLERANCE = timedelta(minutes=5)
SESSION_COMMANDS = frozenset({"start", "stop", "mark-session-active", "mark-session-softlocked", "remove-session"})


class RecentRequests:
    """The ids of the latest applied requests, oldest first, at most ``limit``."""

    def __init__(self, limit: int = RECENT_REQUEST_IDS) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, request_id: str) -> None:
        self._ids[request_id] = None
        self._ids.move_to_end(request_id)
        while len(self._ids) > self.limit:
            self._ids.popitem(last=False)

    def discard(self, request_id: str) -> None:
        self._ids.pop(request_id, None)

    def extend(self, request_ids: Iterable[object]) -> None:
        for request_id in request_ids:
            if isinstance(request_id, str) and request_id:
                self.add(request_id)

    def latest(self) -> list[str]:
        return list(self._ids)


def sent_at(milliseconds: int | None) -> datetime | None:
    if milliseconds is None:
        return None
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=milliseconds)


def future_dated(milliseconds: int | None, now: datetime) -> bool:
    moment = sent_at(milliseconds)
    return moment is not None and moment - now > FUTURE_TOLERANCE
