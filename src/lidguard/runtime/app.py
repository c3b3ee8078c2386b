"""The runtime: the session registry, the gate, the clock and the list of components.

One event at a time under the gate (``gate.Gate``: almost always free, and then free to take):
``policy.transition`` produces the new state and effects, each effect goes to the component that owns
it (``components/``), then every component hears ``state_changed``. Nothing under the gate awaits:
slow platform calls (protection, machine readings, sound, the suspend request) run off it, and
``protection.reconcile()`` runs after the gate is released. Background work lives in the task group handed to ``run``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from ..ipc.platform_match import platform_fields, runtime_refusal
from ..ipc.protocol import RUNTIME_STOPPING_MESSAGE, failure_response
from ..platform.api import Platform
from ..platform.paths import LidGuardPaths
from ..settings.model import Settings
from . import policy, suspend_policy
from .clock import STEP_BACK_TOLERANCE_SECONDS, Clock, StepBackDetector, WallClock
from .components import Component, ComponentBase
from .components.blocked_suspend import BlockedSuspendComponent
from .components.codex_rollouts import CodexRolloutComponent
from .components.dimming import DimmingComponent
from .components.emergency import EmergencyComponent
from .components.followup import FollowUpComponent
from .components.heartbeat import HeartbeatComponent
from .components.journal import JournalComponent
from .components.leases import LeaseComponent
from .components.pause import PauseComponent
from .components.power_policy import PowerPolicyComponent
from .components.protection import ProtectionComponent
from .components.settings_guard import SettingsGuardComponent
from .components.start_failures import StartFailureComponent
from .components.status_stream import StatusStreamComponent
from .components.suspend import SuspendComponent
from .components.timers import TimerComponent
from .components.transcripts import TranscriptComponent
from .components.watchers import WatcherComponent
from .components.webhooks import WebhookComponent
from .gate import Gate
from .handlers import HANDLERS
from .logs import ExceptionLog, SessionLog, SuspendHistory
from .machine import MachineView
from .replay_guard import SESSION_COMMANDS, RecentRequests, future_dated
from .requests import RequestError, RuntimeRequest, parse_request
from .responses import build_response, without_sessions
from .sessions import RegistryState, SessionKey
from .turns import with_turn_starts_at_most, with_turns_shifted

if TYPE_CHECKING:
    import httpx  # the webhook and follow-up senders import it when they first send (not at start)

__all__ = ["Runtime"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

# False while a request with ``"ReplySessions": false`` is handled (set in ``Runtime.handle_message``)
_LIST_SESSIONS: ContextVar[bool] = ContextVar("lidguard_list_sessions", default=True)
SNAPSHOT_MAX_AGE_SECONDS = 2.0  # replies from real backends may show a lid state this old


def _answers(component: Component, question: str) -> bool:
    """True unless ``component`` keeps ``ComponentBase``'s no-opinion answer to ``question``."""
    return (getattr(type(component), question, None) is not getattr(ComponentBase, question)
            or question in getattr(component, "__dict__", {}))


