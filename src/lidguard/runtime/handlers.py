"""One function per IPC command: request -> policy event(s) -> reply.

Handlers own no effects: events go through ``Runtime.run_event`` (gate, effects to components,
protection reconciled off the gate) and the reply is built from what the runtime knows afterwards.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..ipc.protocol import RUNTIME_STOPPING_MESSAGE
from ..platform.api import Unsupported
from ..settings.model import Settings
from . import policy
from .bounds import registry_full_message
from .components.followup import FollowUpComponent, FollowUpWaiter
from .components.status_stream import status_extra
from .replay_guard import sent_at
from .requests import RequestError, RuntimeRequest
from .sessions import AgentProvider, Session, SessionKey

if TYPE_CHECKING:
    from .app import Runtime

__all__ = ["HANDLERS"]

Handler = Callable[["Runtime", RuntimeRequest], Awaitable[dict[str, Any]]]


def _offered_settings(runtime: Runtime, request: RuntimeRequest, command: str) -> Settings | None:
    """The settings a ``start`` carries (raw JSON, validated here); invalid -> None and logged."""
    if not request.has_settings:
        return None
    try:
        return Settings.from_raw(request.settings)
    except Exception as error:  # not an object, or anything a strange value provokes
        detail = str(error)
        runtime.log("settings-update-rejected", command,
                    f"Kept the current settings because the settings sent with {command} are invalid: {detail}",
                    succeeded=False)
        return None


async def handle_start(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    key = request.session_key()
    offered = _offered_settings(runtime, request, "start")
    async with runtime.gate:
        if offered is not None:
            runtime.settings_guard.clear("start")
        elif request.settings_problem and not request.has_settings:
            runtime.settings_guard.engage(request.settings_problem, "start")  # fail closed (issue 19)
        if offered is not None and runtime.update_settings(offered):
            runtime.log("settings-updated", "start", "Runtime settings updated from the start request.")
        before = runtime.state.sessions.get(key)
        refusal = registry_full_message(runtime.state, key)
        if refusal is not None:
            runtime.log("session-start-refused", "start", refusal, succeeded=False, key=key)
            return runtime.reply(False, refusal)
        # REFERENCE 7.1: an explicit WatchedProcessIdentifier wins, whatever WatchParentProcess says.
        outcome = runtime.apply_event(policy.Start(
            key, request.watched_process_identifier or None, request.working_directory, request.transcript_path,
            watch_parent_process=runtime.settings.watch_parent_process,
            input_prompt_preview=request.input_prompt_preview, turn_id=request.turn_id,
            sent_at=sent_at(request.sent_at_milliseconds),
            agent_name=request.provider_name.strip() if key.provider is AgentProvider.CUSTOM else "",
            if_not_running=request.if_not_running, reason=request.session_state_reason,
        ))
    runtime.protection.retry_refused_lid()  # a permission installed since is used by the next start
    error = await runtime.protection.reconcile()
    if outcome.succeeded and error is not None and not runtime.protection.applied:
        message = f"Failed to apply protection for {key}: {error}"
        async with runtime.gate:
            _roll_back_start(runtime, key, before, outcome.state.sessions.get(key))
            runtime.log("session-start-failed", "start", message, succeeded=False, key=key)
            runtime.start_failures.failed(key, str(error))
        await runtime.protection.reconcile()
        return runtime.reply(False, message)
    if outcome.succeeded:
        runtime.start_failures.succeeded()
    return runtime.reply(outcome.succeeded, _with_lid_note(runtime, outcome.message))


def _with_lid_note(runtime: Runtime, message: str) -> str:
    """The reply's message plus why the lid-close change is held back, when it is (never fatal)."""
    note = runtime.protection.lid_held_back() if runtime.protection.applied else None
    return f"{message} Lid-close action held back: {note}" if note else message


def _roll_back_start(runtime: Runtime, key: SessionKey, before: Session | None, started: Session | None) -> None:
    """A session whose protection failed is rolled back (unless something changed it since)."""
    current = runtime.state.sessions.get(key)
    if current is None or current is not started:
        return
    runtime.state = runtime.state.with_session(before) if before is not None else runtime.state.without([key])
    effects: list[policy.Effect] = []
    if current.watched_process_identifier:
        effects.append(policy.UnwatchProcess(key))
    if before is not None and before.watched_process_identifier:
        effects.append(policy.WatchProcess(key, before.watched_process_identifier))
    runtime.apply_effects(effects)
    runtime.state_changed()


async def _simple(runtime: Runtime, event: policy.Event) -> dict[str, Any]:
    outcome = await runtime.run_event(event)
    assert outcome is not None
    return runtime.reply(outcome.succeeded, outcome.message)


