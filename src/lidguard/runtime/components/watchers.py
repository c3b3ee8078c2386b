"""Process-exit watchers: a watched agent process that exits stops its session (a cancel path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ...platform.api import Unsupported
from .. import policy
from ..sessions import SessionKey
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["WatcherComponent"]


class WatcherComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._watchers: dict[SessionKey, anyio.CancelScope] = {}

    def handles(self) -> tuple[type, ...]:
        return (policy.WatchProcess, policy.UnwatchProcess)

    def apply(self, effect: policy.Effect) -> None:
        if isinstance(effect, policy.WatchProcess):
            self._start(effect.key, effect.pid)
        elif isinstance(effect, policy.UnwatchProcess):
            self._cancel(effect.key)

    def _cancel(self, key: SessionKey) -> None:
        scope = self._watchers.pop(key, None)
        if scope is not None:
            scope.cancel()

    def _start(self, key: SessionKey, pid: int) -> None:
        self._cancel(key)
        runtime = self._runtime
        if not runtime.running:
            return

        async def watch(scope: anyio.CancelScope) -> None:
            try:
                await runtime.platform.process.wait_for_exit(pid)
            except Unsupported as error:
                runtime.log("watched-process-unsupported", "watched-process-exited", str(error), succeeded=False)
                return
            except (OSError, ValueError, OverflowError) as error:
                runtime.log("watched-process-unsupported", "watched-process-exited",
                            f"Cannot watch process {pid}: {error}", succeeded=False)
                return

            def still_watched() -> bool:
                session = runtime.state.sessions.get(key)
                if session is None or session.watched_process_identifier != pid:
                    return False
                if self._watchers.get(key) is scope:
                    del self._watchers[key]  # the stop's UnwatchProcess must not cancel this task
                runtime.log("watched-process-exited", "watched-process-exited",
                            f"Watched process {pid} of {key} exited.", session=session)
                return True

            await runtime.run_event(policy.Stop(key, end_reason="watched-process-exited", cancel_path=True,
                                                command="watched-process-exited"), guard=still_watched)

        self._watchers[key] = runtime.spawn(watch)
