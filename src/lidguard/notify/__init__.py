"""``lidguard-notify``: LidGuard webhooks -> Web Push notifications, and the ask-before-sleep reply pages.

The server needs the optional extra ``lidguard[notify]`` (starlette, uvicorn, jinja2, pywebpush,
py-vapid). Only ``cli.py`` is imported by the console script; it imports the server modules when a
command needs them, so a missing extra is one readable line instead of a traceback.

Modules: ``config`` (the 0600 config file, ``init``, ``LIDGUARD_NOTIFY_*`` overrides), ``store``
(stdlib sqlite3 with migrations, called off the event loop), ``events`` (webhook validation, push
payloads), ``dispatcher`` (Web Push to every active subscription, stale-claim retry), ``auth``
(cookie session, CSRF, Bearer token, failed sign-in throttle), ``bodies`` (request bodies and
fields), ``app`` (Starlette routes), ``pages``/``static`` (templates, JS).
"""

from __future__ import annotations

from ..shared.extras import ExtraMissing, require

__all__ = ["NotifyExtraMissing", "require_extra"]

NotifyExtraMissing = ExtraMissing  # a package of the ``notify`` extra is not installed


def require_extra() -> None:
    """Raises ``NotifyExtraMissing`` naming the missing packages and this installation's install command,
    without importing them."""
    require("notify", "lidguard-notify")
