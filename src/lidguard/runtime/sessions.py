"""Session values: keys, records and the registry state (immutable; the policy returns new ones)."""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from ..ipc.limits import MAX_PROVIDER_NAME_CHARS
from ..providers import AgentProvider, parse_provider, session_label  # the one providers module; re-exported here

__all__ = ["MAX_TOOLS_IN_FLIGHT", "SESSION_SOURCES", "AgentProvider", "EarliestOf", "RegistryState", "Session",
           "SessionKey", "parse_provider"]

SESSION_SOURCES = ("hook", "rollout")
MAX_TOOLS_IN_FLIGHT = 64  # per session; a provider that never finishes its tools cannot grow a session


@dataclass(frozen=True, slots=True, order=True)
class SessionKey:
    """Provider, provider name (kept only for MCP sessions, trimmed) and the case-sensitive id."""

    provider: AgentProvider
    provider_name: str
    session_identifier: str
    # Keys are hashed on every registry lookup and copy: hashed once (frozen, so it cannot go stale).
    _hash: int = field(init=False, repr=False, compare=False, hash=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.provider, self.provider_name, self.session_identifier)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[SessionKey], tuple[AgentProvider, str, str]]:
        return SessionKey, (self.provider, self.provider_name, self.session_identifier)  # hashed afresh

    @classmethod
    def create(cls, provider: AgentProvider, session_identifier: str, provider_name: str = "") -> SessionKey:
        name = provider_name.strip() if provider is AgentProvider.MCP else ""
        return cls(provider, name, session_identifier)

    @property
    def provider_display(self) -> str:
        return f"Mcp:{self.provider_name}" if self.provider is AgentProvider.MCP else self.provider.value

    def __str__(self) -> str:
        return session_label(self.provider_display, self.session_identifier)


@dataclass(frozen=True, slots=True)
class Session:
    key: SessionKey
    started_at: datetime
    last_activity_at: datetime
    soft_lock_reason: str | None = None
    soft_locked_at: datetime | None = None
    watched_process_identifier: int | None = None
    working_directory: str = ""
    transcript_path: str = ""
    pending_provider_work: bool = False
    # The turn: the provider's turn id or one made at the start, and when it began (the hook's time).
    turn_id: str = ""
    turn_started_at: datetime | None = None
    # Tool calls started (PreToolUse) and not finished yet, and the CPU seconds their processes had
    # used at the last timeout check (None: not read yet).
    tools_in_flight: tuple[str, ...] = ()
    tool_cpu_seconds: float | None = None
    # Who reported the session: "hook" (a hook or a client) or "rollout" (runtime/components/codex_rollouts.py).
    source: str = "hook"
    # When a provider event last renewed the lease (None: not since the start; turns.lease_counted_from).
    lease_renewed_at: datetime | None = None
    # Background work started and not finished (Claude/Codex/Copilot subagents, Claude tasks): it may outlive
    # the turn, so a turn-end stop while some runs is a deferred stop (issue 35.3; turns.with_background).
    background_work: tuple[str, ...] = ()
    # Who a Custom session is (the start's ProviderName: a foreign caller of Claude Code's hooks such as
    # Cursor or Grok, a wrapper's --provider-name): shown in status, never part of the key.
    agent_name: str = ""

    @property
    def soft_locked(self) -> bool:
        return self.soft_lock_reason is not None

    def with_activity(self, now: datetime) -> Session:
        return replace(self, last_activity_at=now, soft_lock_reason=None, soft_locked_at=None)

    def with_soft_lock(self, reason: str, now: datetime) -> Session:
        return replace(self, soft_lock_reason=reason, soft_locked_at=now)

    def journal_extras(self) -> dict[str, Any]:
        """The journal fields beyond the original tool's (``journal_file.session_to_json``)."""
        return {"turn_id": self.turn_id,
                "turn_started_at": self.turn_started_at.isoformat() if self.turn_started_at else None,
                "tools_in_flight": list(self.tools_in_flight), "tool_cpu_seconds": self.tool_cpu_seconds,
                "source": self.source,
                "lease_renewed_at": self.lease_renewed_at.isoformat() if self.lease_renewed_at else None,
                "background_work": list(self.background_work), "agent_name": self.agent_name}

    def with_journal_extras(self, record: dict[str, Any]) -> Session:
        """This session with the extra fields of a journal record (``ValueError`` when malformed)."""
        turn_id = record.get("turn_id", "")
        started = record.get("turn_started_at")
        tools = record.get("tools_in_flight", [])
        cpu = record.get("tool_cpu_seconds")
        source = record.get("source", "hook")
        renewed = record.get("lease_renewed_at")
        background = record.get("background_work", [])
        agent_name = record.get("agent_name", "")
        if not isinstance(agent_name, str) or len(agent_name) > MAX_PROVIDER_NAME_CHARS:
            raise ValueError("not an agent name")
        if not isinstance(background, list) or len(background) > MAX_TOOLS_IN_FLIGHT or not all(
                isinstance(work, str) for work in background):
            raise ValueError("not a background work list")
        if not (renewed is None or isinstance(renewed, str)):
            raise ValueError("not a lease renewal")
        if source not in SESSION_SOURCES:
            raise ValueError("not a session source")
        if not isinstance(turn_id, str) or not (started is None or isinstance(started, str)):
            raise ValueError("not a turn")
        if not isinstance(tools, list) or len(tools) > MAX_TOOLS_IN_FLIGHT or not all(
                isinstance(tool, str) for tool in tools):
            raise ValueError("not a tool list")
        if cpu is not None and (type(cpu) not in (int, float) or not 0 <= cpu < 1e12):
            raise ValueError("not a CPU time")
        turn_started = datetime.fromisoformat(started) if started else None
        lease_renewed = datetime.fromisoformat(renewed) if renewed else None
        if any(moment is not None and moment.tzinfo is None for moment in (turn_started, lease_renewed)):
            raise ValueError("time without a zone")
        return replace(self, turn_id=turn_id, turn_started_at=turn_started, tools_in_flight=tuple(tools),
                       tool_cpu_seconds=float(cpu) if cpu is not None else None, source=source,
                       lease_renewed_at=lease_renewed, background_work=tuple(background), agent_name=agent_name)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class RegistryState:
    sessions: Mapping[SessionKey, Session] = field(default_factory=lambda: MappingProxyType({}))
    # The state this one was made from (by ``with_session``/``without``; weak: no chain of old states is
    # kept) and the keys whose session differs: see ``changed_since``. Not compared, not copied by replace().
    _made_from: weakref.ref[RegistryState] | None = field(default=None, init=False, repr=False, compare=False)
    _changed: tuple[SessionKey, ...] = field(default=(), init=False, repr=False, compare=False)
    # How many sessions are not soft-locked (-1: not counted yet); a derived state counts from its origin's
    # count and the changed keys, so ``protection_wanted`` (asked several times per event) never walks them all.
    _working: int = field(default=-1, init=False, repr=False, compare=False)

    def _derived(self, sessions: dict[SessionKey, Session], changed: tuple[SessionKey, ...]) -> RegistryState:
        state = RegistryState(MappingProxyType(sessions))
        object.__setattr__(state, "_made_from", weakref.ref(self))
        object.__setattr__(state, "_changed", changed)
        working = self._working
        if working >= 0:
            before = self.sessions
            for key in changed:
                old, new = before.get(key), sessions.get(key)
                working += (new is not None and not new.soft_locked) - (old is not None and not old.soft_locked)
            object.__setattr__(state, "_working", working)
        return state

    def changed_since(self, seen: RegistryState | None) -> tuple[SessionKey, ...] | None:
        """The keys whose session (added, replaced or removed) differs from ``seen`` when this state was
        made from ``seen`` in one step; None when that is not known (compare every key)."""
        made_from = self._made_from
        if seen is None or made_from is None or made_from() is not seen:
            return None
        return self._changed

    def with_session(self, session: Session) -> RegistryState:
        sessions = self.sessions  # a proxy's copy() is the dict's own (C) copy, ~15x dict(proxy)
        updated = sessions.copy() if isinstance(sessions, MappingProxyType) else dict(sessions)
        updated[session.key] = session
        return self._derived(updated, (session.key,))

    def without(self, keys: list[SessionKey]) -> RegistryState:
        sessions = self.sessions
        updated = sessions.copy() if isinstance(sessions, MappingProxyType) else dict(sessions)
        removed = tuple(key for key in dict.fromkeys(keys) if updated.pop(key, None) is not None)
        return self._derived(updated, removed)

    @property
    def protection_wanted(self) -> bool:
        """Keep-awake protection is wanted exactly when some session is not soft-locked."""
        working = self._working
        if working < 0:
            working = sum(1 for session in self.sessions.values() if not session.soft_locked)
            object.__setattr__(self, "_working", working)
        return working > 0

    @property
    def suspend_eligible(self) -> bool:
        """Every remaining session is soft-locked (none left counts too)."""
        return not self.protection_wanted

    def sorted_sessions(self) -> list[Session]:
        return sorted(self.sessions.values(), key=lambda session: (session.started_at, session.key))


