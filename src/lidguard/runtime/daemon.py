"""The runtime: owns the session registry, protection, timers, watchers and the suspend flow.

Every request and every background step runs under one gate (an ``anyio.Lock``), so the pure
policy sees one event at a time. Background work lives in the task group handed to ``run``;
timers and the pending suspend are cancel scopes replaced when rescheduled.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from ..platform.api import DisplayConnector, LidState, Platform, Unsupported, count_visible_displays
from ..platform.paths import LidGuardPaths
from ..settings.model import Settings
from . import policy
from .logs import ExceptionLog, SessionLog, SuspendHistory
from .protection import ProtectionCoordinator
from .requests import RequestError, RuntimeRequest, parse_request
from .responses import build_response
from .sessions import RegistryState, SessionKey
from .suspend_flow import SuspendFlow

__all__ = ["Runtime", "RuntimeClock"]

logger = logging.getLogger(__name__)
T = TypeVar("T")
BOOT_GRACE_SECONDS = 30.0


class RuntimeClock:
    """Wall-clock UTC derived from anyio's clock, so trio's MockClock drives both alike."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start_wall = start or datetime.now(timezone.utc)
        self._start_monotonic: float | None = None

    def now(self) -> datetime:
        current = anyio.current_time()
        if self._start_monotonic is None:
            self._start_monotonic = current
        return self._start_wall + timedelta(seconds=current - self._start_monotonic)

    async def sleep_until(self, deadline: datetime) -> None:
        await anyio.sleep(max(0.0, (deadline - self.now()).total_seconds()))


