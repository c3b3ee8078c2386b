""""Safe to close the lid?" on the dashboard, when lidguard's runtime runs on this machine for this user.

lidguard-notify may run elsewhere (a server the laptop's webhooks reach), so the line is shown only when
this user's runtime answers here: a status request that never starts the runtime, bounded to 1 s, in a
worker thread. Anything else (no runtime, another machine, an error) shows no line rather than a guess.
"""

from __future__ import annotations

from typing import Any

__all__ = ["local_readiness"]

BUDGET_SECONDS = 1.0


def local_readiness(translate: Any = None) -> dict[str, Any] | None:
    """The answer as JSON (English), its ``text`` in a language with ``translate`` (``gettext``)."""
    try:
        from ..ipc.client import send_request
        from ..platform.paths import resolve_paths
        from ..shared.readiness import readiness

        reply = send_request(resolve_paths().socket_file, {"Command": "status", "ReplySessions": False},
                             budget=BUDGET_SECONDS, reply_timeout=BUDGET_SECONDS)
    except Exception:  # noqa: BLE001 - the line is optional: a failure hides it
        return None
    if not isinstance(reply, dict) or reply.get("RuntimeUnavailable") or reply.get("RuntimeNotAnswering"):
        return None
    answer = readiness(reply)
    return answer.to_json() if translate is None else {**answer.to_json(), "text": answer.localized(translate)}
