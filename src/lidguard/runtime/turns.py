"""Pure helpers of the session policy for turns, running tools and leases.

Turns: each start begins a turn, identified by the provider's turn id (Codex ``turn_id``) or one
made from the start's time. An event sent before the session's current turn began, and not carrying
that turn's id, belongs to an older turn: it must not undo newer state (a late PostToolUse of turn 3
does not reactivate a session that turn 4 stopped). Times are the hook's (``SentAtUnixMilliseconds``)
where it gave one: the same machine's clock, so they order events whatever order they arrive in. A
wall clock stepped back (NTP) would make every later event look older than the turn: the runtime sees
the step against its monotonic clock when the next event arrives (``clock.StepBackDetector``) and moves
every turn's start back with it first (``with_turns_shifted``), so a step never makes an event stale.

Tools: a PreToolUse adds its tool call id to the session's tools in flight, its PostToolUse removes
it. When the inactivity timeout is due for a session with a tool in flight, the CPU time the watched
agent's descendants used (read by the timer just before, off the gate) decides: more than at the last
check -> the tool is working and the session active (``running-tool-activity``); otherwise the tools
are abandoned and the seeds' timeout path applies.

Background work (issue 35.3): a subagent or task the agent started (SubagentStart, TaskCreated) is kept
apart from the tools until it ends (SubagentStop, TaskCompleted): it may outlive the turn, so a turn-end
stop while some runs is a deferred stop, like Claude's ``background_tasks``; it survives a new turn's start
and is abandoned with the pending work by the inactivity timeout.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from types import MappingProxyType

from .sessions import MAX_TOOLS_IN_FLIGHT, RegistryState, Session

__all__ = ["RUNNING_TOOL_REASON", "begin_turn", "is_stale", "lease_counted_from", "lease_deadline_after",
           "lease_expired", "renew_lease", "tool_cpu_moved", "with_background", "with_tool", "with_turns_shifted"]

RUNNING_TOOL_REASON = "running-tool-activity"


def begin_turn(session: Session, turn_id: str, sent_at: datetime | None, now: datetime) -> Session:
    started = min(sent_at, now) if sent_at is not None else now
    return replace(session, turn_id=turn_id or f"lidguard:{started.isoformat()}", turn_started_at=started)


def is_stale(session: Session, turn_id: str, sent_at: datetime | None) -> bool:
    """The event (its turn id, when the hook sent it) belongs to a turn older than the session's."""
    if sent_at is None or session.turn_started_at is None:
        return False
    if turn_id and turn_id == session.turn_id:
        return False
    return sent_at < session.turn_started_at


def with_turn_starts_at_most(state: RegistryState, now: datetime) -> RegistryState:
    """The registry with every turn that started after ``now`` started at ``now`` (a wall clock stepped back
    while no runtime ran: replayed turns lie "in the future"); the other sessions are left as they are."""
    return RegistryState(MappingProxyType({
        key: replace(session, turn_started_at=now)
        if session.turn_started_at is not None and session.turn_started_at > now else session
        for key, session in state.sessions.items()}))


def with_turns_shifted(state: RegistryState, back: timedelta) -> RegistryState:
    """The registry after the wall clock stepped ``back``: each turn's start moved back with it, so the hooks'
    send times (read from the stepped clock) still order against it. Rare: one pass over every session,
    and a state not made in one step (components that follow the registry look at every session)."""
    return RegistryState(MappingProxyType({
        key: replace(session, turn_started_at=session.turn_started_at - back)
        if session.turn_started_at is not None else session for key, session in state.sessions.items()}))


def with_tool(session: Session, tool_call_id: str, state: str) -> Session:
    """The session after a tool call started (``Running``) or finished (``Finished``)."""
    if not tool_call_id or state not in ("Running", "Finished"):
        return session
    tools = tuple(tool for tool in session.tools_in_flight if tool != tool_call_id)
    if state == "Running":
        tools = (tools + (tool_call_id,))[-MAX_TOOLS_IN_FLIGHT:]
    cpu = session.tool_cpu_seconds if tools else None
    return replace(session, tools_in_flight=tools, tool_cpu_seconds=cpu)


def with_background(session: Session, work_id: str, state: str) -> Session:
    """The session after background work started (``Running``) or finished (``Finished``)."""
    if not work_id or state not in ("Running", "Finished"):
        return session
    work = tuple(item for item in session.background_work if item != work_id)
    if state == "Running":
        work = (work + (work_id,))[-MAX_TOOLS_IN_FLIGHT:]
    return replace(session, background_work=work)


def tool_cpu_moved(session: Session, reading: float | None) -> bool:
    """The tools' processes used CPU since the last check (the first check: since they started)."""
    return reading is not None and reading > (session.tool_cpu_seconds or 0.0)


def lease_expired(session: Session, hours: int | None, now: datetime) -> bool:
    return hours is not None and now - lease_counted_from(session) >= timedelta(hours=hours)


def lease_counted_from(session: Session) -> datetime:
    """A lease counts from the session's last provider event: its latest start, or a later event that
    renewed it (``renew_lease``)."""
    renewed = session.lease_renewed_at
    return renewed if renewed is not None and renewed > session.started_at else session.started_at


def renew_lease(session: Session, now: datetime) -> Session:
    """The session after a provider event (activity, a soft-lock, a deferred stop): its lease counts from
    ``now``. Not the runtime's own observations (a running tool's CPU time): the lease bounds a session
    whose provider went silent, a tool that never finishes included."""
    return replace(session, lease_renewed_at=now)


def lease_deadline_after(earliest_start: datetime | None, hours: int | None) -> datetime | None:
    """When the next lease ends, from the earliest ``lease_counted_from`` over the sessions (None: no session,
    or leases off)."""
    if hours is None or earliest_start is None:
        return None
    return earliest_start + timedelta(hours=hours)