class EarliestOf:
    """The earliest ``value_of(session)`` over a registry's sessions (None where a session has none), followed
    from state to state through the keys each change touched: ``at(state)`` looks only at those (every
    session only when the state was not made in one step from the last one seen). The values sit in a heap
    with lazy deletion: a changed value is pushed anew and an entry that no longer matches its session's
    value is dropped when it reaches the top, so the session holding the earliest value moving later (a
    lease renewed by each event: the least recently renewed session is the likeliest to send the next one)
    costs a push and a pop, never a walk over every session. Exact: the top is always a current value."""

    __slots__ = ("_heap", "_state", "_value_of", "_values")

    def __init__(self, value_of: Callable[[Session], datetime | None]) -> None:
        self._value_of = value_of
        self._state: RegistryState | None = None
        self._values: dict[SessionKey, datetime] = {}  # each session's current value (those with one)
        self._heap: list[tuple[datetime, SessionKey]] = []  # (value, key), some stale

    def at(self, state: RegistryState) -> datetime | None:
        changed = state.changed_since(self._state) if state is not self._state else ()
        self._state = state
        sessions, value_of, values, heap = state.sessions, self._value_of, self._values, self._heap
        if changed is None:
            values.clear()
            for key, session in sessions.items():
                value = value_of(session)
                if value is not None:
                    values[key] = value
            self._rebuild()
            heap = self._heap
        else:
            for key in changed:
                current = sessions.get(key)
                value = value_of(current) if current is not None else None
                if value is None:
                    values.pop(key, None)
                elif values.get(key) != value:
                    values[key] = value
                    heapq.heappush(heap, (value, key))
            while heap and values.get(heap[0][1]) != heap[0][0]:
                heapq.heappop(heap)
            if len(heap) > 2 * len(values) + 64:  # bounded: stale entries never outnumber the live ones by much
                self._rebuild()
                heap = self._heap
        return heap[0][0] if heap else None

    def _rebuild(self) -> None:
        self._heap = [(value, key) for key, value in self._values.items()]
        heapq.heapify(self._heap)
