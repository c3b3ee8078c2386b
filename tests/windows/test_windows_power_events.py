"""The Windows power-source change listener (issue 19 item 1): power setting notifications
(GUID_ACDC_POWER_SOURCE, GUID_BATTERY_PERCENTAGE_REMAINING) through ``winapi.py``; the callback runs
on a system thread - here a real other thread of the fake binding - and hands the change to the event
loop through a socket pair."""

from __future__ import annotations

import threading

import anyio
import pytest
import trio.testing
from fake_winapi import FakeWindowsApi

from lidguard.platform.api import Unsupported
from lidguard.platform.windows.backend import WindowsPlatform
from lidguard.platform.windows.power_events import PowerSettingChanges
from lidguard.platform.windows.winapi import (
    ERROR_ACCESS_DENIED,
    GUID_ACDC_POWER_SOURCE,
    GUID_BATTERY_PERCENTAGE_REMAINING,
    GUID_LIDSWITCH_STATE_CHANGE,
    WindowsApiError,
)


def _run(test) -> None:
    anyio.run(test, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


def _from_system_thread(api: FakeWindowsApi, setting: str, value: int, times: int = 1) -> None:
    def broadcast() -> None:
        for _ in range(times):
            api.broadcast_setting(setting, value)

    thread = threading.Thread(target=broadcast)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()


async def _woken(listener: PowerSettingChanges, seconds: float = 5) -> bool:
    with anyio.move_on_after(seconds):
        await listener.wait()
        return True
    return False


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_notification_from_another_thread_wakes_the_loop_once(backend):
    api = FakeWindowsApi()
    listener = PowerSettingChanges(api)
    assert sorted(api.notification_settings.values()) == sorted([GUID_ACDC_POWER_SOURCE,
                                                                  GUID_BATTERY_PERCENTAGE_REMAINING])

    async def body() -> None:
        if backend == "trio":
            assert not await _woken(listener)  # nothing broadcast: no wake
        _from_system_thread(api, GUID_ACDC_POWER_SOURCE, 1)  # on battery
        assert await _woken(listener)
        if backend == "trio":
            assert not await _woken(listener)
        _from_system_thread(api, GUID_BATTERY_PERCENTAGE_REMAINING, 25)
        assert await _woken(listener)
        _from_system_thread(api, GUID_BATTERY_PERCENTAGE_REMAINING, 24, times=100_000)  # more than the pair holds
        assert await _woken(listener)
        _from_system_thread(api, GUID_LIDSWITCH_STATE_CHANGE, 0)  # another setting: not ours
        if backend == "trio":
            assert not await _woken(listener, 60)

    try:
        if backend == "trio":
            _run(body)
        else:
            anyio.run(body, backend="asyncio")
    finally:
        listener.close()
    assert api.notification_callbacks == {}


def test_close_unregisters_both_and_a_late_callback_is_harmless():
    api = FakeWindowsApi()
    listener = PowerSettingChanges(api)
    callbacks = list(api.notification_callbacks.values())
    listener.close()
    listener.close()  # idempotent
    assert api.names().count("PowerSettingUnregisterNotification") == 2 and api.notification_callbacks == {}
    thread = threading.Thread(target=lambda: [callback(0) for callback in callbacks])  # Windows racing close
    thread.start()
    thread.join(10)

    async def body() -> None:
        with pytest.raises(OSError):
            await listener.wait()

    _run(body)


def test_a_refused_registration_raises_and_unregisters_what_was_registered():
    api = FakeWindowsApi()
    api.fail("PowerSettingRegisterNotification", ERROR_ACCESS_DENIED)
    with pytest.raises(OSError):
        PowerSettingChanges(api)
    assert api.notification_callbacks == {}
    api.calls.clear()
    real = api.power_setting_register_notification

    def second_fails(setting, callback):
        if setting == GUID_BATTERY_PERCENTAGE_REMAINING:
            raise WindowsApiError("PowerSettingRegisterNotification", ERROR_ACCESS_DENIED)
        return real(setting, callback)

    api.power_setting_register_notification = second_fails  # type: ignore[method-assign]
    with pytest.raises(WindowsApiError):
        PowerSettingChanges(api)
    assert api.names() == ["PowerSettingRegisterNotification", "PowerSettingUnregisterNotification"]
    assert api.notification_callbacks == {}


def test_the_platform_listens_only_with_the_binding():
    api = FakeWindowsApi()
    listener = WindowsPlatform(api).power_source_changes()
    try:
        assert isinstance(listener, PowerSettingChanges) and len(api.notification_callbacks) == 2
    finally:
        listener.close()
    with pytest.raises(Unsupported, match="binding is unavailable"):
        WindowsPlatform(None, binding_reason="not Windows").power_source_changes()