async def handle_stop(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    event = policy.Stop(
        request.session_key(), provider_session_end=request.is_provider_session_end,
        end_reason=request.session_end_reason, pending_provider_work=request.has_pending_provider_work,
        stop_hook_active=request.stop_hook_active, last_assistant_message=request.last_assistant_message,
        input_prompt_preview=request.input_prompt_preview, turn_id=request.turn_id,
        sent_at=sent_at(request.sent_at_milliseconds), turn_end=request.is_turn_end,
    )
    follow_up = runtime.suspend.follow_up
    if not request.wait_for_follow_up or follow_up is None:
        return await _simple(runtime, event)
    return await _stop_and_wait(runtime, event, request, follow_up)


async def _stop_and_wait(runtime: Runtime, event: policy.Stop, request: RuntimeRequest,
                         follow_up: FollowUpComponent) -> dict[str, Any]:
    """A blocking Stop hook (ask-before-sleep): the reply waits while the pending suspend this stop
    scheduled runs its reply wait, and carries ``FollowUpReply`` when the user replied. A hook that
    goes away meanwhile changes nothing: the wait goes on and the unread reply is dropped."""
    waiter = FollowUpWaiter(event.key, request.last_assistant_message, request.input_prompt_preview)
    await runtime.machine.for_decision()  # a stop may schedule a suspend (``run_event`` does the same)
    async with runtime.gate:
        follow_up.expect(waiter)
        try:
            outcome = runtime.apply_event(event)
        finally:
            follow_up.expect(None)
    await runtime.protection.reconcile()
    if waiter.claimed:
        await _wait_while_the_hook_can_listen(runtime, waiter, request, follow_up)
    extra: dict[str, Any] = {"FollowUpOutcome": waiter.outcome or "NotAsked"}
    if waiter.reply is not None:
        extra["FollowUpReply"] = waiter.reply
    return runtime.reply(outcome.succeeded, outcome.message, extra)


async def _wait_while_the_hook_can_listen(runtime: Runtime, waiter: FollowUpWaiter, request: RuntimeRequest,
                                          follow_up: FollowUpComponent) -> None:
    """Waits for the reply wait, but answers the hook before the wait it announced ends (issue 19)."""
    from ..ipc.stop_timeout import runtime_answer_after_seconds

    budget = request.follow_up_wait_seconds
    with anyio.move_on_after(runtime_answer_after_seconds(budget) if budget is not None else math.inf):
        await waiter.done.wait()
    if not waiter.done.is_set():
        async with runtime.gate:
            follow_up.hook_timed_out(waiter)


async def handle_mark_active(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    return await _simple(runtime, policy.MarkActive(
        request.session_key(), request.session_state_reason, turn_id=request.turn_id,
        sent_at=sent_at(request.sent_at_milliseconds), tool_call_id=request.tool_call_id,
        tool_state=request.tool_call_state, background=request.background_work))


async def handle_mark_soft_locked(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    return await _simple(runtime, policy.MarkSoftLocked(request.session_key(), request.session_state_reason,
                                                        turn_id=request.turn_id,
                                                        sent_at=sent_at(request.sent_at_milliseconds)))


async def handle_remove(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    if request.match_all_sessions:
        event = policy.RemoveSessions(match_all=True)
    else:
        if not request.session_identifier.strip():
            raise RequestError("A session identifier is required.")
        provider = request.agent_provider() if request.provider else None
        event = policy.RemoveSessions(request.session_identifier, provider, request.provider_name or None)
    outcome = await runtime.run_event(event)
    assert outcome is not None
    removed = [f"{session.key}" for session in outcome.removed]
    return runtime.reply(outcome.succeeded, outcome.message, {"RemovedSessions": removed})


async def handle_status(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    return runtime.reply(True, "LidGuard runtime is running.", status_extra(runtime))


async def handle_watch(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    """The server turns a connection answered with ``"Watch": true`` into a state stream
    (``watch_stream.py``); a runtime that is exiting refuses, its stream would end at once."""
    if runtime.stopping:
        return runtime.reply(False, RUNTIME_STOPPING_MESSAGE, {"RuntimeStopping": True})
    return {"Succeeded": True, "Watch": True}


async def _is_alive(runtime: Runtime, pid: int) -> bool | None:
    """None when the platform cannot tell; a pid no process can have is not alive."""
    try:
        return await runtime.call_platform(runtime.platform.process.is_alive, pid)
    except Unsupported:
        return None
    except (ValueError, OverflowError):
        return False


async def handle_cleanup_orphans(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    cleaned = 0
    candidates = [(s.key, s.watched_process_identifier) for s in runtime.state.sorted_sessions()
                  if s.watched_process_identifier]
    for key, pid in candidates:
        assert pid is not None
        if await _is_alive(runtime, pid) is not False:
            continue

        def still_orphaned(key: SessionKey = key, pid: int = pid) -> bool:
            session = runtime.state.sessions.get(key)
            if session is None or session.watched_process_identifier != pid:
                return False
            runtime.log("orphan-session-cleaned", "cleanup-orphans",
                        f"Cleaned {session.key} because process {pid} is gone.", session=session)
            return True

        outcome = await runtime.run_event(policy.Stop(key, end_reason="cleanup-orphans", cancel_path=True,
                                                      command="cleanup-orphans"), guard=still_orphaned)
        cleaned += outcome is not None
    message = f"Cleaned {cleaned} orphan session(s)."
    runtime.log("cleanup-orphans-completed", "cleanup-orphans", message)
    return runtime.reply(True, message, {"CleanedSessionCount": cleaned})


async def handle_settings(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    settings = request.parsed_settings()
    async with runtime.gate:
        runtime.settings_guard.clear("settings")
        runtime.update_settings(settings)
    runtime.protection.retry_refused_lid()
    error = await runtime.protection.reconcile()
    runtime.log("settings-updated", "settings", "Runtime settings updated.")
    if error is not None:
        return runtime.reply(False, f"Runtime settings updated, but protection could not follow them: {error}")
    return runtime.reply(True, _with_lid_note(runtime, "Runtime settings updated."))


async def handle_shutdown(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    force = bool(getattr(request, "force", False))
    count = len(runtime.state.sessions)
    if count and not force:
        return runtime.reply(False, f"{count} active session(s) are still running; use --force to stop the "
                                    "runtime anyway.")
    runtime.log("server-runtime-shutdown-requested", "shutdown",
                f"Stopping the runtime on request ({count} active session(s)).")
    paused = runtime.pause.paused  # a pause lives in the runtime: stopping it ends the pause, said plainly
    await runtime.begin_shutdown("runtime-stopping")
    return runtime.reply(True, "LidGuard runtime is stopping." + (
        " This ends the pause: the next agent hook starts a runtime that protects again (run `lidguard pause` "
        "after it to pause again)." if paused else ""))


async def handle_pause(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    async with runtime.gate:
        message = runtime.pause.pause(request.pause_seconds)
    error = await runtime.protection.reconcile()
    if error is not None:
        return runtime.reply(False, f"{message} Releasing protection failed: {error}")
    return runtime.reply(True, message)


async def handle_resume(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    async with runtime.gate:
        message = runtime.pause.resume()
    error = await runtime.protection.reconcile()
    if error is not None:
        return runtime.reply(False, f"{message} Applying protection failed: {error}")
    return runtime.reply(True, message)


async def handle_emergency_restore(runtime: Runtime, request: RuntimeRequest) -> dict[str, Any]:
    """Pauses (until resume), clears every session, releases protection (the lid policy restored from
    its backup), then restores what the platform itself left (macOS hibernatemode)."""
    async with runtime.gate:
        runtime.pause.pause(None, "emergency-restore")
        outcome = runtime.apply_event(policy.RemoveSessions(match_all=True))
    problems: list[str] = []
    error = await runtime.protection.reconcile()  # nothing is applied while paused
    if error is not None:
        problems.append(f"Releasing protection failed: {error}")
    try:
        restored = await runtime.call_platform(runtime.platform.restore_pending_state, runtime.paths.data_dir)
    except Exception as error:  # OSError, Unsupported, a backend bug: one line in the reply
        problems.append(f"Restoring the power state failed: {error}")
        restored = []
    removed = [f"{session.key}" for session in outcome.removed]
    message = (f"Emergency restore: paused until `lidguard resume`, cleared {len(removed)} session(s), "
               "released protection and restored the lid policy.")
    message = " ".join([message, *restored, *problems])
    runtime.log("emergency-restore", "emergency-restore", message, succeeded=not problems)
    return runtime.reply(not problems, message, {"RemovedSessions": removed})


HANDLERS: dict[str, Handler] = {
    "start": handle_start,
    "stop": handle_stop,
    "mark-session-active": handle_mark_active,
    "mark-session-softlocked": handle_mark_soft_locked,
    "remove-session": handle_remove,
    "status": handle_status,
    "watch": handle_watch,
    "cleanup-orphans": handle_cleanup_orphans,
    "settings": handle_settings,
    "shutdown": handle_shutdown,
    "pause": handle_pause,
    "resume": handle_resume,
    "emergency-restore": handle_emergency_restore,
}
