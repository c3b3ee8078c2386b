"""The session policy as a pure state machine: ``transition(state, event, now) -> Outcome``.

No I/O, no clock reads: the caller passes ``now`` (UTC) and applies the effects. Rules (seed 000
"Active Session Policy", REFERENCE section 4):

- start/update replaces the record (times reset, soft-lock cleared) but keeps an existing watched
  process when none is supplied and WatchParentProcess is on; a start ``if_not_running`` (an agent whose
  only events are its tool calls: Crush) is that session's activity while its turn runs;
- stop is idempotent: the first cleanup signal is authoritative, later ones are harmless;
- activity refreshes LastActivityAt and clears the soft-lock; a soft-lock never refreshes activity, and
  does not apply while the session's background work runs (its subagents/tasks still work);
- a deferred stop (provider work still pending) keeps the session and refreshes its activity; a
  turn-end stop while background work (subagents, tasks) runs is one too (issue 35.3), and a start keeps
  that work;
- the inactive timeout soft-locks sessions (``session-timeout-expired:<N> minutes``); pending work
  with no activity for the timeout is abandoned (``session-pending-provider-work-abandoned``), and a
  soft-locked session with pending work stays in the timer;
- protection is wanted iff some session is not soft-locked; all soft-locked => suspend-eligible;
- a provider-reported normal end (not a cancel path) that triggers a suspend evaluation hands its
  session-end notification to the suspend path (PreSuspend, or PostSessionEnd when no suspend is
  scheduled or it is canceled before its PreSuspend); any other normal end notifies PostSessionEnd.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from .sessions import AgentProvider, RegistryState, Session, SessionKey
from .turns import (
    RUNNING_TOOL_REASON,
    begin_turn,
    is_stale,
    lease_expired,
    renew_lease,
    tool_cpu_moved,
    with_background,
    with_tool,
)

__all__ = [
    "CancelPendingSuspend",
    "EvaluateSuspend",
    "LeaseCheck",
    "LogEvent",
    "MarkActive",
    "MarkSoftLocked",
    "Outcome",
    "PromptSubmitted",
    "RemoveSessions",
    "SessionEnded",
    "Start",
    "Stop",
    "TimeoutCheck",
    "UnwatchProcess",
    "WatchProcess",
    "next_timeout_deadline",
    "timeout_counted_from",
    "timeout_deadline_after",
    "timeout_reason",
    "transition",
]


# -- events -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Start:
    key: SessionKey
    watched_process_identifier: int | None = None
    working_directory: str = ""
    transcript_path: str = ""
    watch_parent_process: bool = True
    input_prompt_preview: str = ""  # the turn's prompt (webhook bodies only)
    turn_id: str = ""  # the provider's turn id (else one is made)
    sent_at: datetime | None = None  # when the hook sent it (replay-safe events)
    source: str = "hook"  # "rollout": found by the Codex rollout detector (components/codex_rollouts.py)
    agent_name: str = ""  # who a Custom session is (Session.agent_name; empty: keep what the session had)
    # Start only a session that is not running; a running one's turn goes on and this is its activity
    # (``reason``): an agent with no prompt or turn-end event starts on its first tool call (Crush).
    if_not_running: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Stop:
    key: SessionKey
    provider_session_end: bool = False
    end_reason: str = ""
    cancel_path: bool = False  # watched-process exit or orphan cleanup
    pending_provider_work: bool = False  # deferred stop: background work still running
    command: str = "stop"
    stop_hook_active: bool = False  # a continued Stop (Claude/Codex stop_hook_active)
    last_assistant_message: str = ""
    input_prompt_preview: str = ""
    turn_id: str = ""
    sent_at: datetime | None = None
    turn_end: bool = False  # ends only the turn (the agent stays): deferred while background work runs

    @property
    def normal_end(self) -> bool:
        """A provider-reported normal end (never a watched-process exit or orphan cleanup)."""
        return self.provider_session_end and not self.cancel_path


@dataclass(frozen=True, slots=True)
class MarkActive:
    key: SessionKey
    reason: str = ""
    turn_id: str = ""
    sent_at: datetime | None = None
    tool_call_id: str = ""  # a tool call that started (``Running``) or finished (``Finished``)
    tool_state: str = ""
    background: bool = False  # the call is background work (a subagent, a task), not a tool


@dataclass(frozen=True, slots=True)
class MarkSoftLocked:
    key: SessionKey
    reason: str
    turn_id: str = ""
    sent_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class RemoveSessions:
    """Removes sessions: all, or by id (any provider, or one provider, or one MCP name)."""

    session_identifier: str | None = None
    provider: AgentProvider | None = None
    provider_name: str | None = None
    match_all: bool = False

    def matches(self, key: SessionKey) -> bool:
        if self.match_all:
            return True
        if key.session_identifier != self.session_identifier:
            return False
        if self.provider is None:
            return True
        if key.provider is not self.provider:
            return False
        if self.provider is AgentProvider.MCP and self.provider_name:
            return key.provider_name == self.provider_name.strip()
        return True


@dataclass(frozen=True, slots=True)
class TimeoutCheck:
    timeout_minutes: int | None
    # CPU seconds of the watched agent's descendants, read just before for sessions with a tool in flight.
    tool_cpu: Mapping[SessionKey, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LeaseCheck:
    """Ends every session whose hard lease (hours from its last provider event) has run out."""

    lease_hours: int | None


Event = Start | Stop | MarkActive | MarkSoftLocked | RemoveSessions | TimeoutCheck | LeaseCheck


# -- effects ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LogEvent:
    event_name: str
    command: str
    message: str
    session: Session | None = None
    succeeded: bool = True
    stop: Stop | None = None
    key: SessionKey | None = None


@dataclass(frozen=True, slots=True)
class CancelPendingSuspend:
    reason: str


@dataclass(frozen=True, slots=True)
class WatchProcess:
    key: SessionKey
    pid: int


@dataclass(frozen=True, slots=True)
class UnwatchProcess:
    key: SessionKey


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """A session left the registry by a stop (not a removal).

    ``handed_to_suspend``: the same stop triggers a suspend evaluation that owns the session-end
    notification (``EvaluateSuspend.ended``); otherwise a normal end notifies PostSessionEnd.
    """

    session: Session
    stop: Stop
    ended_at: datetime | None = None
    active_session_count: int = 0
    handed_to_suspend: bool = False


@dataclass(frozen=True, slots=True)
class PromptSubmitted:
    """A start carried the turn's prompt: remembered for the session's webhook bodies."""

    key: SessionKey
    preview: str


@dataclass(frozen=True, slots=True)
class EvaluateSuspend:
    """Protection is no longer wanted: decide whether to suspend (reason Completed or SoftLocked)."""

    reason: str
    command: str
    trigger_session: Session | None
    soft_locked_session_count: int
    cancel_path: bool = False
    ended: SessionEnded | None = None  # the provider-reported normal end this suspend would notify
    stop_hook_active: bool = False  # a continued Stop: may skip the post-stop delay


Effect = (LogEvent | CancelPendingSuspend | WatchProcess | UnwatchProcess | SessionEnded | EvaluateSuspend
          | PromptSubmitted)


@dataclass(frozen=True, slots=True)
class Outcome:
    state: RegistryState
    succeeded: bool
    message: str
    effects: list[Effect] = field(default_factory=list)
    removed: list[Session] = field(default_factory=list)


def timeout_reason(minutes: int) -> str:
    return f"session-timeout-expired:{minutes} minutes"


def _evaluate_after(before: RegistryState, after: RegistryState, command: str, trigger: Session | None,
                    *, reason: str, cancel_path: bool = False, always: bool = False) -> list[Effect]:
    """EvaluateSuspend when nobody wants protection any more: on the change to that state, or on
    every stop/removal (``always``) since a stop is a suspend trigger of its own."""
    if after.protection_wanted or not (before.protection_wanted or always):
        return []
    count = len(after.sessions)
    return [EvaluateSuspend("SoftLocked" if count else reason, command, trigger, count, cancel_path)]


def _start(state: RegistryState, event: Start, now: datetime) -> Outcome:
    key = event.key
    if not key.session_identifier.strip():
        return Outcome(state, False, "A session identifier is required.",
                       [LogEvent("session-start-rejected", "start", "A session identifier is required.")])
    existing = state.sessions.get(key)
    if existing is not None and is_stale(existing, event.turn_id, event.sent_at):
        return _stale(state, existing, "start")
    if event.if_not_running and existing is not None and _still_runs(existing, event):
        return _mark_active(state, MarkActive(key, event.reason, event.turn_id, event.sent_at), now, "start")
    watched = event.watched_process_identifier if event.watched_process_identifier else None
    if watched is None and existing is not None and event.watch_parent_process:
        watched = existing.watched_process_identifier
    if not event.watch_parent_process:
        watched = event.watched_process_identifier or None
    session = Session(key=key, started_at=now, last_activity_at=now, watched_process_identifier=watched,
                      working_directory=event.working_directory, transcript_path=event.transcript_path,
                      source=event.source,
                      background_work=existing.background_work if existing is not None else (),
                      agent_name=event.agent_name or (existing.agent_name if existing is not None else ""))
    session = begin_turn(session, event.turn_id, event.sent_at, now)
    new_state = state.with_session(session)
    if watched:
        watch_text = f" Watching process {watched}."
    else:
        watch_text = " No watched process was resolved; a stop hook is required."
    message = f"Started {key}.{watch_text}"
    effects: list[Effect] = [CancelPendingSuspend("session-started")]
    if existing is not None and existing.watched_process_identifier and existing.watched_process_identifier != watched:
        effects.append(UnwatchProcess(key))
    if watched and (existing is None or existing.watched_process_identifier != watched):
        effects.append(WatchProcess(key, watched))
    if event.input_prompt_preview:
        effects.append(PromptSubmitted(key, event.input_prompt_preview))
    effects.append(LogEvent("session-started", "start", message, session))
    return Outcome(new_state, True, message, effects)


def _stop(state: RegistryState, event: Stop, now: datetime) -> Outcome:
    key = event.key
    existing = state.sessions.get(key)
    if existing is None:
        message = f"Session {key} is already stopped."
        return Outcome(state, True, message, [LogEvent("session-stopped-already-stopped", event.command, message,
                                                        None, stop=event)])
    if not event.cancel_path and is_stale(existing, event.turn_id, event.sent_at):
        return _stale(state, existing, event.command)
    background = event.turn_end and not event.cancel_path and bool(existing.background_work)
    if event.pending_provider_work or background:
        session = replace(existing, pending_provider_work=True, last_activity_at=now, lease_renewed_at=now)
        message = (f"Deferred stop for {key}: {len(existing.background_work)} subagent(s) or task(s) still run."
                   if background and not event.pending_provider_work
                   else f"Deferred stop for {key}: provider work is still pending.")
        return Outcome(state.with_session(session), True, message,
                       [LogEvent("session-stop-deferred", event.command, message, session, stop=event)])
    new_state = state.without([key])
    message = f"Stopped {key}."
    effects: list[Effect] = []
    if existing.watched_process_identifier:
        effects.append(UnwatchProcess(key))
    effects.append(LogEvent("session-stopped", event.command, message, existing, stop=event))
    evaluate = _evaluate_after(state, new_state, event.command, existing, reason="Completed",
                               cancel_path=event.cancel_path, always=True)
    ended = SessionEnded(existing, event, now, len(new_state.sessions), handed_to_suspend=bool(evaluate))
    effects.append(ended)
    effects += [replace(effect, ended=ended if event.normal_end else None, stop_hook_active=event.stop_hook_active)
                for effect in evaluate if isinstance(effect, EvaluateSuspend)]
    return Outcome(new_state, True, message, effects, removed=[existing])


def _still_runs(session: Session, event: Start) -> bool:
    """A start ``if_not_running`` finds the session's turn running: not soft-locked (the inactivity timeout or a
    wait for the user ended it) and the same agent process (another one is a new run of the agent)."""
    pid = event.watched_process_identifier
    return not session.soft_locked and (not pid or pid == session.watched_process_identifier)


def _mark_active(state: RegistryState, event: MarkActive, now: datetime,
                 command: str = "mark-session-active") -> Outcome:
    existing = state.sessions.get(event.key)
    if existing is None:
        message = f"Session {event.key} is not active; ignored activity signal."
        ignored = LogEvent("session-activity-ignored", command, message, key=event.key)
        return Outcome(state, True, message, [ignored])
    if is_stale(existing, event.turn_id, event.sent_at):
        return _stale(state, existing, command)
    session = renew_lease(existing.with_activity(now), now)
    if event.background:
        session = with_background(session, event.tool_call_id, event.tool_state)
    else:
        session = with_tool(session, event.tool_call_id, event.tool_state)
    if existing.soft_locked:
        message = f"Cleared soft-lock for {event.key} because activity was detected from {event.reason or 'activity'}."
    else:
        message = f"Session {event.key} was already active."
    effects: list[Effect] = [
        CancelPendingSuspend("session-activity"),
        LogEvent("session-activity-recorded", command, message, session),
    ]
    return Outcome(state.with_session(session), True, message, effects)


def _mark_soft_locked(state: RegistryState, event: MarkSoftLocked, now: datetime,
                      command: str = "mark-session-softlocked",
                      log_name: str = "session-softlock-recorded") -> Outcome:
    existing = state.sessions.get(event.key)
    if existing is None:
        message = f"Session {event.key} is not active; ignored soft-lock signal."
        return Outcome(state, True, message, [LogEvent("session-softlock-ignored", command, message, key=event.key)])
    if is_stale(existing, event.turn_id, event.sent_at):
        return _stale(state, existing, command)
    reason = event.reason.strip() or "soft-locked"
    if existing.background_work and not existing.soft_locked:
        # Its subagents/tasks still work (a prompt idle while they run, a question of one of them): it is not
        # waiting on the user alone; the inactivity timeout still abandons work that went silent.
        renewed = renew_lease(existing, now)
        message = (f"Kept {event.key} working despite {reason}: {len(existing.background_work)} subagent(s) or "
                   f"task(s) still run.")
        return Outcome(state.with_session(renewed), True, message,
                       [LogEvent("session-softlock-held-by-background-work", command, message, renewed)])
    if existing.soft_lock_reason == reason:  # nothing changes but the lease: the provider still speaks
        message = f"Session {event.key} is already soft-locked from {reason}."
        renewed = renew_lease(existing, now)
        return Outcome(state.with_session(renewed), True, message,
                       [LogEvent("session-softlock-ignored", command, message, renewed)])
    session = renew_lease(existing.with_soft_lock(reason, now), now)
    new_state = state.with_session(session)
    message = f"Marked {event.key} as soft-locked from {reason}."
    effects: list[Effect] = [LogEvent(log_name, command, message, session)]
    effects += _evaluate_after(state, new_state, command, session, reason="SoftLocked")
    return Outcome(new_state, True, message, effects)


def _remove(state: RegistryState, event: RemoveSessions) -> Outcome:
    if not event.match_all and not (event.session_identifier or "").strip():
        return Outcome(state, False, "A session identifier is required.")
    matched = [session for key, session in state.sessions.items() if event.matches(key)]
    if not matched:
        message = "No active session matched; nothing was removed."
        return Outcome(state, True, message, [LogEvent("session-remove-already-stopped", "remove-session", message)])
    new_state = state.without([session.key for session in matched])
    effects: list[Effect] = []
    for session in matched:
        if session.watched_process_identifier:
            effects.append(UnwatchProcess(session.key))
        effects.append(LogEvent("session-removed", "remove-session", f"Removed {session.key}.", session))
    effects += _evaluate_after(state, new_state, "remove-session", matched[-1], reason="Completed")
    message = f"Removed {len(matched)} session(s)."
    return Outcome(new_state, True, message, effects, removed=matched)


def _timeout_check(state: RegistryState, event: TimeoutCheck, now: datetime) -> Outcome:
    if event.timeout_minutes is None:
        return Outcome(state, True, "Session timeout is off.")
    limit = timedelta(minutes=event.timeout_minutes)
    reason = timeout_reason(event.timeout_minutes)
    current = state
    effects: list[Effect] = []
    for session in state.sorted_sessions():
        if not _in_timer(session) or now - session.last_activity_at < limit:
            continue
        updated = session
        if session.tools_in_flight:
            reading = event.tool_cpu.get(session.key)
            if tool_cpu_moved(session, reading):
                updated = replace(session, last_activity_at=now, tool_cpu_seconds=reading)
                effects.append(LogEvent(RUNNING_TOOL_REASON, "session-timeout",
                                        f"Kept {session.key} active: its running tool used CPU time "
                                        f"({RUNNING_TOOL_REASON}).", updated))
                current = current.with_session(updated)
                continue
            updated = replace(session, tools_in_flight=(), tool_cpu_seconds=None)
            effects.append(LogEvent("session-running-tool-abandoned", "session-timeout",
                                    f"Abandoned {len(session.tools_in_flight)} running tool(s) of {session.key}: "
                                    "their processes used no CPU time since the last check.", updated))
        if updated.pending_provider_work or updated.background_work:
            updated = replace(updated, pending_provider_work=False, background_work=())
            message = f"Abandoned pending provider work for {session.key} after {event.timeout_minutes} minutes."
            effects.append(LogEvent("session-pending-provider-work-abandoned", "session-timeout", message, updated))
        if not updated.soft_locked:
            updated = updated.with_soft_lock(reason, now)
            effects.append(LogEvent("session-timeout-softlock-recorded", "session-timeout",
                                    f"Marked {session.key} as soft-locked from {reason}.", updated))
        current = current.with_session(updated)
    trigger = effects[-1].session if effects else None  # type: ignore[union-attr]
    effects += _evaluate_after(state, current, "session-timeout", trigger, reason="SoftLocked")
    return Outcome(current, True, f"Checked session timeouts ({reason}).", effects)


LEASE_END_REASON = "session-lease-expired"


def _lease_check(state: RegistryState, event: LeaseCheck, now: datetime) -> Outcome:
    """Each session past its lease ends like a watched-process exit (no PostSessionEnd), logged with
    its own reason; the last one out may trigger the suspend evaluation as any stop does."""
    current = state
    effects: list[Effect] = []
    removed: list[Session] = []
    for session in state.sorted_sessions():
        if not lease_expired(session, event.lease_hours, now):
            continue
        effects.append(LogEvent("session-lease-expired", "session-lease",
                                f"Ended {session.key}: its lease of {event.lease_hours} hour(s) ran out.", session))
        outcome = _stop(current, Stop(session.key, end_reason=LEASE_END_REASON, cancel_path=True,
                                      command="session-lease"), now)
        current = outcome.state
        effects += outcome.effects
        removed += outcome.removed
    return Outcome(current, True, f"Checked session leases ({len(removed)} ended).", effects, removed=removed)


def _stale(state: RegistryState, session: Session, command: str) -> Outcome:
    message = f"Ignored {command} for {session.key}: it belongs to a turn older than the current one."
    return Outcome(state, True, message, [LogEvent("session-stale-turn-event-ignored", command, message, session)])


def _in_timer(session: Session) -> bool:
    return not session.soft_locked or session.pending_provider_work


def timeout_counted_from(session: Session) -> datetime | None:
    """Where the session's inactivity timeout counts from (its last activity), or None: not in the timer."""
    return session.last_activity_at if _in_timer(session) else None


