"""Ask-before-sleep (ASK_BEFORE_SLEEP.md, seeds 000/001): the StopFollowUp reply wait of a pending suspend.

A blocking Stop hook sends ``stop`` with ``WaitForFollowUp: true``; its handler registers a
``FollowUpWaiter`` for that session while the stop is applied, and the suspend component claims it
when the stop schedules a suspend (``suspend_policy.follow_up_wanted``). After the post-stop delay
and the usual re-check the suspend runs the ``follow-up`` stage, which is ``FollowUpComponent.wait``
(off the gate, protection still held): POST StopFollowUp (5 s bound), accept the returned ``pollUrl``
only on the webhook's scheme, host and port, play the follow-up sound once, then poll every 2 s
(5 s bound each, failures retried) until ``Replied``, ``Canceled``, ``Expired`` or the deadline,
trusting the server's ``expiresAtUtc`` up to the initial deadline + 5 minutes.

``Replied`` ends the pending suspend without a PostSessionEnd fallback and restores the session as
active (``restore``); the waiter hands the reply to the Stop hook. ``Canceled`` and ``Expired``
continue the same suspend at once (PreSuspend, sound, re-check, request). Any start/activity or
Emergency Hibernation cancels the pending suspend and with it this wait; the waiter is released
either way, so a blocked hook always gets an answer (or is gone, and its reply is dropped). The
wait also ends when the lid opens or a display connects (looked at every 10 s), so a user back at
the machine is not held by a blocked hook; the re-check after the stage then cancels the suspend.
Answers from the notification server are read with a size bound and never trusted beyond
``suspend_policy``'s rules.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio

from ...ipc.limits import MAX_PROMPT_PREVIEW_CHARS
from .. import policy, suspend_policy
from ..clock import sleep_until
from ..logs import format_utc
from ..sessions import AgentProvider, SessionKey
from . import ComponentBase
from .webhooks import JSON_CONTENT_TYPE, WEBHOOK_TIMEOUT_SECONDS, failure_message, without_previews

if TYPE_CHECKING:
    import httpx

    from ..app import Runtime
    from .suspend import PendingSuspend

__all__ = ["FollowUpComponent", "FollowUpResult", "FollowUpWaiter", "stop_follow_up_body"]

PROMPT_PREVIEW_CHARS = 500
ASSISTANT_MESSAGE_CHARS = 4000
MAX_ANSWER_BYTES = 256 * 1024  # a start or poll answer larger than this is no answer
ELIGIBILITY_CHECK_SECONDS = 10.0  # how often the wait looks whether the lid was opened


async def _exchange(client: httpx.AsyncClient, method: str, url: str, **options: Any) -> tuple[httpx.Response, Any]:
    """One request whose JSON answer is read with a size bound; the payload is None when it is not JSON."""
    async with client.stream(method, url, **options) as response:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                return response, None
        try:
            return response, json.loads(bytes(body))
        except (ValueError, RecursionError):
            return response, None


@dataclass(eq=False)
class FollowUpWaiter:
    """A Stop hook blocked on its IPC connection until the reply wait of its pending suspend ends."""

    key: SessionKey
    last_assistant_message: str = ""
    input_prompt_preview: str = ""
    done: anyio.Event = field(default_factory=anyio.Event)
    claimed: bool = False  # a pending suspend with a reply wait owns it
    hook_gone: bool = False  # the hook's announced wait ran out: nobody can read a reply any more
    outcome: str = ""
    reply: str | None = None

    def finish(self, outcome: str, reply: str | None = None) -> None:
        if self.done.is_set():
            return
        self.outcome, self.reply = outcome, reply
        self.done.set()


@dataclass(frozen=True, slots=True)
class FollowUpResult:
    outcome: str  # Replied | Canceled | Expired | NotStarted
    reply: str | None = None


def stop_follow_up_body(*, follow_up_id: str, key: SessionKey, working_directory: str, prompt_preview: str,
                        last_assistant_message: str, created: datetime, expires: datetime) -> dict[str, Any]:
    """The StopFollowUp webhook body (camelCase, the spec's field list)."""
    return {
        "eventType": "StopFollowUp", "reason": "SessionEnded", "followUpId": follow_up_id,
        "provider": key.provider.value,
        "providerName": key.provider_name if key.provider is AgentProvider.MCP else None,
        "sessionIdentifier": key.session_identifier, "workingDirectory": working_directory,
        "inputPromptPreview": prompt_preview[:PROMPT_PREVIEW_CHARS],
        "lastAssistantMessage": last_assistant_message[:ASSISTANT_MESSAGE_CHARS],
        "createdAtUtc": format_utc(created), "expiresAtUtc": format_utc(expires),
    }


class FollowUpComponent(ComponentBase):
    def __init__(self, runtime: Runtime, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._runtime = runtime
        self._transport = transport
        self._expecting: FollowUpWaiter | None = None
        runtime.suspend.attach_follow_up(self)

    # -- the stop handler and the suspend component (gate held) ----------------------------------------
    def expect(self, waiter: FollowUpWaiter | None) -> None:
        """The stop being applied now comes from a hook that waits (None once it is applied)."""
        self._expecting = waiter

    def claim(self, trigger: policy.EvaluateSuspend) -> FollowUpWaiter | None:
        """The waiting hook of the stop that triggers this suspend, if the settings allow a reply wait."""
        waiter = self._expecting
        settings = self._runtime.settings
        if waiter is None or trigger.trigger_session is None or trigger.trigger_session.key != waiter.key:
            return None
        if not suspend_policy.follow_up_wanted(
                trigger, hook_waiting=True, url=settings.closed_lid_stop_follow_up_webhook_url,
                window_seconds=settings.closed_lid_stop_follow_up_delay_seconds,
                delay_seconds=settings.post_stop_suspend_delay_seconds,
                repeat_follow_up=settings.repeat_closed_lid_stop_follow_up):
            return None
        self._expecting = None
        waiter.claimed = True
        return waiter

    def still_enabled(self, pending: PendingSuspend) -> bool:
        """Before the stage: the settings may have changed during the delay."""
        settings = self._runtime.settings
        return pending.waiter is not None and not pending.waiter.hook_gone and suspend_policy.follow_up_wanted(
            pending.trigger, hook_waiting=True, url=settings.closed_lid_stop_follow_up_webhook_url,
            window_seconds=settings.closed_lid_stop_follow_up_delay_seconds,
            delay_seconds=settings.post_stop_suspend_delay_seconds,
            repeat_follow_up=settings.repeat_closed_lid_stop_follow_up)

    def restore(self, pending: PendingSuspend, reply: str) -> None:
        """A reply: the session is not ended; it becomes active again (its watched process too)."""
        runtime = self._runtime
        session = pending.trigger.trigger_session
        assert session is not None and pending.waiter is not None
        runtime.log("stop-follow-up-replied", "stop",
                    f"Restored {session.key} as active because the user replied to the stop follow-up.",
                    session=session)
        runtime.apply_event(policy.Start(
            session.key, session.watched_process_identifier, session.working_directory, session.transcript_path,
            watch_parent_process=runtime.settings.watch_parent_process,
            input_prompt_preview=reply[:MAX_PROMPT_PREVIEW_CHARS]))

    def hook_timed_out(self, waiter: FollowUpWaiter) -> None:
        """Gate held. The hook's announced wait runs out before the agent kills it: answer it now and
        end the reply wait (a reply could no longer reach the agent); the suspend goes on as on Expired."""
        pending = self._runtime.suspend.pending
        waiter.hook_gone = True
        waiter.finish("HookTimedOut")
        if pending is not None and pending.waiter is waiter:
            self._log("hook-timed-out", "The waiting Stop hook reached the end of its wait before the agent's "
                      "hook timeout; stopped waiting for a reply and continuing with the suspend.", pending=pending)

    # -- the wait (off the gate) -------------------------------------------------------------------------
    def _log(self, name: str, message: str, *, succeeded: bool = True, pending: PendingSuspend) -> None:
        self._runtime.log(f"stop-follow-up-{name}", "stop", message, succeeded=succeeded,
                          session=pending.trigger.trigger_session)

    async def wait(self, pending: PendingSuspend) -> FollowUpResult:
        runtime = self._runtime
        waiter = pending.waiter
        assert waiter is not None and pending.trigger.trigger_session is not None
        async with runtime.gate:
            settings = runtime.settings
            url = settings.closed_lid_stop_follow_up_webhook_url.strip()
            sound = settings.closed_lid_stop_follow_up_sound
            volume = settings.closed_lid_stop_follow_up_sound_volume_override_percent
            created = runtime.clock.now()
            initial = created + timedelta(seconds=settings.closed_lid_stop_follow_up_delay_seconds)
            pending.deadline = initial
            session_end = pending.session_end or {}
            body = stop_follow_up_body(
                follow_up_id=str(uuid.uuid4()), key=waiter.key,
                working_directory=pending.trigger.trigger_session.working_directory,
                prompt_preview=waiter.input_prompt_preview or str(session_end.get("inputPromptPreview") or ""),
                last_assistant_message=(waiter.last_assistant_message
                                        or str(session_end.get("lastAssistantMessage") or "")),
                created=created, expires=initial)
            body = without_previews(body, settings)
        import httpx  # here, not at the top: a runtime that never asks before sleep never imports it

        client = httpx.AsyncClient(timeout=httpx.Timeout(WEBHOOK_TIMEOUT_SECONDS), transport=self._transport,
                                   follow_redirects=False)
        try:
            started = await self._start(client, url, body, pending)
            if started is None:
                return FollowUpResult("NotStarted")
            poll_url, reported = started
            pending.deadline = suspend_policy.follow_up_deadline(initial, reported, initial)
            self._log("started", f"Sent the stop follow-up {body['followUpId']}; waiting for a reply until "
                                 f"{format_utc(pending.deadline)}.", pending=pending)
            if sound:
                await self._play_sound(sound, volume, pending)
            return await self._poll(client, poll_url, initial, pending)
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await client.aclose()
                except Exception as error:  # closing must not fail the suspend
                    runtime.exception_log.record("follow-up-client-close-failed", error)

    async def _start(self, client: httpx.AsyncClient, url: str, body: dict[str, Any],
                     pending: PendingSuspend) -> tuple[str, datetime | None] | None:
        """POSTs StopFollowUp; the validated poll URL and reported deadline, or None (logged)."""
        import httpx

        message = None
        payload: Any = None
        with anyio.move_on_after(WEBHOOK_TIMEOUT_SECONDS) as scope:
            try:
                response, payload = await _exchange(client, "POST", url, content=json.dumps(body).encode("utf-8"),
                                                    headers={"Content-Type": JSON_CONTENT_TYPE})
                if not 200 <= response.status_code < 300:
                    message = failure_message("StopFollowUp", status=response.status_code,
                                              reason_phrase=response.reason_phrase)
            except httpx.TimeoutException:
                message = failure_message("StopFollowUp", timed_out=True)
            except Exception as error:  # connection refused, TLS, anything the receiver does
                message = failure_message("StopFollowUp", error=str(error) or type(error).__name__)
        if scope.cancelled_caught:
            message = failure_message("StopFollowUp", timed_out=True)
        if message is not None:
            self._log("webhook-failed", f"{message} Continuing with the suspend.", succeeded=False, pending=pending)
            return None
        poll_url = payload.get("pollUrl") if isinstance(payload, dict) else None
        if not suspend_policy.valid_poll_url(url, poll_url):
            self._log("invalid-poll-url", "The StopFollowUp answer has no poll URL on the webhook's scheme, host and "
                      "port; continuing with the suspend.", succeeded=False, pending=pending)
            return None
        assert isinstance(poll_url, str) and isinstance(payload, dict)
        return poll_url.strip(), suspend_policy.parse_utc(payload.get("expiresAtUtc"))

    async def _play_sound(self, sound: str, volume: int | None, pending: PendingSuspend) -> None:
        runtime = self._runtime
        try:
            warnings = await runtime.call_platform(lambda: runtime.platform.sound.play(sound, volume_percent=volume))
        except Exception as error:  # never stops the wait
            self._log("sound-failed", f"Stop follow-up sound {sound} failed: {error}", succeeded=False,
                      pending=pending)
            return
        for warning in warnings:
            self._log("sound-volume-warning", warning, succeeded=False, pending=pending)

    async def _poll(self, client: httpx.AsyncClient, poll_url: str, initial: datetime,
                    pending: PendingSuspend) -> FollowUpResult:
        runtime = self._runtime
        clock = runtime.clock
        failing = False
        next_check = clock.now() + timedelta(seconds=ELIGIBILITY_CHECK_SECONDS)
        while True:
            now = clock.now()
            if pending.waiter is not None and pending.waiter.hook_gone:
                return FollowUpResult("Expired")
            if now >= pending.deadline:  # the last poll happened at the deadline
                self._log("expired", "No reply to the stop follow-up before its deadline; continuing with the "
                          "suspend.", pending=pending)
                return FollowUpResult("Expired")
            await sleep_until(clock, min(now + timedelta(seconds=suspend_policy.FOLLOW_UP_POLL_SECONDS),
                                         pending.deadline))
            if clock.now() >= next_check:  # the lid opened: the re-check after this stage cancels the suspend
                next_check = clock.now() + timedelta(seconds=ELIGIBILITY_CHECK_SECONDS)
                reading = await runtime.machine.cached()
                if not reading.eligibility.eligible:
                    self._log("ended", f"Stopped waiting for a reply because {reading.eligibility.why_not}",
                              pending=pending)
                    return FollowUpResult("NotEligible")
            answer, error = await self._poll_once(client, poll_url)
            if answer.status is None:
                if not failing:
                    failing = True
                    self._log("poll-failed", f"Polling the stop follow-up failed ({error}); retrying until the "
                              "deadline.", succeeded=False, pending=pending)
                continue
            failing = False
            pending.deadline = suspend_policy.follow_up_deadline(initial, answer.expires, pending.deadline)
            if answer.status == "Replied":
                return FollowUpResult("Replied", answer.reply)
            if answer.status == "Canceled":
                self._log("canceled", "The stop follow-up was canceled (Sleep now); suspending without delay.",
                          pending=pending)
                return FollowUpResult("Canceled")
            if answer.status == "Expired":
                self._log("expired", "The stop follow-up expired without a reply; continuing with the suspend.",
                          pending=pending)
                return FollowUpResult("Expired")

    async def _poll_once(self, client: httpx.AsyncClient, poll_url: str) -> tuple[suspend_policy.FollowUpPoll, str]:
        with anyio.move_on_after(WEBHOOK_TIMEOUT_SECONDS):
            try:
                response, payload = await _exchange(client, "GET", poll_url)
                if response.status_code != 200:
                    return suspend_policy.FollowUpPoll(None), f"{response.status_code} {response.reason_phrase}"
                answer = suspend_policy.read_poll(payload)
                return answer, "" if answer.status else "not a poll answer"
            except Exception as error:  # timeouts, refused connections: retried
                return suspend_policy.FollowUpPoll(None), str(error) or type(error).__name__
        return suspend_policy.FollowUpPoll(None), "timed out"
