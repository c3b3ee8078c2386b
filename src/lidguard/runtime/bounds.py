"""The registry's and the replies' bounds (issue 17): a crowd of sessions never makes replies unreadable.

* At most ``MAX_SESSIONS`` sessions at once; a start beyond that is refused with a clear message
  (updating a session that is already there always works).
* A reply lists at most ``REPLY_SESSION_LIMIT`` sessions and at most ``REPLY_SESSIONS_BUDGET_BYTES`` of
  their JSON (maximum-size fields, escaped, are ~30 KB each), in the registry's order; the rest are
  counted in ``SessionsOmitted``. ``ActiveSessionCount`` is always the true count, so every reply (a
  hook's included) stays far below ``ipc.protocol.MAX_MESSAGE_BYTES`` whatever the count.
"""

from __future__ import annotations

from .sessions import RegistryState, SessionKey

__all__ = ["MAX_SESSIONS", "REPLY_SESSIONS_BUDGET_BYTES", "REPLY_SESSION_LIMIT", "registry_full_message"]

MAX_SESSIONS = 1000
REPLY_SESSION_LIMIT = 100
REPLY_SESSIONS_BUDGET_BYTES = 64 * 1024


def registry_full_message(state: RegistryState, key: SessionKey) -> str | None:
    """Why a start of ``key`` is refused, or None when it fits."""
    if key in state.sessions or len(state.sessions) < MAX_SESSIONS:
        return None
    return (f"LidGuard already tracks {len(state.sessions)} sessions (at most {MAX_SESSIONS}); {key} was not "
            "started. Remove finished sessions with `lidguard remove-session` and try again.")
