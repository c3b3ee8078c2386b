"""Emergency Hibernation on the Linux backend against the strict logind mock (issue 19): logind refuses
every sleep request while any block inhibitor on sleep is held, lidguard's own included. The runtime
must send and await PreSuspend, release its own inhibitors right before Hibernate, fall back to Sleep,
and re-apply protection for the running session when both are refused.

In-process runtime on the real clock with the 10 s poll shortened; the thermal sampler is wrapped to
count its readings ("within one poll of the threshold" = the first hot reading triggers). Nothing
reaches the machine's logind: every call goes to the private bus of ``system_bus``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from dbus_harness import BLOCKED_BY_INHIBITOR, LogindMock
from test_linux_suspend_flow import ACCESS_DENIED, Receiver, _settings, _wait_for, build_machine, ours

from lidguard.platform import load_platform
from lidguard.platform.api import ProtectionRequest, SuspendMode
from lidguard.platform.linux.power import LinuxPowerRequests
from lidguard.platform.linux.suspend import LinuxSuspender
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.runtime.components import emergency

pytestmark = pytest.mark.dbus

POLL = 0.4  # the 10 s period, shortened for the real clock
LID_ONLY = ["handle-lid-switch"]  # what lidguard still holds at its own request


class CountingThermal:
    """The Linux thermal reader, recording every reading it hands to the monitor."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.readings: list[tuple[float, list[float]]] = []

    def read_temperatures_celsius(self) -> list[float]:
        values = self._inner.read_temperatures_celsius()
        self.readings.append((time.monotonic(), values))
        return values

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def linux_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = tmp_path / "machine"
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(root))
    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")
    monkeypatch.setattr(emergency, "POLL_SECONDS", POLL)
    return root


@pytest.fixture
def slow_receiver() -> Iterator[Receiver]:
    server = Receiver(delay=1.0)  # answers after 1 s: the request must wait for the answer
    yield server
    server.close()


def _runtime(**settings: Any) -> tuple[Runtime, CountingThermal]:
    platform = load_platform("linux")
    thermal = CountingThermal(platform.thermal)
    platform.thermal = thermal  # type: ignore[misc]
    return Runtime(platform=platform, paths=resolve_paths(), settings=_settings(**settings)), thermal


def _run(runtime: Runtime, until: Any, *, session: str = "hot") -> None:
    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            started = await runtime.handle_message({"Command": "start", "Provider": "Codex",
                                                    "SessionIdentifier": session})
            assert started["Succeeded"], started["Message"]
            await _wait_for(until)
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(main, backend="trio")


def test_the_strict_mock_refuses_while_any_sleep_block_inhibitor_is_held_even_the_callers_own(
        binding_active, logind_mock: LogindMock):
    handle = LinuxPowerRequests().apply(ProtectionRequest())
    assert logind_mock.wait_for_inhibitors(lambda entries: len(ours(entries)) == 2)  # sleep, idle
    refused = LinuxSuspender().suspend(SuspendMode.HIBERNATE)
    assert not refused.succeeded and BLOCKED_BY_INHIBITOR in refused.message
    handle.release()
    assert logind_mock.wait_for_inhibitors(lambda entries: not ours(entries)) == []
    assert LinuxSuspender().suspend(SuspendMode.HIBERNATE).succeeded
    [accepted] = logind_mock.accepted_calls()
    assert accepted["method"] == "Hibernate" and accepted["args"] == [False]
    assert accepted["held"] == []