def _printable(value: Any, limit: int = 200) -> str:
    """Text safe to put in a reply or a log line whatever it holds (lone surrogates, huge values)."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


class Runtime:
    def __init__(self, *, platform: Platform, paths: LidGuardPaths, settings: Settings,
                 clock: Clock | None = None, offload_platform_calls: bool | None = None,
                 webhook_transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.platform = platform
        self.paths = paths
        self.settings = settings
        self.clock: Clock = clock or WallClock()
        self.state = RegistryState()
        self._clock_steps = StepBackDetector()
        self.recent_requests = RecentRequests()
        self.gate = Gate()
        self.exit_requested = anyio.Event()
        self.session_log = SessionLog(paths.session_log_file)
        self.suspend_history = SuspendHistory(paths.suspend_history_file)
        self.exception_log = ExceptionLog(paths.exception_log_file)
        # Real backends block and go to a worker thread; the fake answers instantly (tests may still offload).
        self.offload = platform.name != "fake" if offload_platform_calls is None else offload_platform_calls
        self.platform_fields = platform_fields(platform.name)  # in every reply (issue 33.1)
        self.machine = MachineView(platform, self.call_platform,
                                   max_age_seconds=SNAPSHOT_MAX_AGE_SECONDS if self.offload else 0.0,
                                   on_error=self.exception_log.record, instant=not self.offload,
                                   spawn=self._spawn_job)
        self.protection = ProtectionComponent(self)
        self.webhooks = WebhookComponent(self, webhook_transport)
        self.suspend = SuspendComponent(self)
        self.blocked = BlockedSuspendComponent(self)
        self.emergency = EmergencyComponent(self)
        self.watchers = WatcherComponent(self)
        self.timers = TimerComponent(self)
        self.journal = JournalComponent(self)
        self.heartbeat = HeartbeatComponent(self)
        self.pause = PauseComponent(self)
        self.settings_guard = SettingsGuardComponent(self)
        self.status_stream = StatusStreamComponent(self)
        self.dimming = DimmingComponent(self)
        self.start_failures = StartFailureComponent(self)  # LastStartFailure; an early exit (issue 33.6)
        # The timers come last: their cleanup asks every other component whether it is busy.
        self.components: list[Component] = [self.protection, self.webhooks, self.suspend, self.blocked,
                                             self.emergency,
                                             FollowUpComponent(self, webhook_transport),
                                             self.watchers, TranscriptComponent(self), PowerPolicyComponent(self),
                                             LeaseComponent(self), CodexRolloutComponent(self), self.journal,
                                             self.heartbeat, self.pause, self.settings_guard, self.dimming,
                                             self.status_stream,
                                             self.timers]
        # Each question is put only to the components that have an answer of their own (the others say what
        # ComponentBase says: no protection wanted, not busy, nothing held back, nothing to do on a change).
        self._answering = {question: tuple(component for component in self.components
                                           if _answers(component, question))
                           for question in ("wants_protection", "busy", "holds_back_protection",
                                            "holds_back_suspend", "state_changed")}
        self._owners: dict[type, list[Component]] = {}
        for component in self.components:
            for effect_type in component.handles():
                self._owners.setdefault(effect_type, []).append(component)
        self._task_group: TaskGroup | None = None
        self.stopping = False

    # -- plumbing -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._task_group is not None

    async def call_platform(self, function: Callable[..., T], *args: Any) -> T:
        if self.offload:
            return await anyio.to_thread.run_sync(function, *args)
        return function(*args)

    def spawn(self, function: Callable[[anyio.CancelScope], Awaitable[None]]) -> anyio.CancelScope:
        """Starts a background task in its own cancel scope and returns that scope."""
        assert self._task_group is not None, "runtime is not running"
        scope = anyio.CancelScope()

        async def runner() -> None:
            _LIST_SESSIONS.set(True)  # a task started while a request is handled answers nobody's request
            with scope:
                try:
                    await function(scope)
                except Exception as error:  # a background failure must not kill the runtime
                    self.exception_log.record("background-task-failed", error)
                    logger.exception("background task failed")

        self._task_group.start_soon(runner)
        return scope

    def _spawn_job(self, job: Callable[[], Awaitable[None]]) -> bool:
        """``spawn`` for a job that needs no scope; False (nothing started) while the runtime does not run."""
        if self._task_group is None:
            return False
        self.spawn(lambda scope: job())
        return True

    def log(self, event_name: str, command: str, message: str, *, succeeded: bool = True,
            session: Any = None, stop: policy.Stop | None = None, key: SessionKey | None = None,
            extra: dict[str, Any] | None = None) -> None:
        """Appends to the session log; works before the event loop exists and never raises."""
        try:
            self.session_log.append(
                event_name=event_name, command=command, message=message, succeeded=succeeded, session=session,
                key=key or (stop.key if stop else None),
                now=self.clock.now(), active_session_count=len(self.state.sessions),
                provider_session_end=stop.provider_session_end if stop else None,
                session_end_reason=(stop.end_reason or None) if stop else None, extra=extra,
            )
        except Exception as error:
            self.exception_log.record("session-log-write-failed", error)

    # -- the questions every component answers ----------------------------------------------------------
    def protection_wanted(self) -> bool:
        if self.stopping:
            return False
        return self.state.protection_wanted or any(c.wants_protection() for c in self._answering["wants_protection"])

    def busy(self) -> bool:
        return bool(self.state.sessions) or any(c.busy() for c in self._answering["busy"])

    def answering(self, question: str) -> tuple[Component, ...]:
        """The components with an answer of their own to ``question`` (a ``ComponentBase`` method name)."""
        return self._answering[question]

    # -- lifecycle --------------------------------------------------------------------------------------
    async def run(self, task_group: TaskGroup) -> None:
        """Binds the runtime to a task group and replays the session journal (before any request is
        accepted: the server calls this first); the caller owns the group and the exit."""
        self._task_group = task_group
        self.timers.started()  # first: the boot grace stands unless replayed sessions make the runtime busy
        await self.journal.replay()
        self._follow_a_step_while_down(self.clock.now())
        await self.protection.reconcile()

    async def begin_shutdown(self, reason: str) -> None:
        """Stops wanting protection, releases it and asks the server to exit."""
        async with self.gate:
            self.stopping = True
            self.suspend.cancel(reason, fallback=False)
            self.state_changed()
        await self.protection.reconcile()
        self.exit_requested.set()

    async def shutdown(self) -> None:
        """Releases protection; shielded so a cancelled runtime still cleans up."""
        with anyio.CancelScope(shield=True):
            async with self.gate:
                self.stopping = True
                self.suspend.cancel("runtime-exiting", fallback=False)
            await self.protection.release_all()
            self.journal.closed()
            await self.webhooks.close()
            self.platform.close()

    # -- events -----------------------------------------------------------------------------------------
    def apply_event(self, event: policy.Event) -> policy.Outcome:
        """Runs one policy transition and hands out its effects (gate held; never awaits)."""
        now = self.clock.now()
        self._follow_clock_steps(now)
        outcome = policy.transition(self.state, event, now)
        self.state = outcome.state
        self.apply_effects(outcome.effects)
        self.state_changed()
        return outcome

    def _follow_clock_steps(self, now: datetime) -> None:
        """A wall clock stepped back since the last event moves every turn's start back with it (turns.py)."""
        try:
            monotonic = anyio.current_time()
        except RuntimeError:  # no event loop (yet): nothing to compare with
            return
        back = self._clock_steps.observe(now, monotonic)
        if back and self.state.sessions:
            self.state = with_turns_shifted(self.state, timedelta(seconds=back))
            self.log("clock-stepped-back", "runtime", f"The wall clock stepped back {back:.3f} s: every turn's "
                     "start moved back with it, so no event is taken for an older turn's.")

    def _follow_a_step_while_down(self, now: datetime) -> None:
        """A wall clock stepped back while no runtime ran (no monotonic look spans it): a replayed turn that
        started "in the future" is the sign. Such a turn starts now instead, so no event of it is taken for an
        older turn's (clamped, never shifted: a record from a wildly wrong clock cannot overflow a date)."""
        ahead = [session for session in self.state.sessions.values()
                 if session.turn_started_at is not None
                 and (session.turn_started_at - now).total_seconds() > STEP_BACK_TOLERANCE_SECONDS]
        if ahead:
            self.state = with_turn_starts_at_most(self.state, now)
            self.log("clock-stepped-back", "runtime", f"{len(ahead)} replayed turn(s) started after now (the "
                     "wall clock stepped back while no runtime ran): they start now instead.")

    def apply_effects(self, effects: list[policy.Effect]) -> None:
        for effect in effects:
            if isinstance(effect, policy.LogEvent):
                self.log(effect.event_name, effect.command, effect.message, succeeded=effect.succeeded,
                         session=effect.session, stop=effect.stop, key=effect.key)
                continue
            for component in self._owners.get(type(effect), ()):
                component.apply(effect)

    def state_changed(self) -> None:
        for component in self._answering["state_changed"]:
            component.state_changed()

    def status_changed(self) -> None:
        """Something only the status reply shows changed (no registry change): wake the watchers."""
        self.status_stream.state_changed()

    def update_settings(self, settings: Settings) -> bool:
        """Gate held. Returns False when nothing changed; ``protection.reconcile()`` applies the rest."""
        previous = self.settings
        if settings == previous:
            return False
        self.settings = settings
        for component in self.components:
            component.settings_changed(previous, settings)
        return True

    async def run_event(self, event: policy.Event, *,
                        guard: Callable[[], bool] | None = None) -> policy.Outcome | None:
        """Reads the machine afresh when the event may schedule a suspend, applies the event under the
        gate (unless ``guard``, checked under the gate, says no), then reconciles protection."""
        if suspend_policy.may_trigger_suspend(event):
            await self.machine.for_decision()
        async with self.gate:
            if guard is not None and not guard():
                return None
            outcome = self.apply_event(event)
        await self.protection.reconcile()
        return outcome

    # -- requests ---------------------------------------------------------------------------------------
    async def handle_message(self, message: dict[str, Any], *, wire_checked: bool = False) -> dict[str, Any]:
        """One request -> one reply. Never raises: any failure becomes a failure reply. A request with
        ``"ReplySessions": false`` (hooks: they never read the list) gets the sessions counted, not listed.
        ``wire_checked``: the caller ran ``requests.check_wire_message`` on ``message`` (the server does)."""
        brief = message.get("ReplySessions") is False
        token = _LIST_SESSIONS.set(not brief)  # ``reply()`` skips ordering and encoding the list
        try:
            try:
                reply = await self._handle(message, wire_checked)
                await self.journal.sync()  # the reply leaves once its change is written (issue 39)
            except Exception as error:
                self.exception_log.record("request-failed", error)
                text = f"The runtime failed to handle the request: {_printable(str(error))}"
                try:
                    reply = self.reply(False, text)
                except Exception:
                    return failure_response(text)
        finally:
            _LIST_SESSIONS.reset(token)
        return without_sessions(reply) if brief else reply

    async def _handle(self, message: dict[str, Any], wire_checked: bool) -> dict[str, Any]:
        raw = message.get("Command", "")
        command = raw.strip().lower() if isinstance(raw, str) else ""
        handler = HANDLERS.get(command)
        if handler is None:
            return self.reply(False, f"Unsupported command: {_printable(raw)}")
        await self.machine.cached()
        mismatch = runtime_refusal(self.platform_fields, message.get("ClientPlatform"))
        if mismatch is not None:  # a demo never talks to real use: nothing applied
            return self.reply(False, mismatch, {"PlatformMismatch": True})
        if self.stopping and command == "start":  # stops and status are still answered while it exits
            return self.reply(False, RUNTIME_STOPPING_MESSAGE, {"RuntimeStopping": True})
        if command == "start" and message.get("HasSettings") and not isinstance(message.get("Settings"), dict):
            # Settings that are not even an object must not keep the session from starting (protection first).
            self.log("settings-update-rejected", "start",
                     "Kept the current settings because the settings sent with start are not a JSON object.",
                     succeeded=False)
            message = {**message, "HasSettings": False, "Settings": None}
        try:
            request = parse_request(message, wire_checked=wire_checked)
        except RequestError as error:
            return self.reply(False, str(error))
        refusal = self._refuse_replay(command, request)
        if refusal is not None:
            return refusal
        reply: dict[str, Any] = {}
        try:
            reply = await handler(self, request)
        except RequestError as error:
            reply = self.reply(False, str(error))
        finally:
            if request.request_id and command in SESSION_COMMANDS and reply.get("Succeeded") is not True:
                self.recent_requests.discard(request.request_id)  # not applied: a resend may try again
        return reply

    def _refuse_replay(self, command: str, request: RuntimeRequest) -> dict[str, Any] | None:
        """A reply for a request that must not be applied (already applied, or dated in the future)."""
        if future_dated(request.sent_at_milliseconds, self.clock.now()):
            message = f"Rejected {command}: the request is dated more than 5 minutes in the future."
            self.log("request-future-dated-rejected", command, message, succeeded=False,
                     extra={"RequestId": request.request_id or None,
                            "SentAtUnixMilliseconds": request.sent_at_milliseconds})
            return self.reply(False, message)
        rid = request.request_id
        if not rid or command not in SESSION_COMMANDS:
            return None
        if rid in self.recent_requests:
            message = f"Request {_printable(rid, 128)} was already applied; ignored the repeat."
            self.log("request-repeat-ignored", command, message, extra={"RequestId": rid})
            return self.reply(True, message, {"RepeatedRequest": True})
        self.recent_requests.add(rid)
        self.journal.note_request_id(rid)
        return None

    def reply(self, succeeded: bool, message: str, extra: dict[str, Any] | None = None, *,
              list_sessions: bool | None = None) -> dict[str, Any]:
        """The standard reply from what the runtime knows now (no platform query). The sessions are
        listed unless ``list_sessions`` is False or (None) the request being handled asked for none."""
        reading = self.machine.latest
        return build_response(succeeded=succeeded, message=message, state=self.state, settings=self.settings,
                              lid_state=reading.lid, visible_display_count=reading.visible_display_count,
                              pending_suspend=self.suspend.describe(),
                              extra={"ClosedLidSuspendEligible": reading.eligibility.eligible,
                                     "ProtectionHeldBack": self.protection.held_back(),
                                     "LidPolicyHeldBack": self.protection.lid_held_back(),
                                     "LastSuspendFailure": self.suspend.last_failure,
                                     "Paused": self.pause.describe(), "DisplayDimmed": self.dimming.describe(),
                                     "SuspendBlocked": self.blocked.describe(),
                                     "ThermalMonitorRunning": self.emergency.monitoring,
                                     **self.platform_fields,
                                     **(extra or {})},
                              list_sessions=_LIST_SESSIONS.get() if list_sessions is None else list_sessions)
