"""The ``watch`` command's state stream: every watcher gets the status reply again when it changes.

``state_changed`` (gate held, after every event) only marks the state dirty and wakes the publisher;
nothing is built on the request path. The publisher (one background task, alive while someone
watches) builds the status reply, and when its bytes differ from the last line sent it numbers it
(``Sequence``, increasing for the runtime's life) and hands it to every watcher. Lines go out at
most once per ``COALESCE_SECONDS``: a burst of changes becomes one line with the newest state. The
publisher also looks again every ``RECHECK_SECONDS`` for what no event announces (the lid state:
the machine snapshot is refreshed the way a request refreshes it, ``MachineView.cached``).

Each watcher holds at most one line, the newest: a slow reader never queues anything and never
slows the runtime; it skips the states it was too slow for (the connection task sends, see
``runtime/watch_stream.py``). At most ``MAX_WATCHERS`` watch at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from ..responses import encode_reply
from . import ComponentBase

if TYPE_CHECKING:
    from ...settings.model import Settings
    from ..app import Runtime

__all__ = ["COALESCE_SECONDS", "MAX_WATCHERS", "RECHECK_SECONDS", "StatusStreamComponent", "Watcher",
           "status_body", "status_extra"]

MAX_WATCHERS = 16
COALESCE_SECONDS = 0.15
RECHECK_SECONDS = 25.0
RUNNING_MESSAGE = "LidGuard runtime is running."


def status_extra(runtime: Runtime) -> dict[str, Any]:
    """What the ``status`` reply adds: the journal's state and, on the fake platform (which protects
    nothing), ``FakePlatform`` naming the switch that chose it."""
    extra: dict[str, Any] = {"SessionJournal": runtime.journal.describe()}
    failure = runtime.start_failures.describe()
    if failure is not None:  # the last start whose protection failed (issue 33.6)
        extra["LastStartFailure"] = failure
    if getattr(runtime.platform, "name", "") == "fake":
        from ... import switches

        extra["FakePlatform"] = switches.fake_platform_reason() or "chosen by the caller"
    return extra


def status_body(runtime: Runtime) -> dict[str, Any]:
    """The ``status`` reply (``handlers.handle_status`` answers the same)."""
    return runtime.reply(True, RUNNING_MESSAGE, status_extra(runtime), list_sessions=True)


class Watcher:
    """One watch connection's mailbox: the newest line not yet taken (older ones are replaced)."""

    __slots__ = ("_line", "_ready")

    def __init__(self) -> None:
        self._line: bytes | None = None
        self._ready = anyio.Event()

    def offer(self, line: bytes) -> None:
        self._line = line
        self._ready.set()

    @property
    def pending(self) -> bytes | None:
        return self._line

    async def take(self) -> bytes:
        while self._line is None:
            await self._ready.wait()
            if self._line is None:
                self._ready = anyio.Event()
        line, self._line = self._line, None
        self._ready = anyio.Event()
        return line


class StatusStreamComponent(ComponentBase):
    def __init__(self, runtime: Runtime, *, max_watchers: int = MAX_WATCHERS) -> None:
        self._runtime = runtime
        self.max_watchers = max_watchers
        self._watchers: dict[Watcher, None] = {}
        self._wake: anyio.Event | None = None
        self._publisher: anyio.CancelScope | None = None
        self._last_body: bytes | None = None
        self._last_line = b""
        self.sequence = 0
        self.lines_built = 0  # how many status lines were numbered (tests: coalescing)

    # -- the component question: one cheap mark per event ------------------------------------------------
    def state_changed(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def settings_changed(self, old: Settings, new: Settings) -> None:
        self.state_changed()  # replies carry the settings: the tray's toggles follow at once

    # -- watchers -----------------------------------------------------------------------------------------
    @property
    def watcher_count(self) -> int:
        return len(self._watchers)

    def open(self) -> Watcher | None:
        """A new watcher holding the current state (sent at once), or None at the cap."""
        if len(self._watchers) >= self.max_watchers:
            return None
        watcher = Watcher()
        self._watchers[watcher] = None
        if not self._publish():  # unchanged since the last line: only the newcomer needs it
            watcher.offer(self._last_line)
        if self._publisher is None:
            self._wake = anyio.Event()
            self._publisher = self._runtime.spawn(self._run)
        return watcher

    def close(self, watcher: Watcher) -> None:
        self._watchers.pop(watcher, None)
        if not self._watchers and self._wake is not None:
            self._wake.set()  # the publisher sees nobody is left and ends

    def keepalive_line(self) -> bytes:
        return encode_reply({"v": 1, "Succeeded": True, "Watch": True, "KeepAlive": True,
                             "Sequence": self.sequence})

    # -- publishing ------------------------------------------------------------------------------------
    def _publish(self) -> bool:
        """Builds the status line; hands it to every watcher when it changed. True when it did."""
        body = encode_reply(status_body(self._runtime))
        if body == self._last_body:
            return False
        self._last_body = body
        self.sequence += 1
        self.lines_built += 1
        # The body ends with "}\n": the watch fields go in before the closing brace.
        self._last_line = body[:-2] + b',"Watch":true,"Sequence":' + str(self.sequence).encode() + b"}\n"
        for watcher in self._watchers:
            watcher.offer(self._last_line)
        return True

    async def _run(self, scope: anyio.CancelScope) -> None:
        try:
            while self._watchers:
                assert self._wake is not None
                with anyio.move_on_after(RECHECK_SECONDS):
                    await self._wake.wait()
                self._wake = anyio.Event()
                if not self._watchers:
                    break
                await self._runtime.machine.cached()  # the lid and displays as a status request sees them
                self._publish()
                await anyio.sleep(COALESCE_SECONDS)  # changes meanwhile wake the next round: one line for all
        finally:
            self._publisher = None
            self._wake = None
