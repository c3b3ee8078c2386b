"""A suspend another program blocks (issue 34.3): name the blocker, keep watching, suspend once it goes.

Every suspend request (the post-stop flow and Emergency Hibernation) goes through ``request``: it
reads the OS's sleep blockers right before (lidguard's own protection is already released then) and,
when the request was refused, right after. While ``SuspendIgnoresOtherBlockers`` is off a blocker
listed before means the request is not sent at all (a strict logind would refuse it, and root would be
let through over the other program's protection); on, the OS is asked to ignore them (logind:
``suspend-ignore-inhibit``). A refused post-stop suspend with a blocker named starts the wait:

- ``SuspendBlocked`` in the status reply (who, why, pid, uid, kinds, the agent when lidguard knows
  it), the blockers in the suspend-history entry, and a ``SuspendBlocked`` webhook to the PreSuspend URL;
- the emergency thermal monitor keeps running while the lid stays closed with no display (a deviation
  from seed 001's "only while protection is applied", for the same safety reason: the machine stays
  awake in a bag);
- the wait follows the OS's blocker-change listener (logind BlockInhibited PropertiesChanged), checking
  at least every ``LISTENER_CHECK_SECONDS``; without one it polls every ``POLL_SECONDS``. Once no
  blocker holds a waited kind (``blockers.WAITED_KINDS``) it re-checks the lid, displays and sessions
  and asks the suspend component for the request once; refused again with a blocker, the wait starts
  anew. A session that needs protection, an open lid or a display, a pause and the runtime's exit end it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import anyio

from ...platform.api import SuspendBlocker, SuspendBlockerChanges, SuspendMode, SuspendResult, Unsupported
from .. import policy
from ..blockers import blocker_lines, merge_blockers, name_agents, still_blocking, suspend_blocked_body
from ..logs import format_utc
from . import ComponentBase

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["LISTENER_CHECK_SECONDS", "POLL_SECONDS", "BlockedSuspend", "BlockedSuspendComponent"]

POLL_SECONDS = 2.0
LISTENER_CHECK_SECONDS = 10.0


@dataclass
class BlockedSuspend:
    trigger: policy.EvaluateSuspend
    mode: SuspendMode
    blockers: list[SuspendBlocker]
    since: datetime
    session_end: dict[str, Any] | None = None
    scope: anyio.CancelScope | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"Mode": self.mode.value, "Reason": self.trigger.reason, "SinceUtc": format_utc(self.since),
                "Waiting": True, "Blockers": [blocker.to_wire() for blocker in self.blockers]}


class BlockedSuspendComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.blocked: BlockedSuspend | None = None
        self.last_blockers: list[SuspendBlocker] = []  # the blockers named by the latest refused request

    # -- the component questions --------------------------------------------------------------------
    @property
    def waiting(self) -> bool:
        return self.blocked is not None

    def busy(self) -> bool:
        return self.blocked is not None  # the runtime stays to suspend once the blocker goes

    def describe(self) -> dict[str, Any] | None:
        return self.blocked.to_wire() if self.blocked is not None else None

    def state_changed(self) -> None:
        if self.blocked is not None and self._runtime.state.protection_wanted:
            self.end("a session needs protection again")

    # -- the request (off the gate) -----------------------------------------------------------------
    async def read_blockers(self) -> list[SuspendBlocker]:
        """The OS's foreign sleep blockers, agents named; empty when the OS cannot list them."""
        runtime = self._runtime
        try:
            blockers = await runtime.call_platform(runtime.platform.suspend.list_blockers)
        except (Unsupported, OSError):
            return []
        except Exception as error:  # a listing bug names nothing, never stops a suspend
            runtime.exception_log.record("suspend-blockers-read-failed", error)
            return []
        blockers = still_blocking(blockers)
        if not blockers:
            return []
        watched = {session.watched_process_identifier: f"{session.key.provider.value}:{session.key.session_identifier}"
                   for session in runtime.state.sessions.values() if session.watched_process_identifier}
        return await runtime.call_platform(name_agents, blockers, runtime.platform.process.read_ancestry, watched)

    async def request(self, mode: SuspendMode) -> tuple[SuspendResult, list[SuspendBlocker]]:
        """The suspend request with the blockers read around it; the blockers are empty unless the
        request was refused (or not sent) while another program blocked sleep."""
        runtime = self._runtime
        ignore = runtime.settings.suspend_ignores_other_blockers
        before = await self.read_blockers()
        if before and not ignore:
            return SuspendResult(False, f"{mode.value} was not requested: another program blocks sleep "
                                        f"({blocker_lines(before)}); SuspendIgnoresOtherBlockers is off, so "
                                        "lidguard waits for it."), before
        try:
            suspender = runtime.platform.suspend
            # The keyword only when set: a plain ``suspend(mode)`` is the default request.
            result = await (runtime.call_platform(lambda: suspender.suspend(mode, ignore_other_blockers=True))
                            if ignore else runtime.call_platform(suspender.suspend, mode))
        except Unsupported as error:
            result = SuspendResult(False, str(error))
        except Exception as error:
            runtime.exception_log.record("suspend-request-failed", error)
            result = SuspendResult(False, f"The {mode.value} request failed: {error}")
        if result.succeeded:
            return result, []
        after = await self.read_blockers()
        blockers = merge_blockers(after, before)
        if blockers:
            result = SuspendResult(False, f"{result.message} Blocked by {blocker_lines(blockers)}.")
        return result, blockers

    # -- the wait (gate held to start or end) ---------------------------------------------------------
    def start(self, trigger: policy.EvaluateSuspend, mode: SuspendMode, blockers: list[SuspendBlocker],
              session_end: dict[str, Any] | None, *, notify: bool) -> None:
        runtime = self._runtime
        self.last_blockers = blockers
        if runtime.stopping or not runtime.running:
            return
        self.end("a newer blocked suspend", log=False)
        blocked = BlockedSuspend(trigger, mode, blockers, runtime.clock.now(), session_end)
        self.blocked = blocked
        runtime.log(f"{trigger.command}-suspend-blocked", trigger.command,
                    f"{mode.value} is blocked by another program ({blocker_lines(blockers)}); waiting for it to "
                    "end, the thermal monitor stays on.", succeeded=False,
                    extra={"Blockers": [blocker.to_wire() for blocker in blockers]})
        blocked.scope = runtime.spawn(lambda scope: self._wait(blocked))
        url = runtime.settings.pre_suspend_webhook_url
        if url and notify:
            body = suspend_blocked_body(trigger.reason, mode.value, blockers, session_end)
            runtime.webhooks.send_in_background("SuspendBlocked", url, body, trigger.command)
        runtime.state_changed()

    def end(self, why: str, *, log: bool = True, cancel: bool = True) -> None:
        blocked, self.blocked = self.blocked, None
        if blocked is None:
            return
        if cancel and blocked.scope is not None:
            blocked.scope.cancel()
        if log:
            self._runtime.log(f"{blocked.trigger.command}-suspend-blocked-wait-ended", blocked.trigger.command,
                              f"Stopped waiting for the sleep blocker because {why}.")
        self._runtime.status_changed()

    async def _open_listener(self) -> SuspendBlockerChanges | None:
        runtime = self._runtime
        try:
            return await runtime.call_platform(runtime.platform.suspend.blocker_changes)
        except (Unsupported, OSError):
            return None
        except Exception as error:
            runtime.exception_log.record("suspend-blocker-listener-failed", error)
            return None

    async def _wait(self, blocked: BlockedSuspend) -> None:
        runtime = self._runtime
        changes = await self._open_listener()
        try:
            while True:
                if changes is not None:
                    with anyio.move_on_after(LISTENER_CHECK_SECONDS):
                        try:
                            await changes.wait()
                        except OSError:
                            changes.close()
                            changes = None
                else:
                    await anyio.sleep(POLL_SECONDS)
                blockers = await self.read_blockers()
                reading = await runtime.machine.fresh()
                async with runtime.gate:
                    if self.blocked is not blocked:
                        return
                    if not reading.eligibility.eligible:
                        self.end("the lid opened or a display is on", cancel=False)
                        runtime.state_changed()
                        return
                    held = runtime.suspend.held_back()
                    if held:
                        self.end(held[0], cancel=False)
                        runtime.state_changed()
                        return
                    if blockers:
                        if blockers != blocked.blockers:
                            blocked.blockers = blockers
                            runtime.status_changed()
                        continue
                    self.blocked = None
                    runtime.log(f"{blocked.trigger.command}-suspend-blockers-released", blocked.trigger.command,
                                f"The sleep blocker is gone; requesting {blocked.mode.value} once.")
                    runtime.suspend.request_after_blockers(blocked.trigger, blocked.mode, blocked.session_end)
                    runtime.state_changed()
                    return
        finally:
            if changes is not None:
                changes.close()
            if self.blocked is blocked:
                self.blocked = None
