"""Another program's sleep blocker (issue 34.3) on trio's MockClock with the fake platform.

The fake's ``otherBlockers`` refuse a suspend unless ``ignore_other_blockers``; the runtime names the
blocker (status, suspend-history, a SuspendBlocked webhook), keeps the thermal monitor on while the lid
stays closed, polls the blockers (the fake has no change listener) and requests the suspend once when
they are gone. No real waiting: the waits are MockClock seconds.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import Harness, WebhookReceiver, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.platform.api import DisplayConnector, LidState, ProcessInfo, SuspendBlocker
from lidguard.platform.fake import FakeMachine
from lidguard.runtime.blockers import merge_blockers, name_agents, still_blocking, webhook_fields
from lidguard.runtime.components.blocked_suspend import POLL_SECONDS

URL = "http://receiver.test/hook"
BACKUP = SuspendBlocker("backup-tool", "Nightly backup", None, 1001, "sleep:shutdown", "block")


def _machine(*blockers: SuspendBlocker, temperatures: list[float] | None = None) -> FakeMachine:
    machine = closed_lid_machine()
    machine.other_blockers = list(blockers)
    machine.temperatures_celsius = temperatures or [45.0]
    return machine


def _harness(*blockers: SuspendBlocker, receiver: WebhookReceiver | None = None, **settings: Any) -> Harness:
    values = {"PostStopSuspendDelaySeconds": 0, **settings}
    return Harness(settings=with_settings(**values), machine=_machine(*blockers), receiver=receiver)


def _requests(h: Harness) -> list[dict[str, Any]]:
    return [a for a in h.platform.actions if a["action"] in ("suspend-requested", "hibernate-requested")]


async def _stop(h: Harness) -> None:
    await h.start()
    await h.stop(IsProviderSessionEnd=True, SessionEndReason="Stop")
    await anyio.sleep(0.01)


def test_a_blocked_suspend_names_the_blocker_keeps_the_monitor_and_suspends_once_when_it_goes():
    receiver = WebhookReceiver()
    harness = _harness(BACKUP, receiver=receiver, PreSuspendWebhookUrl=URL)

    async def body(h: Harness) -> None:
        await _stop(h)
        assert _requests(h) == []  # not even sent: the blocker was listed right before
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is False and entry["EventName"] == "stop-suspend-blocked"
        assert entry["Blockers"] == [{"Who": "backup-tool", "Why": "Nightly backup", "Pid": None, "Uid": 1001,
                                      "What": "sleep:shutdown", "Mode": "block", "Agent": None}]
        assert "backup-tool (Nightly backup)" in entry["Message"]
        status = await h.send("status")
        blocked = status["SuspendBlocked"]
        assert blocked["Waiting"] is True and blocked["Mode"] == "Sleep" and blocked["Reason"] == "Completed"
        assert [b["Who"] for b in blocked["Blockers"]] == ["backup-tool"]
        assert h.runtime.emergency.monitoring  # the deviation from seed 001: the monitor stays on
        assert not h.runtime.protection.applied
        assert h.runtime.busy()  # the runtime stays to suspend later
        [posted] = receiver.bodies("SuspendBlocked")
        assert posted["reason"] == "Completed" and posted["suspendMode"] == "Sleep"
        assert posted["blockerWho"] == "backup-tool" and posted["blockerUid"] == 1001
        assert posted["blockedBy"] == "backup-tool (Nightly backup), uid 1001"
        assert posted["provider"] == "Claude" and posted["sessionIdentifier"] == "s1"
        await anyio.sleep(300)
        assert _requests(h) == []  # still blocked: nothing requested, still waiting
        assert h.runtime.blocked.waiting and h.runtime.emergency.monitoring
        h.platform.machine.other_blockers = []
        await anyio.sleep(POLL_SECONDS + 0.1)
        [request] = _requests(h)
        assert request["action"] == "suspend-requested" and request["succeeded"] is True
        assert not h.runtime.blocked.waiting and (await h.send("status"))["SuspendBlocked"] is None
        newest = h.runtime.suspend_history.newest_first()[0]
        assert newest["Succeeded"] is True and "Blockers" not in newest
        assert "stop-suspend-blockers-released" in h.log_names()
        await anyio.sleep(120)
        assert len(_requests(h)) == 1  # exactly once
        assert not h.runtime.emergency.monitoring

    run_mock(lambda: with_runtime(harness, body))


def test_the_thermal_monitor_acts_while_the_suspend_waits_for_the_blocker():
    harness = _harness(BACKUP)
    harness.platform.machine.temperatures_celsius = [45.0]

    async def body(h: Harness) -> None:
        await _stop(h)
        assert h.runtime.blocked.waiting
        h.platform.machine.temperatures_celsius = [99.0]
        await anyio.sleep(10.1)
        assert "emergency-hibernation-thermal-detected" in h.log_names()
        entries = h.runtime.suspend_history.newest_first()
        emergency = [e for e in entries if e["CommandName"] == "emergency-hibernation-monitor"]
        assert [e["SuspendMode"] for e in emergency] == ["Sleep", "Hibernate"]  # newest first
        assert all(e["Blockers"][0]["Who"] == "backup-tool" for e in emergency)
        assert not h.runtime.blocked.waiting  # Emergency Hibernation took over

    run_mock(lambda: with_runtime(harness, body))


def test_the_wait_ends_without_a_suspend_when_the_lid_opens():
    harness = _harness(BACKUP)

    async def body(h: Harness) -> None:
        await _stop(h)
        assert h.runtime.blocked.waiting
        h.platform.machine.lid = LidState.OPEN
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert not h.runtime.blocked.waiting and not h.runtime.emergency.monitoring
        h.platform.machine.other_blockers = []
        await anyio.sleep(60)
        assert _requests(h) == []
        [ended] = h.log_entries("stop-suspend-blocked-wait-ended")
        assert "the lid opened" in ended["Message"]

    run_mock(lambda: with_runtime(harness, body))


async def _plug_a_display(h: Harness) -> None:
    h.platform.machine.displays = [DisplayConnector("eDP-1", True), DisplayConnector("HDMI-1", False)]
    await anyio.sleep(POLL_SECONDS + 0.1)


async def _start_a_session(h: Harness) -> None:
    await h.start("s2")
    assert h.runtime.protection.applied  # the new session gets protection at once


async def _pause(h: Harness) -> None:
    await h.send("pause", PauseSeconds=3600)
    await anyio.sleep(POLL_SECONDS + 0.1)


@pytest.mark.parametrize("end_the_wait", [_plug_a_display, _start_a_session, _pause],
                         ids=["an external display", "a new session", "a pause"])
def test_what_ends_the_wait_and_no_suspend_follows_the_release(end_the_wait: Any) -> None:
    harness = _harness(BACKUP)

    async def body(h: Harness) -> None:
        await _stop(h)
        assert h.runtime.blocked.waiting
        await end_the_wait(h)
        assert not h.runtime.blocked.waiting
        h.platform.machine.other_blockers = []
        await anyio.sleep(30)
        assert _requests(h) == []

    run_mock(lambda: with_runtime(harness, body))


def test_suspend_ignores_other_blockers_asks_the_os_to_ignore_them():
    harness = _harness(BACKUP, SuspendIgnoresOtherBlockers=True)

    async def body(h: Harness) -> None:
        await _stop(h)
        [request] = _requests(h)
        assert request["succeeded"] is True and request["ignoredOtherBlockers"] == ["backup-tool"]
        assert not h.runtime.blocked.waiting
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["Succeeded"] is True and "Blockers" not in entry

    run_mock(lambda: with_runtime(harness, body))


def test_a_changed_blocker_is_shown_and_the_wait_goes_on():
    harness = _harness(BACKUP)

    async def body(h: Harness) -> None:
        await _stop(h)
        update = SuspendBlocker("apt", "Updating packages", None, 0, "sleep", "block")
        h.platform.machine.other_blockers = [update]
        await anyio.sleep(POLL_SECONDS + 0.1)
        status = await h.send("status")
        assert [b["Who"] for b in status["SuspendBlocked"]["Blockers"]] == ["apt"]
        # A delay inhibitor or an idle-only block does not keep a suspend from going through.
        h.platform.machine.other_blockers = [SuspendBlocker("player", "video", None, 1000, "idle", "block")]
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert len(_requests(h)) == 1 and not h.runtime.blocked.waiting

    run_mock(lambda: with_runtime(harness, body))


def test_a_refused_suspend_without_a_blocker_is_a_plain_failure():
    harness = _harness()
    harness.platform.machine.suspend_succeeds = False

    async def body(h: Harness) -> None:
        await _stop(h)
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["EventName"] == "stop-suspend-failed" and "Blockers" not in entry
        assert not h.runtime.blocked.waiting and (await h.send("status"))["SuspendBlocked"] is None

    run_mock(lambda: with_runtime(harness, body))


# -- the pure helpers -------------------------------------------------------------------------------------
def test_agents_are_named_by_ancestry_first_then_by_the_who_string():
    chains = {
        50: [ProcessInfo(50, 40, "node", "/usr/bin/node", ("node", "/opt/x/@anthropic-ai/claude-code/cli.js")),
             ProcessInfo(40, 1, "bash", "/bin/bash", ("bash",))],
        60: [ProcessInfo(60, 55, "sleep", "/bin/sleep", ("sleep",)), ProcessInfo(55, 1, "codex", "", ("codex",))],
        70: [ProcessInfo(70, 65, "helper", "", ("helper",)), ProcessInfo(65, 1, "python3", "", ("python3",))],
    }

    def ancestry(pid: int) -> list[ProcessInfo]:
        if pid not in chains:
            raise ProcessLookupError(pid)
        return chains[pid]

    blockers = [SuspendBlocker("node", "", 50), SuspendBlocker("sleep", "", 60),
                SuspendBlocker("helper", "", 70), SuspendBlocker("Claude Code", "turn in progress", 999),
                SuspendBlocker("qwen-code", "preventSystemSleep", None), SuspendBlocker("backup", "", None)]
    named = name_agents(blockers, ancestry, {65: "Custom:worker-1"})
    assert [b.agent for b in named] == ["Claude", "Codex", "Custom:worker-1", "Claude", "Qwen", None]


def test_only_kinds_that_stop_a_suspend_are_waited_for_and_duplicates_merge():
    sleep = SuspendBlocker("a", "", 1, 0, "sleep:idle")
    idle = SuspendBlocker("b", "", 2, 0, "idle")
    mac = SuspendBlocker("backupd", "", 3, None, "PreventSystemSleep", "assertion")
    assert still_blocking([sleep, idle, mac]) == [sleep, mac]
    assert merge_blockers([sleep], [SuspendBlocker("a", "other why", 1, 0, "sleep:idle"), mac]) == [sleep, mac]
    fields = webhook_fields([sleep, mac])
    assert fields["blockerCount"] == 2 and fields["blockedBy"] == "a, pid 1, uid 0; backupd, pid 3"