def test_hot_closed_lid_one_accepted_hibernate_on_the_first_hot_reading_after_the_awaited_webhook(
        binding_active, logind_mock: LogindMock, linux_machine, slow_receiver):
    build_machine(linux_machine, lid="closed", connectors={"card0-eDP-1": "connected"},
                  millicelsius=[94000, 96000])
    runtime, thermal = _runtime(PreSuspendWebhookUrl=slow_receiver.url)
    _run(runtime, lambda: logind_mock.accepted_calls())
    [accepted] = logind_mock.accepted_calls()
    assert accepted["method"] == "Hibernate" and accepted["args"] == [False]
    # sleep and idle released right before the request, the lid inhibitor only after it (a real logind
    # with HandleLidSwitch=suspend suspends by itself when it goes with the lid closed: tests/reallogind)
    assert [entry[0] for entry in accepted["held"]] == LID_ONLY
    assert logind_mock.get_method_calls("Suspend") == []
    # Within one poll of the threshold: the very first (hot) reading triggered it.
    assert [values for _, values in thermal.readings] == [[94.0, 96.0]]
    [post] = slow_receiver.posts
    assert post["body"] == {"eventType": "PreSuspend", "reason": "EmergencyHibernation"}
    assert thermal.readings[0][0] <= post["at"] and post["at"] + 1.0 <= accepted["at"]  # answered, then requested
    [entry] = runtime.suspend_history.newest_first()
    assert entry["SuspendMode"] == "Hibernate" and entry["Succeeded"] is True
    assert not ours(logind_mock.list_inhibitors())  # the lid stays closed: protection stays away


def test_hibernate_refused_falls_back_to_one_accepted_sleep(binding_active, logind_mock: LogindMock, linux_machine):
    build_machine(linux_machine, lid="closed", connectors={"card0-eDP-1": "connected"}, millicelsius=[99000])
    logind_mock.add_method("Hibernate", "b", "", ACCESS_DENIED)
    runtime, _ = _runtime()
    _run(runtime, lambda: logind_mock.accepted_calls())
    assert [(call["method"], [entry[0] for entry in call["held"]]) for call in logind_mock.accepted_calls()] \
        == [("Suspend", LID_ONLY)]
    assert len(logind_mock.get_method_calls("Hibernate")) == 1
    sleep, hibernate = runtime.suspend_history.newest_first()
    assert (hibernate["SuspendMode"], hibernate["Succeeded"]) == ("Hibernate", False)
    assert (sleep["SuspendMode"], sleep["Succeeded"]) == ("Sleep", True)


def test_both_refused_re_applies_the_inhibitors_for_the_running_session(
        binding_active, logind_mock: LogindMock, linux_machine):
    build_machine(linux_machine, lid="closed", connectors={"card0-eDP-1": "connected"}, millicelsius=[99000])
    logind_mock.add_method("Hibernate", "b", "", ACCESS_DENIED)
    logind_mock.add_method("Suspend", "b", "", ACCESS_DENIED)
    runtime, _ = _runtime()
    reapplied: list[bool] = []

    def protected_again() -> bool:
        if len(runtime.suspend_history.newest_first()) >= 2 and runtime.protection.applied:
            reapplied.append(len(ours(logind_mock.list_inhibitors())) == 3)
        return bool(reapplied)

    _run(runtime, protected_again)
    assert reapplied == [True]  # sleep, idle and handle-lid-switch held again while the session runs
    assert logind_mock.accepted_calls() == []
    log = (resolve_paths().session_log_file).read_text()
    assert "emergency-hibernation-protection-reapplied" in log


def test_lid_open_nothing_is_requested(binding_active, logind_mock: LogindMock, linux_machine, monkeypatch):
    build_machine(linux_machine, lid="open", connectors={"card0-eDP-1": "connected"}, millicelsius=[105000])
    runtime, thermal = _runtime()
    ticks: list[float] = []
    original = emergency.EmergencyComponent._tick

    async def counted(self: emergency.EmergencyComponent) -> None:
        await original(self)
        ticks.append(time.monotonic())

    monkeypatch.setattr(emergency.EmergencyComponent, "_tick", counted)
    _run(runtime, lambda: len(ticks) >= 3)
    assert logind_mock.get_method_calls("Hibernate") == [] and logind_mock.get_method_calls("Suspend") == []
    assert thermal.readings == []  # the lid is open: no thermal read at all
    assert runtime.suspend_history.newest_first() == []
