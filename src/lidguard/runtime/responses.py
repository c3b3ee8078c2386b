"""Runtime replies: the standard response (PascalCase wire fields, REFERENCE 3.1).

Every reply carries every session and the settings, so building and encoding them is the runtime's
main cost under load. Both are cached: a session's wire form (and its JSON text) is kept while the
very same ``Session`` object (frozen) is in the registry, the sorted list while the very same
``RegistryState`` (frozen) is current, and the settings' wire form per ``Settings`` instance (frozen).
``encode_reply`` splices the cached JSON texts into the reply line; it writes byte for byte what
``ipc.protocol.encode_message`` writes. The cached dicts are shared between replies: treat replies
as read-only.
"""

from __future__ import annotations

import json
from itertools import accumulate
from typing import Any

from ..ipc.protocol import PROTOCOL_VERSION, encode_message
from ..platform.api import LidState
from ..settings.model import Settings
from .bounds import REPLY_SESSION_LIMIT, REPLY_SESSIONS_BUDGET_BYTES
from .logs import format_utc
from .sessions import RegistryState, Session
from .turns import lease_counted_from

__all__ = ["build_response", "encode_reply", "session_to_wire", "without_sessions"]

_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str)


def _dumps(value: Any) -> str:
    return _encoder.encode(value)


def session_to_wire(session: Session) -> dict[str, Any]:
    return {
        "SessionIdentifier": session.key.session_identifier,
        "Provider": session.key.provider.value,
        "ProviderName": session.key.provider_name or session.agent_name,
        "StartedAt": format_utc(session.started_at),
        "LastActivityAt": format_utc(session.last_activity_at),
        "SoftLockState": "SoftLocked" if session.soft_locked else "None",
        "SoftLockReason": session.soft_lock_reason or "",
        "SoftLockedAt": format_utc(session.soft_locked_at),
        "WatchedProcessIdentifier": session.watched_process_identifier or 0,
        "WorkingDirectory": session.working_directory,
        "PendingProviderWork": session.pending_provider_work,
        "RunningToolCount": len(session.tools_in_flight),
        "TurnId": session.turn_id,
        "Source": session.source,
        "LeaseRenewedAt": format_utc(lease_counted_from(session)),
    }


class WireSessions(list):  # type: ignore[type-arg]
    """The reply's ``Sessions`` list, with its JSON text computed once."""

    __slots__ = ("json", "omitted")
    json: str
    omitted: int


class WireSettings(dict):  # type: ignore[type-arg]
    """The reply's ``Settings`` object, with its JSON text computed once."""

    __slots__ = ("json",)
    json: str


class _ReplyCache:
    """Wire forms by identity of the frozen values they come from (bounded by the registry's size)."""

    def __init__(self) -> None:
        # id of a session object -> (that object, its wire dict, its JSON): the entry holds the object, so
        # the id stays its own while cached; an id lookup is C-level (a SessionKey hashes in Python)
        self._sessions: dict[int, tuple[Session, dict[str, Any], str]] = {}
        self._state: RegistryState | None = None
        self._state_wire = WireSessions()
        self._state_wire.json = "[]"
        self._state_wire.omitted = 0
        self._settings: Settings | None = None
        self._settings_wire = WireSettings()

    def _entry(self, session: Session) -> tuple[Session, dict[str, Any], str]:
        data = session_to_wire(session)
        entry = self._sessions[id(session)] = (session, data, _dumps(data))
        return entry

    def sessions(self, state: RegistryState) -> WireSessions:
        if state is self._state:
            return self._state_wire
        cached = self._sessions.get
        ordered = state.sorted_sessions()[:REPLY_SESSION_LIMIT]  # bounds.py: the rest are only counted
        entries = [cached(id(session)) or self._entry(session) for session in ordered]
        texts = [entry[2] for entry in entries]
        if sum(map(len, texts)) + len(texts) > REPLY_SESSIONS_BUDGET_BYTES:
            # the longest prefix (at least one session) within the budget, one comma or bracket per text
            fits = sum(1 for size in accumulate(len(text) + 1 for text in texts) if size <= REPLY_SESSIONS_BUDGET_BYTES)
            entries, texts = entries[:max(fits, 1)], texts[:max(fits, 1)]
        wire = WireSessions(entry[1] for entry in entries)
        wire.json = "[" + ",".join(texts) + "]"
        wire.omitted = len(state.sessions) - len(texts)
        if len(self._sessions) > 2 * len(state.sessions) + 64:  # forget sessions that left the registry
            keep = {id(session) for session in state.sessions.values()}
            self._sessions = {key: entry for key, entry in self._sessions.items() if key in keep}
        self._state, self._state_wire = state, wire
        return wire

    def settings(self, settings: Settings) -> WireSettings:
        if settings is not self._settings:
            wire = WireSettings(settings.to_file_json())
            wire.json = _dumps(wire)
            self._settings, self._settings_wire = settings, wire
        return self._settings_wire


