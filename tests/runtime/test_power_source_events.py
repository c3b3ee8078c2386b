"""Power-source changes are event-driven where the OS offers it (issue 19 item 1): the power-policy
component waits on ``platform.power_source_changes()`` while a session wants protection and re-reads the
power source at once on a notification; ``Unsupported`` keeps the 60 s poll; a listener that fails
(opening or waiting) falls back to the poll and is logged once. Trio MockClock, fake platform."""

from __future__ import annotations

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime

from lidguard.platform.api import PowerSource, Unsupported
from lidguard.runtime.components.power_policy import EVENT_GAP_SECONDS, POLL_SECONDS

AC = PowerSource(True, 80, "Charging")
BATTERY_25 = PowerSource(False, 25, "Discharging")


class FakeChanges:
    """A listener the test drives: ``notify()`` is one power_supply uevent; ``fail`` makes wait() fail."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[None](16)
        self.closed = False
        self.fail: OSError | None = None

    def notify(self) -> None:
        self._send.send_nowait(None)

    async def wait(self) -> None:
        if self.fail is not None:
            raise self.fail
        await self._receive.receive()
        while True:  # what arrived together wakes once (like the kernel socket's drain)
            try:
                self._receive.receive_nowait()
            except anyio.WouldBlock:
                break
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        self.closed = True


def _harness(opened: list[FakeChanges], *, failure: Exception | None = None) -> tuple[Harness, list[float]]:
    machine = closed_lid_machine()
    machine.power_source = AC
    harness = Harness(machine=machine)
    reads: list[float] = []
    original = harness.platform.describe_power_source

    def counted() -> PowerSource:
        reads.append(anyio.current_time())
        return original()

    def power_source_changes() -> FakeChanges:
        if failure is not None:
            raise failure
        listener = FakeChanges()
        opened.append(listener)
        return listener

    harness.platform.describe_power_source = counted  # type: ignore[method-assign]
    harness.platform.power_source_changes = power_source_changes  # type: ignore[attr-defined]
    return harness, reads


def test_a_notification_re_reads_the_power_source_at_once_without_waiting_for_the_poll():
    opened: list[FakeChanges] = []
    harness, reads = _harness(opened)

    async def body(h: Harness) -> None:
        await anyio.sleep(5 * POLL_SECONDS)
        assert opened == []  # opened lazily: only while a session wants protection
        await h.start()
        await anyio.sleep(1)
        assert h.runtime.protection.applied and len(reads) == 1 and len(opened) == 1
        h.platform.machine.power_source = BATTERY_25
        before = anyio.current_time()
        opened[0].notify()
        await anyio.sleep(0.01)
        assert len(reads) == 2 and reads[-1] - before < 0.01  # at once, not after POLL_SECONDS
        assert not h.runtime.protection.applied
        await anyio.sleep(EVENT_GAP_SECONDS)
        h.platform.machine.power_source = AC
        opened[0].notify()
        await anyio.sleep(0.01)
        assert h.runtime.protection.applied and len(reads) == 3
        await anyio.sleep(EVENT_GAP_SECONDS)
        for _ in range(10):  # a burst (docking): the first at once, the rest in one more read
            opened[0].notify()
            await anyio.sleep(0.01)
        await anyio.sleep(2 * EVENT_GAP_SECONDS)
        assert len(reads) == 5
        reads[3:] = []
        await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        await anyio.sleep(0.01)
        assert opened[0].closed  # closed when no session wants protection any more
        await anyio.sleep(10 * POLL_SECONDS)
        assert len(reads) == 3 and len(opened) == 1
        assert not any(name.startswith("power-source-events") for name in h.log_names())

    run_mock(lambda: with_runtime(harness, body))


def test_unsupported_keeps_the_slow_poll_and_logs_nothing():
    opened: list[FakeChanges] = []
    harness, reads = _harness(opened, failure=Unsupported("power_source_changes", "not on this OS"))

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        h.platform.machine.power_source = BATTERY_25
        await anyio.sleep(POLL_SECONDS - 2)
        assert h.runtime.protection.applied  # nothing tells it before the poll
        await anyio.sleep(2)
        assert not h.runtime.protection.applied
        assert len(reads) == 2
        assert not any(name.startswith("power-source-events") for name in h.log_names())

    run_mock(lambda: with_runtime(harness, body))


def test_a_listener_that_cannot_open_falls_back_to_the_poll_and_logs_once():
    opened: list[FakeChanges] = []
    harness, reads = _harness(opened, failure=PermissionError(1, "Operation not permitted"))

    async def body(h: Harness) -> None:
        for _ in range(2):  # two watches: still one log line
            await h.start()
            await anyio.sleep(3 * POLL_SECONDS + 0.1)
            assert len(reads) == 4
            await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
            reads.clear()
        assert h.log_names().count("power-source-events-unavailable") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_listener_that_fails_while_waiting_falls_back_to_the_poll_closes_and_logs_once():
    opened: list[FakeChanges] = []
    harness, reads = _harness(opened)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        opened[0].fail = OSError(105, "No buffer space available")
        opened[0].notify()
        await anyio.sleep(0.01)
        assert opened[0].closed
        count = len(reads)
        h.platform.machine.power_source = BATTERY_25
        await anyio.sleep(POLL_SECONDS + 0.1)
        assert not h.runtime.protection.applied and len(reads) == count + 1
        await anyio.sleep(5 * POLL_SECONDS)
        assert len(opened) == 1  # not reopened in a loop
        assert h.log_names().count("power-source-events-unavailable") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_the_slow_poll_still_runs_beside_a_quiet_listener():
    """Not every battery sends a uevent for each percent it loses: a floor crossed without a
    notification is still seen within one slow poll."""
    opened: list[FakeChanges] = []
    harness, reads = _harness(opened)

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        h.platform.machine.power_source = BATTERY_25
        await anyio.sleep(POLL_SECONDS)
        assert not h.runtime.protection.applied and len(reads) == 2 and not opened[0].closed

    run_mock(lambda: with_runtime(harness, body))
    assert opened[0].closed  # the runtime's shutdown closes it


def _mac_notify(refuse: set[str] | None = None):
    """The real macOS listener over a fake libSystem notify(3) (tests/macos/fake_notify.py) whose
    descriptor is a real pipe."""
    import sys
    from pathlib import Path

    import cffi

    from lidguard.platform.macos._binding import MacBinding

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "tests" / "macos"))
    from fake_notify import FakeNotify

    ffi = cffi.FFI()
    ffi.cdef((root / "native" / "macos_cdef.h").read_text())
    notify = FakeNotify(ffi, refuse=refuse)
    return notify, MacBinding(ffi, None, None, notify)


def test_macos_iops_notifications_drive_the_power_policy_through_the_descriptor():
    from lidguard.platform.macos.power_events import NOTIFY_NAMES, NotifyPowerSourceChanges

    notify, binding = _mac_notify()
    opened: list[NotifyPowerSourceChanges] = []
    harness, reads = _harness([])

    def power_source_changes() -> NotifyPowerSourceChanges:
        opened.append(NotifyPowerSourceChanges(binding))
        return opened[-1]

    harness.platform.power_source_changes = power_source_changes  # type: ignore[attr-defined]

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        assert h.runtime.protection.applied and len(reads) == 1 and len(notify.tokens) == 2
        h.platform.machine.power_source = BATTERY_25
        notify.post(NOTIFY_NAMES[1])  # kIOPSNotifyPercentChange: the floor reacts at once
        await anyio.sleep(0.01)
        assert len(reads) == 2 and not h.runtime.protection.applied
        await anyio.sleep(EVENT_GAP_SECONDS)
        h.platform.machine.power_source = AC
        notify.post(NOTIFY_NAMES[0])  # kIOPSNotifyPowerSource
        await anyio.sleep(0.01)
        assert len(reads) == 3 and h.runtime.protection.applied
        await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        await anyio.sleep(0.01)
        assert notify.tokens == {} and notify.read_end is None  # cancelled: libnotify closed the descriptor
        assert not any(name.startswith("power-source-events") for name in h.log_names())

    try:
        run_mock(lambda: with_runtime(harness, body))
    finally:
        notify.close()
    assert len(opened) == 1


def test_a_refused_macos_registration_falls_back_to_the_poll_and_logs_once():
    from lidguard.platform.macos.power_events import NOTIFY_NAMES, NotifyPowerSourceChanges

    notify, binding = _mac_notify(refuse={NOTIFY_NAMES[0]})
    harness, reads = _harness([])
    harness.platform.power_source_changes = lambda: NotifyPowerSourceChanges(binding)  # type: ignore[attr-defined]

    async def body(h: Harness) -> None:
        for _ in range(2):
            await h.start()
            await anyio.sleep(1)
            h.platform.machine.power_source = BATTERY_25
            await anyio.sleep(POLL_SECONDS - 2)
            assert h.runtime.protection.applied  # no notification: the poll finds it
            await anyio.sleep(2)
            assert not h.runtime.protection.applied
            await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
            h.platform.machine.power_source = AC
        assert h.log_names().count("power-source-events-unavailable") == 1
        assert len(notify.registered) == 1  # not retried: poll only for the rest of the runtime

    try:
        run_mock(lambda: with_runtime(harness, body))
    finally:
        notify.close()


def _windows_api():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "windows"))
    from fake_winapi import FakeWindowsApi

    return FakeWindowsApi()


def _broadcast_from_a_system_thread(api, setting: str, value: int) -> None:
    import threading

    thread = threading.Thread(target=api.broadcast_setting, args=(setting, value))
    thread.start()
    thread.join(10)


def test_windows_power_setting_notifications_drive_the_power_policy():
    from lidguard.platform.windows.power_events import PowerSettingChanges
    from lidguard.platform.windows.winapi import GUID_ACDC_POWER_SOURCE, GUID_BATTERY_PERCENTAGE_REMAINING

    api = _windows_api()
    harness, reads = _harness([])
    harness.platform.power_source_changes = lambda: PowerSettingChanges(api)  # type: ignore[attr-defined]

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(1)
        assert h.runtime.protection.applied and len(reads) == 1 and len(api.notification_callbacks) == 2
        h.platform.machine.power_source = BATTERY_25
        _broadcast_from_a_system_thread(api, GUID_BATTERY_PERCENTAGE_REMAINING, 25)
        await anyio.sleep(0.01)
        assert len(reads) == 2 and not h.runtime.protection.applied
        await anyio.sleep(EVENT_GAP_SECONDS)
        h.platform.machine.power_source = AC
        _broadcast_from_a_system_thread(api, GUID_ACDC_POWER_SOURCE, 0)
        await anyio.sleep(0.01)
        assert len(reads) == 3 and h.runtime.protection.applied
        await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        await anyio.sleep(0.01)
        assert api.notification_callbacks == {}  # unregistered when no session wants protection
        assert not any(name.startswith("power-source-events") for name in h.log_names())

    run_mock(lambda: with_runtime(harness, body))


def test_a_refused_windows_registration_falls_back_to_the_poll_and_logs_once():
    from lidguard.platform.windows.power_events import PowerSettingChanges
    from lidguard.platform.windows.winapi import ERROR_ACCESS_DENIED

    api = _windows_api()
    api.fail("PowerSettingRegisterNotification", ERROR_ACCESS_DENIED, times=5)
    harness, reads = _harness([])
    harness.platform.power_source_changes = lambda: PowerSettingChanges(api)  # type: ignore[attr-defined]

    async def body(h: Harness) -> None:
        for _ in range(2):
            await h.start()
            await anyio.sleep(3 * POLL_SECONDS + 0.1)
            assert len(reads) == 4
            await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
            reads.clear()
        assert h.log_names().count("power-source-events-unavailable") == 1
        assert api.names().count("PowerSettingRegisterNotification") == 1

    run_mock(lambda: with_runtime(harness, body))
