"""Sends each webhook event as Web Push to every active subscription and records every delivery.

At start-up the events a previous process claimed and never finished go back to Pending; while running,
a claim older than ``stale_seconds`` is taken again. A retried event skips the subscriptions it already
reached, so a restart in the middle of a dispatch loses no event and repeats no delivered notification.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio

from lidguard.l10n import CULTURES, translation
from lidguard.l10n import _ as l10n_text  # the server's language (UiCulture, LIDGUARD_UI_CULTURE, locale)
from lidguard.notify.config import NotifyConfig
from lidguard.notify.events import push_payload
from lidguard.notify.store import Store

__all__ = ["PUSH_TTL_SECONDS", "Dispatcher", "SendResult", "send_web_push"]

PUSH_TTL_SECONDS = 300
CLAIM_BATCH = 20
LOG = logging.getLogger("lidguard.notify")

SendResult = tuple[str, int | None, str | None]  # (delivery status, HTTP status, error)


def send_web_push(config: NotifyConfig, subscription: dict[str, Any], payload: dict[str, str],
                  timeout: float = 10.0) -> SendResult:
    """One Web Push (TTL 300 s, urgency high); 404/410 are permanent, everything else transient."""
    import requests
    from pywebpush import WebPushException, webpush

    info = {"endpoint": subscription["Endpoint"], "keys": {"p256dh": subscription["P256dh"],
                                                           "auth": subscription["Auth"]}}
    try:
        response = webpush(info, data=json.dumps(payload), vapid_private_key=config.vapid_private_key,
                           vapid_claims={"sub": config.vapid_subject},  # a fresh dict: webpush() writes aud/exp
                           timeout=timeout, ttl=PUSH_TTL_SECONDS, headers={"Urgency": "high"})
    except WebPushException as error:
        code = error.response.status_code if error.response is not None else None
        status = "PermanentFailure" if code in (404, 410) else "TransientFailure"
        return status, code, f"The push service answered {code}." if code else str(error)[:500]
    except (requests.RequestException, OSError, ValueError) as error:
        return "TransientFailure", None, f"{type(error).__name__}: {error}"[:500]
    code = getattr(response, "status_code", None)
    return "Succeeded", code, None


def _texts(culture: str | None) -> Callable[[str], str]:
    """The push texts of a subscription: its browser's language, else (None, unknown) the server's."""
    if culture in CULTURES:
        return translation(culture).gettext
    return l10n_text


class Dispatcher:
    def __init__(self, store: Store, config: NotifyConfig, *, stale_seconds: float = 300,
                 idle_poll_seconds: float = 5.0,
                 send: Callable[[NotifyConfig, dict[str, Any], dict[str, str]], SendResult] = send_web_push) -> None:
        self.store = store
        self.config = config
        self.stale_seconds = stale_seconds
        self.idle_poll_seconds = idle_poll_seconds
        self.send = send
        self._wake = anyio.Event()

    def signal(self) -> None:
        """A new event is stored: dispatch now."""
        self._wake.set()

    async def run(self) -> None:
        requeued = await anyio.to_thread.run_sync(self.store.requeue_claimed)
        if requeued:
            LOG.info("requeued %d event(s) an earlier server process had claimed", requeued)
        while True:
            wake = self._wake = anyio.Event()  # before the claim: a signal during the claim is not lost
            events = await anyio.to_thread.run_sync(
                lambda: self.store.claim_events(limit=CLAIM_BATCH, stale_seconds=self.stale_seconds))
            if not events:
                with anyio.move_on_after(self.idle_poll_seconds):
                    await wake.wait()
                continue
            for event in events:
                await self.dispatch(event)

    async def dispatch(self, event: dict[str, Any]) -> None:
        event_id = int(event["Id"])
        try:
            body = json.loads(event["PayloadJson"])
            payloads: dict[str | None, dict[str, str]] = {}  # one per language the subscriptions speak
            subscriptions = await anyio.to_thread.run_sync(lambda: self.store.subscriptions(active_only=True))
            settled = await anyio.to_thread.run_sync(self.store.settled_subscription_ids, event_id)
            for subscription in subscriptions:
                if int(subscription["Id"]) in settled:
                    continue
                # abandon_on_cancel: a shutdown does not wait for a slow push service; the claim is
                # requeued by the next start.
                culture = subscription.get("Culture") or None
                payload = payloads.get(culture)
                if payload is None:
                    payload = payloads[culture] = push_payload(body, self.config.public_base_url, _texts(culture))
                result = await anyio.to_thread.run_sync(self.send, self.config, subscription, payload,
                                                        abandon_on_cancel=True)
                await anyio.to_thread.run_sync(self.store.record_delivery, event_id, int(subscription["Id"]), *result)
        except Exception as error:  # one bad event never stops the dispatcher
            LOG.exception("dispatching event %d failed", event_id)
            await anyio.to_thread.run_sync(self.store.finish_event, event_id, "Failed", f"{error}"[:500])
            return
        await anyio.to_thread.run_sync(self.store.finish_event, event_id, "Completed", None)