_cache = _ReplyCache()
_NO_SESSIONS = WireSessions()
_NO_SESSIONS.json = "[]"
_NO_SESSIONS.omitted = 0


def build_response(*, succeeded: bool, message: str, state: RegistryState, settings: Settings,
                   lid_state: LidState, visible_display_count: int,
                   pending_suspend: dict[str, Any] | None = None,
                   extra: dict[str, Any] | None = None, list_sessions: bool = True) -> dict[str, Any]:
    """The standard reply. ``list_sessions=False`` builds what ``without_sessions`` makes of it without
    ordering and encoding the sessions first (at 100 sessions that was most of a hook event's reply)."""
    wire_sessions = _cache.sessions(state) if list_sessions else _NO_SESSIONS
    response: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "Succeeded": succeeded,
        "RuntimeUnavailable": False,
        "Message": message,
        "ActiveSessionCount": len(state.sessions),
        "Sessions": wire_sessions,
        "Settings": _cache.settings(settings),
        "LidSwitchState": lid_state.value,
        "VisibleDisplayMonitorCount": visible_display_count,
        "PendingSuspend": pending_suspend,
    }
    if wire_sessions.omitted:
        response["SessionsOmitted"] = wire_sessions.omitted
    if extra:
        response.update(extra)
    if not list_sessions and state.sessions:
        response["SessionsOmitted"] = len(state.sessions)
    return response


def without_sessions(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply with an empty ``Sessions`` list and every session counted in ``SessionsOmitted`` (a hook
    reads neither: at 100 sessions the list is ~30 KB to encode, send and decode per event)."""
    sessions = reply.get("Sessions")
    if not isinstance(sessions, list) or not sessions:
        return reply
    count = reply.get("ActiveSessionCount")
    brief = dict(reply)  # the cached wire forms stay untouched; key order (``"v"`` first) is kept
    brief["Sessions"] = _NO_SESSIONS
    brief["SessionsOmitted"] = count if type(count) is int else len(sessions)
    return brief


_KEY_TEXTS: dict[str, str] = {}  # '"Sessions":' and '"Settings":' (the keys of cached texts), encoded once


def encode_reply(reply: dict[str, Any]) -> bytes:
    """``encode_message(reply)``, reusing the JSON texts ``build_response`` cached."""
    if next(iter(reply), None) != "v":
        return encode_message(reply)
    try:
        parts: list[str] = []
        plain: dict[str, Any] = {}
        for key, value in reply.items():
            kind = type(value)
            if kind is not WireSessions and kind is not WireSettings:
                plain[key] = value
                continue
            if plain:
                parts.append(_dumps(plain)[1:-1])
                plain = {}
            key_text = _KEY_TEXTS.get(key)
            if key_text is None:
                key_text = _dumps(key) + ":"
                if len(_KEY_TEXTS) < 8:
                    _KEY_TEXTS[key] = key_text
            parts.append(key_text + value.json)
        if plain:
            parts.append(_dumps(plain)[1:-1])
        return ("{" + ",".join(parts) + "}").encode("ascii") + b"\n"
    except Exception:  # noqa: BLE001 - the general encoder turns the failure into a readable reply
        return encode_message(reply)
