"""Emergency Hibernation on trio's MockClock (seed 001, REFERENCE 9.5): the thermal monitor polls every
10 s only while protection is applied with the lid closed and no external display; at the clamped
threshold it cancels the pending suspend, starts PreSuspend (EmergencyHibernation) without waiting,
requests Hibernate at once, and falls back to Sleep, recording both."""

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


def test_95_celsius_average_with_the_lid_closed_hibernates_on_the_first_tick():
    receiver = WebhookReceiver(delay=10)  # a slow receiver must not delay the request
    harness = Harness(machine=_hot(94, 96), settings=with_settings(PreSuspendWebhookUrl=URL), receiver=receiver)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(9.9)
        assert "hibernate-requested" not in h.actions()  # first tick after 10 s
        await anyio.sleep(0.2)
        assert h.actions().count("hibernate-requested") == 1
        assert "suspend-requested" not in h.actions()
        assert receiver.finished == []  # requested while the webhook still waits
        assert [b for b in receiver.bodies()] == [{"eventType": "PreSuspend", "reason": "EmergencyHibernation"}]
        [entry] = h.runtime.suspend_history.newest_first()
        assert entry["SuspendMode"] == "Hibernate" and entry["Reason"] == "EmergencyHibernation"
        assert entry["Succeeded"] is True and entry["CommandName"] == "emergency-hibernation-monitor"
        assert entry["EventName"] == "emergency-hibernation-requested"
        assert entry["ObservedTemperatureCelsius"] == 95 and entry["EmergencyHibernationTemperatureCelsius"] == 93
        assert entry["EmergencyHibernationTemperatureMode"] == "Average"
        assert "emergency-hibernation-thermal-detected" in h.log_names()
        assert h.runtime.protection.applied  # the session still runs

    run_mock(lambda: with_runtime(harness, body))


def test_hibernate_failure_requests_sleep_at_once_and_records_both():
    harness = Harness(machine=_hot(95, hibernate_succeeds=False))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(10.1)
        assert h.actions().count("hibernate-requested") == 1 and h.actions().count("suspend-requested") == 1
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
