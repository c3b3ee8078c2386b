"""The heartbeat the watchdog (``runtime/watchdog.py``) watches, and the launch of that watchdog.

While protection is wanted or held, a background task refreshes the mtime of ``runtime.heartbeat``
in the data folder every 30 s (``LIDGUARD_HEARTBEAT_SECONDS`` in tests) and removes the file once
the runtime owns nothing, so an idle runtime is never taken for a hung one. The first time it beats,
it launches the watchdog through ``launch_watchdog`` (set by ``startup.py`` for a real runtime; None
in tests that build a Runtime directly, and with ``LIDGUARD_WATCHDOG=off``): one per runtime.

Protection never depends on the file: a heartbeat that cannot be written (a folder or FIFO there, a
full disk) is logged once and the runtime carries on (the watchdog then never acts on it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from ... import switches
from ..watchdog import HEARTBEAT_FILE_NAME
from . import ComponentBase

if TYPE_CHECKING:
    from pathlib import Path

    from ..app import Runtime

__all__ = ["HeartbeatComponent", "heartbeat_interval"]


def heartbeat_interval() -> float:
    try:
        return switches.heartbeat_seconds()
    except switches.SwitchError:
        return switches.HEARTBEAT_SECONDS


class HeartbeatComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.interval = heartbeat_interval()
        self.launch_watchdog: Callable[[], None] | None = None
        self.watchdog_launched = False
        self.beats = 0
        self.failures = 0
        self._scope: anyio.CancelScope | None = None

    @property
    def path(self) -> Path:
        return self._runtime.paths.data_dir / HEARTBEAT_FILE_NAME

    def _owns(self) -> bool:
        runtime = self._runtime
        return runtime.protection.applied or runtime.protection_wanted()

    def state_changed(self) -> None:
        if self._scope is None and self._runtime.running and self._owns():
            self._scope = self._runtime.spawn(self._beat)

    async def _beat(self, scope: anyio.CancelScope) -> None:
        try:
            while self._owns():
                self._touch()
                if not self.watchdog_launched and self.launch_watchdog is not None:
                    self.watchdog_launched = True  # once per runtime, even when the launch failed
                    await self._launch(self.launch_watchdog)
                await anyio.sleep(self.interval)
        finally:
            self._scope = None
            with contextlib.suppress(OSError, ValueError):
                os.unlink(self.path)

    async def _launch(self, launch: Callable[[], None]) -> None:
        try:
            await self._runtime.call_platform(launch)  # a worker thread with a real backend
            self._runtime.log("watchdog-started", "heartbeat",
                              "Started the watchdog: it ends this runtime if its heartbeat stops.")
        except Exception as error:  # no watchdog: the runtime still protects
            self._runtime.exception_log.record("watchdog-launch-failed", error)
            self._runtime.log("watchdog-launch-failed", "heartbeat", f"Could not start the watchdog: {error}",
                              succeeded=False)

    def _touch(self) -> None:
        flags = (os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))
        try:
            fd = os.open(self.path, flags, 0o600)
            try:
                if os.utime in os.supports_fd:
                    os.utime(fd)
                else:
                    os.utime(self.path)
            finally:
                os.close(fd)
            self.beats += 1
        except (OSError, ValueError) as error:
            self.failures += 1
            if self.failures == 1:
                self._runtime.log("heartbeat-write-failed", "heartbeat",
                                  f"Cannot refresh the heartbeat {self.path}: {error}; the watchdog will not act.",
                                  succeeded=False)
