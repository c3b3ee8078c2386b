"""Power policy from seed 004 (issue 19 item 1) on the fake platform and trio's MockClock: AcOrBattery
(default) with a battery floor of 30-100 % (default 30), or AcOnly. On battery below the floor (or on
battery with AcOnly) protection and the lid policy are released while the sessions stay, shown as held
back; back on AC (or above the floor) protection returns. Unknown power fails safe (battery at the
floor). The change itself never suspends the machine."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime, with_settings

from lidguard.platform.api import PowerSource, Unsupported
from lidguard.runtime.components.power_policy import POLL_SECONDS, PowerDecision, decide
from lidguard.settings.model import PowerPolicy, Settings

AC = PowerSource(True, 80, "Charging")
BATTERY_25 = PowerSource(False, 25, "Discharging")
BATTERY_60 = PowerSource(False, 60, "Discharging")


def _power_actions(h: Harness) -> list[str]:
    wanted = ("protection-applied", "protection-released", "lid-policy-changed", "lid-policy-restored",
              "suspend-requested", "hibernate-requested")
    return [action for action in h.actions() if action in wanted]


def test_ac_to_battery_at_25_releases_protection_and_the_lid_policy_keeping_the_session_then_ac_re_applies():
    machine = closed_lid_machine()
    machine.power_source = AC
    harness = Harness(machine=machine)

    async def body(h: Harness) -> None:
        await h.start()
        assert h.runtime.protection.applied
        h.platform.machine.power_source = BATTERY_25
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert not h.runtime.protection.applied
        assert _power_actions(h) == ["protection-applied", "lid-policy-changed", "lid-policy-restored",
                                     "protection-released"]
        assert not h.paths.lid_backup_file.exists()
        status = await h.send("status")
        assert [s["SessionIdentifier"] for s in status["Sessions"]] == ["s1"]  # the session is kept
        [reason] = status["ProtectionHeldBack"]
        assert "25 %" in reason and "30 %" in reason
        assert "power-policy-protection-held-back" in h.log_names()
        h.platform.machine.power_source = AC
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert h.runtime.protection.applied
        assert (await h.send("status"))["ProtectionHeldBack"] == []
        assert "power-policy-protection-returned" in h.log_names()
        assert _power_actions(h)[-2:] == ["protection-applied", "lid-policy-changed"]
        assert "suspend-requested" not in h.actions() and "hibernate-requested" not in h.actions()
        assert h.runtime.suspend.pending is None

    run_mock(lambda: with_runtime(harness, body))


def test_a_session_started_on_a_low_battery_is_tracked_but_not_protected():
    machine = closed_lid_machine()
    machine.power_source = BATTERY_25
    harness = Harness(machine=machine)

    async def body(h: Harness) -> None:
        reply = await h.start()
        assert reply["Succeeded"]
        await anyio.sleep(1)  # the first reading comes at once, not after the slow poll
        assert not h.runtime.protection.applied and h.runtime.state.sessions
        await h.stop()  # the last session ends: the usual suspend path, nothing else
        await anyio.sleep(60)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize(("source", "shown"), [
    (PowerSource(False, None, "Discharging"), "unknown charge"),
    (OSError("EIO"), "could not be read"),
])
def test_an_unknown_battery_or_an_unreadable_source_holds_protection_back_with_the_reason(source, shown):
    """Issue 32 item 3: on battery with no percentage, or with no reading at all, AcOrBattery holds protection
    back like a low battery (it once counted as above the floor); AC returning gives it back."""
    machine = closed_lid_machine()
    machine.power_source = AC
    harness = Harness(machine=machine)

    class FailingRead(type(harness.platform)):  # type: ignore[misc]
        def describe_power_source(self) -> PowerSource:
            if isinstance(self.machine.power_source, Exception):
                raise self.machine.power_source
            return super().describe_power_source()

    harness.platform.__class__ = FailingRead

    async def body(h: Harness) -> None:
        await h.start()
        assert h.runtime.protection.applied
        h.platform.machine.power_source = source
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert not h.runtime.protection.applied and h.runtime.state.sessions
        [reason] = (await h.send("status"))["ProtectionHeldBack"]
        assert shown in reason and "30 %" in reason
        h.platform.machine.power_source = PowerSource(True, None, "Charging")  # AC, percentage unreadable
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert h.runtime.protection.applied
        assert (await h.send("status"))["ProtectionHeldBack"] == []

    run_mock(lambda: with_runtime(harness, body))


def test_ac_only_releases_on_any_battery_and_the_floor_is_a_setting():
    machine = closed_lid_machine()
    machine.power_source = BATTERY_60
    harness = Harness(machine=machine, settings=with_settings(PowerPolicy="AcOnly"))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        assert not h.runtime.protection.applied
        await h.send("settings", HasSettings=True, Settings=with_settings(PowerPolicy="AcOrBattery").to_file_json())
        await anyio.sleep(1)
        assert h.runtime.protection.applied  # 60 % is above the default floor of 30 %
        await h.send("settings", HasSettings=True, Settings=with_settings(BatteryFloorPercent=70).to_file_json())
        await anyio.sleep(1)
        assert not h.runtime.protection.applied

    run_mock(lambda: with_runtime(harness, body))


def test_the_slow_poll_runs_only_while_a_session_wants_protection():
    machine = closed_lid_machine()
    machine.power_source = AC
    reads: list[float] = []
    harness = Harness(machine=machine)
    original = harness.platform.describe_power_source

    def counted() -> PowerSource:
        reads.append(anyio.current_time())
        return original()

    harness.platform.describe_power_source = counted  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        await anyio.sleep(10 * POLL_SECONDS)
        assert reads == []
        await h.start()
        await anyio.sleep(3 * POLL_SECONDS + 0.1)
        assert len(reads) == 4  # at once, then every slow poll
        await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        count = len(reads)
        await anyio.sleep(10 * POLL_SECONDS)
        assert len(reads) == count

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize(("policy", "floor", "source", "allowed"), [
    (PowerPolicy.AC_OR_BATTERY, 30, AC, True),
    (PowerPolicy.AC_OR_BATTERY, 30, BATTERY_25, False),
    (PowerPolicy.AC_OR_BATTERY, 30, PowerSource(False, 30, None), True),  # at the floor is not below it
    (PowerPolicy.AC_OR_BATTERY, 30, PowerSource(False, 29, None), False),
    (PowerPolicy.AC_OR_BATTERY, 100, PowerSource(False, 99, None), False),
    (PowerPolicy.AC_ONLY, 30, BATTERY_60, False),
    (PowerPolicy.AC_ONLY, 30, AC, True),
    # unknown fails closed (issue 32 item 3): a battery of unknown charge, or a source that cannot be read
    # at all, holds protection back like a low battery; AC with an unreadable percentage is fine
    (PowerPolicy.AC_OR_BATTERY, 30, PowerSource(None, None, None), False),
    (PowerPolicy.AC_OR_BATTERY, 30, PowerSource(None, 90, None), True),  # 90 %: fine on battery or AC
    (PowerPolicy.AC_ONLY, 30, PowerSource(None, 90, None), False),
    (PowerPolicy.AC_OR_BATTERY, 50, PowerSource(False, None, None), False),
    (PowerPolicy.AC_OR_BATTERY, 50, PowerSource(True, None, None), True),
    (PowerPolicy.AC_OR_BATTERY, 50, OSError("read failed"), False),
    (PowerPolicy.AC_OR_BATTERY, 50, ValueError("garbled"), False),
    (PowerPolicy.AC_ONLY, 50, OSError("read failed"), False),
    # a machine that lists no battery or adapter at all (desktop, VM) runs on mains
    (PowerPolicy.AC_ONLY, 30, Unsupported("power_source", "none listed"), True),
])
def test_the_decision_is_pure(policy, floor, source: Any, allowed):
    decision = decide(policy=policy, floor_percent=floor, source=source)
    assert isinstance(decision, PowerDecision) and decision.allowed is allowed
    assert (decision.reason == "") is allowed


@pytest.mark.parametrize(("stored", "policy", "floor"), [
    ({}, PowerPolicy.AC_OR_BATTERY, 30),
    ({"PowerPolicy": "AcOnly", "BatteryFloorPercent": 55}, PowerPolicy.AC_ONLY, 55),
    ({"PowerPolicy": "acon", "BatteryFloorPercent": 5}, PowerPolicy.AC_OR_BATTERY, 30),
    ({"PowerPolicy": None, "BatteryFloorPercent": 10**30}, PowerPolicy.AC_OR_BATTERY, 100),
    ({"PowerPolicy": 3, "BatteryFloorPercent": "x"}, PowerPolicy.AC_OR_BATTERY, 30),
    ({"BatteryFloorPercent": float("nan")}, PowerPolicy.AC_OR_BATTERY, 30),
])
def test_settings_normalize_and_never_reject(stored, policy, floor):
    settings = Settings.from_raw(stored)
    assert (settings.power_policy, settings.battery_floor_percent) == (policy, floor)


def test_the_settings_command_sets_shows_and_bounds_the_power_policy(lidguard):
    result = lidguard.run("settings", "--power-policy", "aconly", "--battery-floor-percent", "55", check=True)
    assert "  Power policy: AcOrBattery (battery floor 30 %) -> AcOnly (battery floor 55 %)" in result.stdout
    shown = json.loads(lidguard.run("settings", "--json", check=True).stdout)["settings"]
    assert (shown["powerPolicy"], shown["batteryFloorPercent"]) == ("AcOnly", 55)
    for option, value, message in [
            ("--battery-floor-percent", "29", "The battery-floor-percent option must be an integer from 30 to 100."),
            ("--battery-floor-percent", "1e2", "The battery-floor-percent option must be an integer from 30 to 100."),
            ("--power-policy", "battery", "The power-policy option must be acorbattery or aconly.")]:
        failed = lidguard.run("settings", option, value)
        assert failed.returncode == 1 and failed.stderr.strip().splitlines() == [f"lidguard: {message}"]
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert (stored["PowerPolicy"], stored["BatteryFloorPercent"]) == ("AcOnly", 55)


def test_status_says_protection_is_held_back_and_the_session_is_kept(lidguard):
    battery = {"onAc": False, "batteryPercent": 25, "batteryStatus": "Discharging"}
    lidguard.set_machine(lid="closed", powerSource=battery)
    lidguard.run("start", "--provider", "claude", "--session", "low", check=True)

    def held_back() -> bool:
        return "Protection held back: On battery at 25 %" in lidguard.run("status", check=True).stdout

    assert lidguard.wait_until(held_back)
    status = lidguard.json("status")
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["low"]
    [reason] = status["protectionHeldBack"]
    assert "below the battery floor of 30 %" in reason
    actions = [a["action"] for a in lidguard.actions()]
    assert actions.count("protection-applied") == actions.count("protection-released") == 1
    assert "suspend-requested" not in actions
    lidguard.set_machine(lid="closed", powerSource={"onAc": True, "batteryPercent": 26, "batteryStatus": "Charging"})
    lidguard.run("stop", "--provider", "claude", "--session", "low", check=True)
