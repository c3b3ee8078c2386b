"""PreSuspend and PostSessionEnd webhooks (REFERENCE 10, seed 001): httpx, never under the gate.

One ``httpx.AsyncClient`` for the runtime's life (transport injectable for tests), a 5-second bound
on every request (httpx's own timeout and a cancel scope around it, so a receiver that accepts and
never answers cannot hold a suspend longer), camelCase JSON bodies with empty fields omitted.
A failure (timeout, non-2xx, bad URL, connection refused) is logged and never fails a stop or a
suspend: ``send`` never raises.

PostSessionEnd goes out in the background for a provider-reported normal end that did not hand
its notification to the suspend path (``policy.SessionEnded.handed_to_suspend``); while one is in
flight the component is ``busy()``, so the runtime's cleanup waits for it. The bodies and the
"should this end notify" decision are pure functions below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ...settings.model import is_absolute_http_url
from .. import policy
from ..logs import format_utc
from ..sessions import AgentProvider, SessionKey
from . import ComponentBase

if TYPE_CHECKING:
    import httpx

    from ..app import Runtime

__all__ = [
    "WEBHOOK_TIMEOUT_SECONDS",
    "WebhookComponent",
    "failure_message",
    "without_previews",
    "post_session_end_body",
    "pre_suspend_body",
    "session_end_fields",
    "wants_post_session_end",
]

WEBHOOK_TIMEOUT_SECONDS = 5.0
PREVIEW_FIELDS = ("inputPromptPreview", "lastAssistantMessage")  # left out with WebhookPreviews false
JSON_CONTENT_TYPE = "application/json; charset=utf-8"


# -- pure decisions and bodies ------------------------------------------------------------------------
def wants_post_session_end(ended: policy.SessionEnded) -> bool:
    """Only a provider-reported normal end that did not schedule a suspend notifies PostSessionEnd."""
    return ended.stop.normal_end and not ended.handed_to_suspend


def _compact(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if value is not None and value != ""}


def session_end_fields(ended: policy.SessionEnded, prompt_preview: str = "") -> dict[str, Any]:
    """The session identity and end metadata both webhook bodies carry (camelCase, empties omitted)."""
    session, stop = ended.session, ended.stop
    key = session.key
    return _compact({
        "provider": key.provider.value,
        "providerName": key.provider_name if key.provider is AgentProvider.MCP else None,
        "sessionIdentifier": key.session_identifier,
        "startedAtUtc": format_utc(session.started_at),
        "lastActivityAtUtc": format_utc(session.last_activity_at),
        "endedAtUtc": format_utc(ended.ended_at),
        "endReason": stop.end_reason or stop.command,
        "activeSessionCount": ended.active_session_count,
        "workingDirectory": session.working_directory,
        "transcriptPath": session.transcript_path,
        "inputPromptPreview": stop.input_prompt_preview or prompt_preview,
        "lastAssistantMessage": stop.last_assistant_message,
    })


def pre_suspend_body(reason: str, *, soft_locked_session_count: int = 0,
                     session_end: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"eventType": "PreSuspend", "reason": reason}
    if reason == "SoftLocked" and soft_locked_session_count:
        body["softLockedSessionCount"] = soft_locked_session_count
    if session_end:
        body.update({key: value for key, value in session_end.items() if key not in body})
    return body


def post_session_end_body(session_end: dict[str, Any]) -> dict[str, Any]:
    return {"eventType": "PostSessionEnd", "reason": "SessionEnded", **session_end}


def without_previews(body: dict[str, Any], settings: Any) -> dict[str, Any]:
    """``body`` without the prompt preview and the assistant message unless ``WebhookPreviews`` is on."""
    if settings.webhook_previews:
        return body
    return {key: value for key, value in body.items() if key not in PREVIEW_FIELDS}


def failure_message(name: str, *, status: int | None = None, reason_phrase: str = "", timed_out: bool = False,
                    error: str = "", bad_url: bool = False) -> str:
    if bad_url:
        return f"The {name} webhook URL is not an absolute http or https URL."
    if timed_out:
        return f"The {name} webhook request timed out."
    if status is not None:
        return f"The {name} webhook returned {status} ({reason_phrase or 'no reason given'})."
    return f"The {name} webhook request failed: {error}"


# -- the component ------------------------------------------------------------------------------------
class WebhookComponent(ComponentBase):
    def __init__(self, runtime: Runtime, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._runtime = runtime
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._in_flight = 0
        self._prompts: dict[SessionKey, str] = {}

    # -- the component questions --------------------------------------------------------------------
    def handles(self) -> tuple[type, ...]:
        return (policy.SessionEnded, policy.PromptSubmitted)

    def apply(self, effect: policy.Effect) -> None:
        if isinstance(effect, policy.PromptSubmitted):
            self._prompts[effect.key] = effect.preview
        elif isinstance(effect, policy.SessionEnded):
            if wants_post_session_end(effect):
                self.post_session_end(self.session_end_details(effect), effect.stop.command)

    def state_changed(self) -> None:
        sessions = self._runtime.state.sessions
        for key in [key for key in self._prompts if key not in sessions]:
            del self._prompts[key]

    def busy(self) -> bool:
        return self._in_flight > 0

    # -- the narrow interface the suspend flow and the emergency monitor use ---------------------------
    def session_end_details(self, ended: policy.SessionEnded) -> dict[str, Any]:
        """Captured when the session ends (its remembered prompt is dropped with the session)."""
        return session_end_fields(ended, self._prompts.get(ended.session.key, ""))

    async def send(self, name: str, url: str, body: dict[str, Any], on_failure: Callable[[str], None]) -> bool:
        """POSTs ``body``; True on 2xx. Never raises (except cancellation) and never takes the gate."""
        if not is_absolute_http_url(url):
            on_failure(failure_message(name, bad_url=True))
            return False
        import httpx  # here, not at the top: a runtime that never sends a webhook never imports it

        message: str | None = None
        body = without_previews(body, self._runtime.settings)
        with anyio.move_on_after(WEBHOOK_TIMEOUT_SECONDS) as scope:
            try:
                response = await self._http().post(url, json=body, headers={"Content-Type": JSON_CONTENT_TYPE})
            except httpx.TimeoutException:
                message = failure_message(name, timed_out=True)
            except Exception as error:  # connection refused, TLS, anything the receiver does
                message = failure_message(name, error=str(error) or type(error).__name__)
            else:
                if 200 <= response.status_code < 300:
                    return True
                message = failure_message(name, status=response.status_code, reason_phrase=response.reason_phrase)
        if scope.cancelled_caught:
            message = failure_message(name, timed_out=True)
        on_failure(message or failure_message(name, error="no response"))
        return False

    def post_session_end(self, session_end: dict[str, Any], command: str) -> None:
        """Sends PostSessionEnd in the background (gate held or not); cleanup waits for it."""
        url = self._runtime.settings.post_session_end_webhook_url
        if url:
            self.send_in_background("PostSessionEnd", url, post_session_end_body(session_end), command)

    def send_in_background(self, name: str, url: str, body: dict[str, Any], command: str) -> None:
        """POSTs ``body`` in the background (gate held or not; PostSessionEnd, SuspendBlocked); failures are
        logged as ``<command>-<name in kebab case>-webhook-failed``; cleanup waits for it."""
        runtime = self._runtime
        if not url or not runtime.running:
            return
        self._in_flight += 1
        kebab = "".join(f"-{char.lower()}" if char.isupper() else char for char in name).lstrip("-")

        def failed(message: str) -> None:
            runtime.log(f"{command}-{kebab}-webhook-failed", command, message, succeeded=False)

        async def deliver(scope: anyio.CancelScope) -> None:
            try:
                await self.send(name, url, body, failed)
            finally:
                self._in_flight -= 1
                with anyio.CancelScope(shield=True):
                    async with runtime.gate:
                        runtime.state_changed()  # the cleanup re-evaluates once nothing is in flight

        runtime.spawn(deliver)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await client.aclose()
                except Exception as error:  # closing must not fail the runtime's exit
                    self._runtime.exception_log.record("webhook-client-close-failed", error)

    def _http(self) -> httpx.AsyncClient:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(WEBHOOK_TIMEOUT_SECONDS),
                                             transport=self._transport, follow_redirects=False)
        return self._client
