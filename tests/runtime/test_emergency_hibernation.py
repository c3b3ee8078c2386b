"""Emergency Hibernation on trio's MockClock (seed 001, REFERENCE 9.5, issue 19): the thermal monitor
polls every 10 s only while protection is applied with the lid closed and no external display; at the
clamped threshold it cancels the pending suspend, sends PreSuspend (EmergencyHibernation) and waits for
it at most 5 s, releases lidguard's own blockers (keep-awake, lid policy restored from the backup),
requests Hibernate, falls back to Sleep, and re-applies protection when both fail. The fake platform
refuses any request while lidguard itself still holds a blocker, as a strict OS does."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import Harness, WebhookReceiver, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.platform.api import DisplayConnector, LidState
from lidguard.platform.fake import FakeMachine
from lidguard.runtime.components.emergency import clamp_threshold, decide_tick, monitor_wanted
from lidguard.runtime.eligibility import Eligibility

URL = "http://receiver.test/hook"


def _hot(*temperatures: float, lid: LidState = LidState.CLOSED, **machine: Any) -> FakeMachine:
    fake = closed_lid_machine() if lid is LidState.CLOSED else FakeMachine(lid=lid)
    fake.temperatures_celsius = list(temperatures)
    for name, value in machine.items():
        setattr(fake, name, value)
    return fake


def _requests(h: Harness) -> list[dict[str, Any]]:
    return [a for a in h.platform.actions if a["action"] in ("hibernate-requested", "suspend-requested")]


def test_95_celsius_average_with_the_lid_closed_hibernates_on_the_first_tick_after_the_webhook():
    receiver = WebhookReceiver(delay=2)  # the request waits for the webhook's answer
    harness = Harness(machine=_hot(94, 96), settings=with_settings(PreSuspendWebhookUrl=URL), receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(9.9)
        assert "hibernate-requested" not in h.actions()  # first tick after 10 s
        await anyio.sleep(0.2)
        assert [b for b in receiver.bodies()] == [{"eventType": "PreSuspend", "reason": "EmergencyHibernation"}]
        assert "hibernate-requested" not in h.actions()  # the webhook is still being answered
        await anyio.sleep(2)
        assert receiver.finished == [pytest.approx(12.0)]
        [request] = _requests(h)
        assert request["action"] == "hibernate-requested" and request["succeeded"] is True
        assert request["blockedBy"] == []  # lidguard's own keep-awake and lid policy were released first
        actions = h.actions()
        hibernate = actions.index("hibernate-requested")
        assert actions.index("protection-released") < hibernate and actions.index("lid-policy-restored") < hibernate
        assert "suspend-requested" not in actions
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["SuspendMode"] == "Hibernate" and entry["Reason"] == "EmergencyHibernation"
        assert entry["Succeeded"] is True and entry["CommandName"] == "emergency-hibernation-monitor"
        assert entry["EventName"] == "emergency-hibernation-requested"
        assert entry["ObservedTemperatureCelsius"] == 95 and entry["EmergencyHibernationTemperatureCelsius"] == 93
        assert entry["EmergencyHibernationTemperatureMode"] == "Average"
        assert "emergency-hibernation-thermal-detected" in h.log_names()
        # The session still runs, but protection stays away while the lid stays closed (no re-apply that
        # could undo the hibernation); opening the lid brings it back.
        assert not h.runtime.protection.applied and h.runtime.state.sessions
        await anyio.sleep(60)
        assert not h.runtime.protection.applied and len(_requests(h)) == 1
        h.platform.machine.lid = LidState.OPEN
        await anyio.sleep(10.1)
        assert h.runtime.protection.applied
        assert h.actions().count("protection-applied") == 2 and h.actions().count("lid-policy-changed") == 2
        assert "emergency-hibernation-protection-returned" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_a_webhook_that_never_answers_delays_the_request_by_at_most_5_seconds():
    receiver = WebhookReceiver(delay=600)
    harness = Harness(machine=_hot(99), settings=with_settings(PreSuspendWebhookUrl=URL), receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(14.9)
        assert "hibernate-requested" not in h.actions()
        await anyio.sleep(0.2)
        assert h.actions().count("hibernate-requested") == 1 and receiver.finished == []
        assert "emergency-hibernation-webhook-failed" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_a_failing_webhook_does_not_stop_the_request():
    receiver = WebhookReceiver(down=True)
    harness = Harness(machine=_hot(99), settings=with_settings(PreSuspendWebhookUrl=URL), receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert h.actions().count("hibernate-requested") == 1
        assert "emergency-hibernation-webhook-failed" in h.log_names()

    run_mock(lambda: with_runtime(harness, body))


def test_both_requests_refused_re_applies_protection_for_the_running_session_and_logs_it():
    harness = Harness(machine=_hot(95, hibernate_succeeds=False, suspend_succeeds=False))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert [(r["action"], r["succeeded"], r["blockedBy"]) for r in _requests(h)] == [
            ("hibernate-requested", False, []), ("suspend-requested", False, [])]
        assert h.runtime.protection.applied
        assert h.actions().count("protection-applied") == 2 and h.actions().count("lid-policy-changed") == 2
        [entry] = h.log_entries("emergency-hibernation-protection-reapplied")
        assert entry["Succeeded"] is False

    run_mock(lambda: with_runtime(harness, body))


def test_hibernate_failure_requests_sleep_at_once_and_records_both():
    harness = Harness(machine=_hot(95, hibernate_succeeds=False))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert h.actions().count("hibernate-requested") == 1 and h.actions().count("suspend-requested") == 1
        assert [(r["action"], r["succeeded"], r["blockedBy"]) for r in _requests(h)] == [
            ("hibernate-requested", False, []), ("suspend-requested", True, [])]
        sleep, hibernate = h.runtime.suspend_history.newest_first()
        assert hibernate["SuspendMode"] == "Hibernate" and hibernate["Succeeded"] is False
        assert hibernate["EventName"] == "emergency-hibernation-failed"
        assert sleep["SuspendMode"] == "Sleep" and sleep["Succeeded"] is True
        assert sleep["EventName"] == "emergency-hibernation-sleep-fallback-requested"
        assert sleep["Reason"] == "EmergencyHibernation" and sleep["ObservedTemperatureCelsius"] == 95

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("machine", [
    _hot(95, lid=LidState.OPEN),
    _hot(95, lid=LidState.UNKNOWN),
    _hot(95, displays=[DisplayConnector("eDP-1", True), DisplayConnector("HDMI-A-1", False)]),
    _hot(),  # temperature unavailable
], ids=["lid-open", "lid-unknown", "external-display", "no-temperature"])
def test_nothing_happens_with_the_lid_open_a_display_on_or_no_temperature(machine):
    harness = Harness(machine=machine)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(60)
        assert "hibernate-requested" not in h.actions() and "suspend-requested" not in h.actions()
        assert h.runtime.suspend_history.newest_first() == []

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("mode, triggers", [("Low", False), ("Average", False), ("High", True)])
def test_low_average_high_aggregate_the_zones(mode, triggers):
    harness = Harness(machine=_hot(80, 100), settings=with_settings(EmergencyHibernationTemperatureMode=mode))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert ("hibernate-requested" in h.actions()) is triggers

    run_mock(lambda: with_runtime(harness, body))


def test_emergency_cancels_the_pending_suspend_and_ignores_its_mode_delay_and_sound():
    receiver = WebhookReceiver()
    settings = with_settings(PostStopSuspendDelaySeconds=30, PostStopSuspendSound="Beep", PreSuspendWebhookUrl=URL)
    harness = Harness(machine=_hot(99), settings=settings, receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()  # pending suspend: Sleep in 30 s; protection kept, so the monitor runs
        assert h.runtime.emergency.monitoring
        await anyio.sleep(10.1)
        assert h.actions().count("hibernate-requested") == 1
        assert "stop-suspend-canceled" in h.log_names()
        await anyio.sleep(60)
        assert "suspend-requested" not in h.actions() and "sound-played" not in h.actions()
        assert [b["reason"] for b in receiver.bodies()] == ["EmergencyHibernation"]
        assert h.runtime.suspend.pending is None

    run_mock(lambda: with_runtime(harness, body))


def test_the_monitor_runs_only_while_protection_is_wanted_and_the_setting_is_on():
    harness = Harness(machine=_hot(99, lid=LidState.OPEN))

    async def body(h: Harness) -> None:
        assert not h.runtime.emergency.monitoring
        await h.start()
        assert h.runtime.emergency.monitoring
        off = with_settings(EmergencyHibernationOnHighTemperature=False)
        await h.send("settings", HasSettings=True, Settings=off.to_file_json())
        assert not h.runtime.emergency.monitoring
        await h.send("settings", HasSettings=True, Settings=with_settings().to_file_json())
        assert h.runtime.emergency.monitoring
        await h.stop()  # lid open: no suspend, protection released
        assert not h.runtime.emergency.monitoring

    run_mock(lambda: with_runtime(harness, body))


def test_clamp_and_tick_decisions_are_pure():
    eligible, open_lid = Eligibility(True, ""), Eligibility(False, "the lid is open.")
    assert [clamp_threshold(value) for value in (0, 70, 93, 110, 500)] == [70, 70, 93, 110, 110]
    assert decide_tick(protection_applied=True, eligibility=eligible, observed=93, threshold_setting=93).trigger
    assert not decide_tick(protection_applied=True, eligibility=eligible, observed=92, threshold_setting=93).trigger
    assert decide_tick(protection_applied=True, eligibility=eligible, observed=70, threshold_setting=20).trigger
    assert not decide_tick(protection_applied=True, eligibility=eligible, observed=None, threshold_setting=70).trigger
    assert not decide_tick(protection_applied=True, eligibility=open_lid, observed=120, threshold_setting=70).trigger
    assert not decide_tick(protection_applied=False, eligibility=eligible, observed=120, threshold_setting=70).trigger
    assert monitor_wanted(enabled=True, protection_wanted=True, stopping=False)
    assert not monitor_wanted(enabled=False, protection_wanted=True, stopping=False)
    assert not monitor_wanted(enabled=True, protection_wanted=False, stopping=False)
    assert not monitor_wanted(enabled=True, protection_wanted=True, stopping=True)


def test_the_fake_refuses_every_request_while_lidguard_holds_a_blocker_like_a_strict_os():
    from lidguard.platform.api import ProtectionRequest, SuspendMode
    from lidguard.platform.fake import FakePlatform

    platform = FakePlatform(FakeMachine())
    handle = platform.power.apply(ProtectionRequest())
    snapshot = platform.lid_policy.read_lid_actions()
    platform.lid_policy.set_do_nothing(snapshot)
    refused = platform.suspend.suspend(SuspendMode.HIBERNATE)
    assert not refused.succeeded and "keep-awake" in refused.message and "lid policy" in refused.message
    handle.release()
    assert not platform.suspend.suspend(SuspendMode.SLEEP).succeeded  # the lid policy alone still blocks
    platform.lid_policy.restore_lid_actions(snapshot)
    assert platform.suspend.suspend(SuspendMode.SLEEP).succeeded
    assert [a["blockedBy"] for a in platform.actions if a["action"].endswith("-requested")] == [
        ["keep-awake", "lid policy"], ["lid policy"], []]


def test_turning_the_setting_off_after_an_accepted_request_gives_protection_back():
    harness = Harness(machine=_hot(99))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert h.actions().count("hibernate-requested") == 1 and not h.runtime.protection.applied
        off = with_settings(EmergencyHibernationOnHighTemperature=False)
        await h.send("settings", HasSettings=True, Settings=off.to_file_json())
        assert h.runtime.protection.applied and h.runtime.protection.held_back() == []
        await anyio.sleep(60)
        assert h.actions().count("hibernate-requested") == 1

    run_mock(lambda: with_runtime(harness, body))