def next_timeout_deadline(state: RegistryState, timeout_minutes: int | None) -> datetime | None:
    """When the timeout timer must next fire, or None (timeout off or nobody in the timer)."""
    candidates = [session.last_activity_at for session in state.sessions.values() if _in_timer(session)]
    return timeout_deadline_after(min(candidates) if candidates else None, timeout_minutes)


def timeout_deadline_after(earliest: datetime | None, timeout_minutes: int | None) -> datetime | None:
    """``next_timeout_deadline`` from the earliest ``timeout_counted_from`` over the sessions (a caller that
    follows it from change to change: ``sessions.EarliestOf``)."""
    if timeout_minutes is None or earliest is None:
        return None
    return earliest + timedelta(minutes=timeout_minutes)


def transition(state: RegistryState, event: Event, now: datetime) -> Outcome:
    if isinstance(event, Start):
        return _start(state, event, now)
    if isinstance(event, Stop):
        return _stop(state, event, now)
    if isinstance(event, MarkActive):
        return _mark_active(state, event, now)
    if isinstance(event, MarkSoftLocked):
        return _mark_soft_locked(state, event, now)
    if isinstance(event, RemoveSessions):
        return _remove(state, event)
    if isinstance(event, TimeoutCheck):
        return _timeout_check(state, event, now)
    if isinstance(event, LeaseCheck):
        return _lease_check(state, event, now)
    raise TypeError(f"unknown session event {event!r}")
