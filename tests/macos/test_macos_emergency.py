"""Emergency Hibernation on the macOS backend over the stand-in tools (issue 19): with the lid policy
applied (`pmset -a disablesleep 1`) `pmset sleepnow` answers but the Mac stays awake, so the runtime
must restore SleepDisabled from the backup (`disablesleep 0`) and end caffeinate right before
`sleepnow`. The stand-in `pmset sleepnow` counts real sleeps (SleepDisabled 0) and prevented ones.

In-process runtime on the real clock with the 10 s poll shortened; every tool call is recorded.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from lidguard.platform import load_platform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.runtime.components import emergency
from lidguard.settings.model import Settings, headless_defaults

DISABLE = ["sudo", "-n", "pmset", "-a", "disablesleep", "1"]
ENABLE = ["sudo", "-n", "pmset", "-a", "disablesleep", "0"]
SLEEPNOW = ["pmset", "sleepnow"]


@pytest.fixture
def hot_mac(standins, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(emergency, "POLL_SECONDS", 0.4)  # the 10 s period, shortened for the real clock
    standins.set_machine(clamshell="closed", displays="apple-silicon-builtin", cpu_temperature=101.0)
    return standins


def _run(until: Any) -> Runtime:
    settings = Settings.from_raw({**headless_defaults().to_file_json(),
                                        "EmergencyHibernationTemperatureMode": "High"})
    runtime = Runtime(platform=load_platform("macos"), paths=resolve_paths(), settings=settings)

    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Claude",
                                                    "SessionIdentifier": "hot"})
            assert started["Succeeded"], started["Message"]
            with anyio.fail_after(60):
                while not until(runtime):
                    await anyio.sleep(0.05)
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(main, backend="trio")
    return runtime


def _order(tools) -> list[list[str]]:
    """The lid-policy writes, hibernatemode writes and sleepnow calls, in the order they ran."""
    return [call for call in tools.commands() if call in (DISABLE, ENABLE, SLEEPNOW)
            or call[:4] == ["sudo", "-n", "pmset", "-a"] and call[4] == "hibernatemode"]


def test_disablesleep_0_before_sleepnow_and_one_real_hibernation(hot_mac):
    runtime = _run(lambda r: r.suspend_history.newest_first())
    assert _order(hot_mac) == [DISABLE, ENABLE, ["sudo", "-n", "pmset", "-a", "hibernatemode", "25"], SLEEPNOW]
    machine = hot_mac.machine()
    assert machine.get("sleeps") == 1 and "sleeps_prevented" not in machine
    [entry] = runtime.suspend_history.newest_first()
    assert entry["SuspendMode"] == "Hibernate" and entry["Succeeded"] is True


def test_hibernate_refused_falls_back_to_one_real_sleep(hot_mac):
    hot_mac.set_machine(hibernatemode=7)  # not a mode lidguard may change: Hibernate is not requested
    runtime = _run(lambda r: len(r.suspend_history.newest_first()) >= 2)
    assert _order(hot_mac) == [DISABLE, ENABLE, SLEEPNOW]
    assert hot_mac.machine().get("sleeps") == 1
    sleep, hibernate = runtime.suspend_history.newest_first()
    assert (hibernate["SuspendMode"], hibernate["Succeeded"]) == ("Hibernate", False)
    assert (sleep["SuspendMode"], sleep["Succeeded"]) == ("Sleep", True)


def test_lid_open_nothing(hot_mac, monkeypatch):
    hot_mac.set_machine(clamshell="open")
    ticks: list[float] = []
    original = emergency.EmergencyComponent._tick

    async def counted(self: emergency.EmergencyComponent) -> None:
        await original(self)
        ticks.append(time.monotonic())

    monkeypatch.setattr(emergency.EmergencyComponent, "_tick", counted)
    runtime = _run(lambda r: len(ticks) >= 3)
    assert SLEEPNOW not in hot_mac.commands("pmset") and runtime.suspend_history.newest_first() == []
    assert not [call for call in hot_mac.commands("sudo") if "powermetrics" in call]