class Runtime:
    def __init__(self, *, platform: Platform, paths: LidGuardPaths, settings: Settings,
                 clock: RuntimeClock | None = None) -> None:
        self.platform = platform
        self.paths = paths
        self.settings = settings
        self.clock = clock or RuntimeClock()
        self.state = RegistryState()
        self.gate = anyio.Lock()
        self.exit_requested = anyio.Event()
        self.session_log = SessionLog(paths.session_log_file)
        self.suspend_history = SuspendHistory(paths.suspend_history_file)
        self.exception_log = ExceptionLog(paths.exception_log_file)
        self.protection = ProtectionCoordinator(platform, paths.lid_backup_file, self._log_protection_failure)
        self.suspend_flow = SuspendFlow(self)
        self._task_group: TaskGroup | None = None
        self._timeout_scope: anyio.CancelScope | None = None
        self._cleanup_scope: anyio.CancelScope | None = None
        self._watchers: dict[SessionKey, anyio.CancelScope] = {}
        # The fake platform answers instantly; real backends block and go to a worker thread.
        self._offload = platform.name != "fake"

    # -- plumbing ---------------------------------------------------------------------------------
    async def call_platform(self, function: Callable[..., T], *args: Any) -> T:
        if self._offload:
            return await anyio.to_thread.run_sync(function, *args)
        return function(*args)

    def spawn(self, function: Callable[[anyio.CancelScope], Awaitable[None]]) -> anyio.CancelScope:
        """Starts a background task in its own cancel scope and returns that scope."""
        assert self._task_group is not None, "runtime is not running"
        scope = anyio.CancelScope()

        async def runner() -> None:
            with scope:
                try:
                    await function(scope)
                except Exception as error:  # a background failure must not kill the runtime
                    self.exception_log.record("background-task-failed", error)
                    logger.exception("background task failed")

        self._task_group.start_soon(runner)
        return scope

    def log(self, event_name: str, command: str, message: str, *, succeeded: bool = True,
            session: Any = None, stop: policy.Stop | None = None, key: SessionKey | None = None,
            extra: dict[str, Any] | None = None) -> None:
        self.session_log.append(
            event_name=event_name, command=command, message=message, succeeded=succeeded, session=session,
            key=key or (stop.key if stop else None),
            now=self.clock.now(), active_session_count=len(self.state.sessions),
            provider_session_end=stop.provider_session_end if stop else None,
            session_end_reason=(stop.end_reason or None) if stop else None, extra=extra,
        )

    def _log_protection_failure(self, event_name: str, message: str) -> None:
        self.log(event_name, "protection", message, succeeded=False)

    async def read_lid_state(self) -> LidState:
        try:
            return await self.call_platform(self.platform.lid.read_lid_state)
        except (Unsupported, OSError):
            return LidState.UNKNOWN

    async def read_displays(self) -> list[DisplayConnector] | None:
        try:
            return await self.call_platform(self.platform.display.list_connected_displays)
        except (Unsupported, OSError):
            return None

    # -- lifecycle --------------------------------------------------------------------------------
    async def run(self, task_group: TaskGroup) -> None:
        """Binds the runtime to a task group; the caller owns the group and the exit."""
        self._task_group = task_group
        # A fresh runtime waits for its first request even when the cleanup delay is off.
        self.reevaluate_cleanup(minimum_seconds=BOOT_GRACE_SECONDS)

    async def shutdown(self) -> None:
        """Releases protection; shielded so a cancelled runtime still cleans up."""
        with anyio.CancelScope(shield=True):
            async with self.gate:
                self.suspend_flow.cancel("runtime-exiting")
                await self._release_protection()
            self.platform.close()

    # -- requests ---------------------------------------------------------------------------------
    async def handle_message(self, message: dict[str, Any]) -> dict[str, Any]:
        command = str(message.get("Command", "")).strip().lower()
        if command not in _HANDLERS:
            return await self.respond(False, f"Unsupported command: {message.get('Command')}")
        try:
            request = parse_request(message)
            async with self.gate:
                return await _HANDLERS[command](self, request)
        except RequestError as error:
            return await self.respond(False, str(error))

    async def respond(self, succeeded: bool, message: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        lid = await self.read_lid_state()
        displays = await self.read_displays()
        count = count_visible_displays(displays, exclude_internal=False) if displays is not None else 0
        return build_response(succeeded=succeeded, message=message, state=self.state, settings=self.settings,
                              lid_state=lid, visible_display_count=count, extra=extra)

    async def apply_event(self, event: policy.Event) -> policy.Outcome:
        """Runs one policy transition and applies its effects (caller holds the gate)."""
        before = self.state
        outcome = policy.transition(self.state, event, self.clock.now())
        self.state = outcome.state
        for effect in outcome.effects:
            await self._apply_effect(effect)
        try:
            await self.sync_protection()
        except Exception as error:
            if isinstance(event, policy.Start) and outcome.succeeded:
                self.state = before  # a session whose protection failed is rolled back
                self._cancel_watch(event.key)
                message = f"Failed to apply protection for {event.key}: {error}"
                self.log("session-start-failed", "start", message, succeeded=False)
                return policy.Outcome(before, False, message)
            self.exception_log.record("protection-sync-failed", error)
            self.log("protection-sync-failed", "protection", f"Protection change failed: {error}", succeeded=False)
        self.reschedule_timeout()
        self.reevaluate_cleanup()
        return outcome

    async def _apply_effect(self, effect: policy.Effect) -> None:
        if isinstance(effect, policy.LogEvent):
            self.log(effect.event_name, effect.command, effect.message, succeeded=effect.succeeded,
                     session=effect.session, stop=effect.stop, key=effect.key)
        elif isinstance(effect, policy.CancelPendingSuspend):
            self.suspend_flow.cancel(effect.reason)
        elif isinstance(effect, policy.WatchProcess):
            self._start_watch(effect.key, effect.pid)
        elif isinstance(effect, policy.UnwatchProcess):
            self._cancel_watch(effect.key)
        elif isinstance(effect, policy.EvaluateSuspend):
            await self.suspend_flow.evaluate(effect)
        # policy.SessionEnded carries what session-end notifications (webhooks) need; the stop itself
        # is already logged, and no notifier is configured in this build.

    # -- protection -------------------------------------------------------------------------------
    async def sync_protection(self) -> None:
        """Protection is held while a session works or a suspend is pending (released right before it)."""
        wanted = self.state.protection_wanted or self.suspend_flow.pending is not None
        if wanted and not self.protection.applied:
            await self.call_platform(self.protection.apply, self.settings)
        elif not wanted and self.protection.applied:
            await self._release_protection()

    async def _release_protection(self) -> None:
        try:
            await self.call_platform(self.protection.release)
        except Exception as error:
            self.exception_log.record("protection-release-failed", error)
            self.log("protection-release-failed", "protection", f"Releasing protection failed: {error}",
                     succeeded=False)

    async def update_settings(self, settings: Settings) -> None:
        previous, self.settings = self.settings, settings
        power_changed = (previous.power_request != settings.power_request
                         or previous.change_lid_action != settings.change_lid_action)
        if power_changed and self.protection.applied:
            await self._release_protection()
        await self.sync_protection()
        self.reschedule_timeout()
        if self._cleanup_scope is not None:  # the delay may have changed: schedule afresh
            self._cleanup_scope.cancel()
            self._cleanup_scope = None
        self.reevaluate_cleanup()

    # -- timers -----------------------------------------------------------------------------------
    def reschedule_timeout(self) -> None:
        if self._timeout_scope is not None:
            self._timeout_scope.cancel()
            self._timeout_scope = None
        deadline = policy.next_timeout_deadline(self.state, self.settings.session_timeout_minutes)
        if deadline is None or self._task_group is None:
            return

        async def fire(scope: anyio.CancelScope) -> None:
            await self.clock.sleep_until(deadline)
            async with self.gate:
                if self._timeout_scope is scope:
                    self._timeout_scope = None
                await self.apply_event(policy.TimeoutCheck(self.settings.session_timeout_minutes))

        self._timeout_scope = self.spawn(fire)

    def reevaluate_cleanup(self, *, minimum_seconds: float = 0.0) -> None:
        """Exit once no session and no pending work remain, after the cleanup delay."""
        busy = bool(self.state.sessions) or self.suspend_flow.pending is not None
        if busy:
            if self._cleanup_scope is not None:
                self._cleanup_scope.cancel()
                self._cleanup_scope = None
            return
        if self._cleanup_scope is not None or self._task_group is None:
            return
        minutes = self.settings.server_runtime_cleanup_delay_minutes
        delay_seconds = max(minimum_seconds, (minutes or 0) * 60)
        if delay_seconds <= 0:
            self.log("server-runtime-cleanup-requested", "server-runtime-cleanup",
                     "Requested server runtime cleanup because no active sessions remain.")
            self.exit_requested.set()
            return
        self.log("server-runtime-cleanup-scheduled", "server-runtime-cleanup",
                 f"Scheduled server runtime cleanup in {delay_seconds / 60:g} minute(s).")

        async def fire(scope: anyio.CancelScope) -> None:
            await anyio.sleep(delay_seconds)
            async with self.gate:
                if self.state.sessions or self.suspend_flow.pending is not None:
                    return
                self.log("server-runtime-cleanup-requested", "server-runtime-cleanup",
                         "Requested server runtime cleanup because no active sessions remain.")
                self.exit_requested.set()

        self._cleanup_scope = self.spawn(fire)

    # -- process watching -------------------------------------------------------------------------
    def _start_watch(self, key: SessionKey, pid: int) -> None:
        self._cancel_watch(key)
        if self._task_group is None:
            return

        async def watch(scope: anyio.CancelScope) -> None:
            try:
                await self.platform.process.wait_for_exit(pid)
            except Unsupported as error:
                self.log("watched-process-unsupported", "watched-process-exited", str(error), succeeded=False)
                return
            async with self.gate:
                session = self.state.sessions.get(key)
                if session is None or session.watched_process_identifier != pid:
                    return
                self._watchers.pop(key, None)
                self.log("watched-process-exited", "watched-process-exited",
                         f"Watched process {pid} of {key} exited.", session=session)
                await self.apply_event(policy.Stop(key, end_reason="watched-process-exited", cancel_path=True,
                                                   command="watched-process-exited"))

        self._watchers[key] = self.spawn(watch)

    def _cancel_watch(self, key: SessionKey) -> None:
        scope = self._watchers.pop(key, None)
        if scope is not None:
            scope.cancel()


# -- command handlers (called with the gate held) --------------------------------------------------
async def _handle_start(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    key = request.session_key()
    if request.has_settings and request.settings is not None:
        await runtime.update_settings(request.parsed_settings())
    watched = request.watched_process_identifier or None
    if not runtime.settings.watch_parent_process:
        watched = None
    outcome = await runtime.apply_event(policy.Start(
        key, watched, request.working_directory, request.transcript_path,
        watch_parent_process=runtime.settings.watch_parent_process,
    ))
    return await runtime.respond(outcome.succeeded, outcome.message)


async def _handle_stop(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    outcome = await runtime.apply_event(policy.Stop(
        request.session_key(), provider_session_end=request.is_provider_session_end,
        end_reason=request.session_end_reason, pending_provider_work=request.has_pending_provider_work,
    ))
    return await runtime.respond(outcome.succeeded, outcome.message)


async def _handle_mark_active(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    outcome = await runtime.apply_event(policy.MarkActive(request.session_key(), request.session_state_reason))
    return await runtime.respond(outcome.succeeded, outcome.message)


async def _handle_mark_soft_locked(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    outcome = await runtime.apply_event(policy.MarkSoftLocked(request.session_key(), request.session_state_reason))
    return await runtime.respond(outcome.succeeded, outcome.message)


async def _handle_remove(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    if request.match_all_sessions:
        event = policy.RemoveSessions(match_all=True)
    else:
        if not request.session_identifier.strip():
            raise RequestError("A session identifier is required.")
        provider = request.agent_provider() if request.provider else None
        event = policy.RemoveSessions(request.session_identifier, provider, request.provider_name or None)
    outcome = await runtime.apply_event(event)
    removed = [f"{session.key}" for session in outcome.removed]
    return await runtime.respond(outcome.succeeded, outcome.message, {"RemovedSessions": removed})


async def _handle_status(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    return await runtime.respond(True, "LidGuard runtime is running.")


async def _handle_cleanup_orphans(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    cleaned = 0
    for session in list(runtime.state.sorted_sessions()):
        pid = session.watched_process_identifier
        if not pid:
            continue
        try:
            alive = await runtime.call_platform(runtime.platform.process.is_alive, pid)
        except Unsupported:
            continue
        if alive or session.key not in runtime.state.sessions:
            continue
        runtime.log("orphan-session-cleaned", "cleanup-orphans",
                    f"Cleaned {session.key} because process {pid} is gone.", session=session)
        await runtime.apply_event(policy.Stop(session.key, end_reason="cleanup-orphans", cancel_path=True,
                                              command="cleanup-orphans"))
        cleaned += 1
    message = f"Cleaned {cleaned} orphan session(s)."
    runtime.log("cleanup-orphans-completed", "cleanup-orphans", message)
    return await runtime.respond(True, message, {"CleanedSessionCount": cleaned})


async def _handle_settings(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    settings = request.parsed_settings()
    await runtime.update_settings(settings)
    runtime.log("settings-updated", "settings", "Runtime settings updated.")
    return await runtime.respond(True, "Runtime settings updated.")


_HANDLERS: dict[str, Callable[[Runtime, RuntimeRequest], Awaitable[dict[str, Any]]]] = {
    "start": _handle_start,
    "stop": _handle_stop,
    "mark-session-active": _handle_mark_active,
    "mark-session-softlocked": _handle_mark_soft_locked,
    "remove-session": _handle_remove,
    "status": _handle_status,
    "cleanup-orphans": _handle_cleanup_orphans,
    "settings": _handle_settings,
}
