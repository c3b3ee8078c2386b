"""The macOS power-source change listener (issue 19 item 1): the IOPS notify(3) names
(kIOPSNotifyPowerSource, kIOPSNotifyPercentChange) on one file descriptor, waited on by the event
loop. The binding runs over a real ``cffi.FFI`` parsed from the cdef and a fake libSystem whose
descriptor is a real pipe (``fake_notify.py``)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import anyio
import cffi
import pytest
import trio.testing
from fake_notify import FakeNotify

from lidguard.platform.api import Unsupported
from lidguard.platform.macos import MacOSPlatform, _binding
from lidguard.platform.macos._binding import MacBinding
from lidguard.platform.macos.power_events import (
    NOTIFY_NAMES,
    READ_BYTES,
    NotifyPowerSourceChanges,
)

SOURCE, PERCENT = NOTIFY_NAMES
CDEF = Path(__file__).resolve().parents[2] / "native" / "macos_cdef.h"


@pytest.fixture(scope="module")
def ffi() -> cffi.FFI:
    parsed = cffi.FFI()
    parsed.cdef(CDEF.read_text())
    return parsed


@pytest.fixture
def notify(ffi):
    fake = FakeNotify(ffi)
    yield fake
    fake.close()


def _binding_over(ffi, notify) -> MacBinding:
    return MacBinding(ffi, None, None, notify)


def _run(test) -> None:
    anyio.run(test, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


async def _woken(listener: NotifyPowerSourceChanges, seconds: float = 5) -> bool:
    with anyio.move_on_after(seconds):
        await listener.wait()
        return True
    return False


def test_both_iops_names_share_one_descriptor_and_each_notification_wakes_once(ffi, notify):
    listener = NotifyPowerSourceChanges(_binding_over(ffi, notify))
    assert notify.registered == [("com.apple.system.powersources.source", 0),
                                 ("com.apple.system.powersources.percent", 1)]  # NOTIFY_REUSE
    assert not os.get_blocking(notify.read_end)

    async def body() -> None:
        assert not await _woken(listener)  # nothing posted: no wake
        notify.post(SOURCE)
        assert await _woken(listener)
        assert not await _woken(listener)  # one notification is one wake
        notify.post(PERCENT)
        assert await _woken(listener)
        for _ in range(50):  # a burst is drained in one wake
            notify.post(SOURCE)
        assert await _woken(listener)
        assert not await _woken(listener)

    try:
        _run(body)
    finally:
        listener.close()


def test_garbage_and_short_reads_are_no_change_and_a_token_split_across_reads_is_one(ffi, notify):
    listener = NotifyPowerSourceChanges(_binding_over(ffi, notify))
    token = notify.token_of(SOURCE).to_bytes(4, "big")

    async def body() -> None:
        for garbage in (b"\x00\x00\x00\x00", b"\xff" * 4, token[::-1], b"\x01\x02", b"\x03\x04",
                        b"\x00" * (3 * READ_BYTES + 4)):  # more than one read
            notify.write(garbage)
            assert not await _woken(listener), garbage[:8]
        notify.write(token[:1])  # a short read waits for the rest of its token
        assert not await _woken(listener)
        notify.write(token[1:])
        assert await _woken(listener)

    try:
        _run(body)
    finally:
        listener.close()


def test_close_cancels_every_registration_which_closes_the_descriptor_and_wait_then_fails(ffi, notify):
    listener = NotifyPowerSourceChanges(_binding_over(ffi, notify))
    descriptor = notify.read_end
    tokens = sorted(notify.tokens)
    listener.close()
    listener.close()  # idempotent
    assert sorted(notify.cancelled) == tokens and notify.tokens == {}
    with pytest.raises(OSError) as closed:
        os.fstat(descriptor)
    assert closed.value.errno == errno.EBADF

    async def body() -> None:
        with pytest.raises(OSError):
            await listener.wait()

    _run(body)


def test_end_of_file_on_the_descriptor_is_a_broken_listener(ffi, notify):
    listener = NotifyPowerSourceChanges(_binding_over(ffi, notify))
    os.close(notify.write_end)
    notify.write_end = None

    async def body() -> None:
        with pytest.raises(OSError), anyio.fail_after(5):
            await listener.wait()

    try:
        _run(body)
    finally:
        listener.close()


def test_a_refused_registration_raises_and_cancels_what_was_registered(ffi):
    notify = FakeNotify(ffi, refuse={PERCENT})
    try:
        with pytest.raises(OSError, match="notify_register_file_descriptor"):
            NotifyPowerSourceChanges(_binding_over(ffi, notify))
        assert len(notify.cancelled) == 1 and notify.tokens == {} and notify.read_end is None
    finally:
        notify.close()


def test_the_platform_listens_only_when_the_binding_is_active(monkeypatch, ffi, notify):
    monkeypatch.setattr(_binding, "active_binding", lambda: _binding_over(ffi, notify))
    listener = MacOSPlatform().power_source_changes()
    try:
        assert isinstance(listener, NotifyPowerSourceChanges) and len(notify.tokens) == 2
    finally:
        listener.close()

    def inactive() -> MacBinding:
        raise _binding.BindingInactive("disabled by LIDGUARD_MACOS_BINDING=off")

    monkeypatch.setattr(_binding, "active_binding", inactive)
    with pytest.raises(Unsupported, match="LIDGUARD_MACOS_BINDING=off"):
        MacOSPlatform().power_source_changes()


def test_the_descriptor_wakes_the_asyncio_loop_too(ffi, notify):
    listener = NotifyPowerSourceChanges(_binding_over(ffi, notify))

    async def body() -> None:
        notify.post(SOURCE)
        with anyio.fail_after(10):
            await listener.wait()

    try:
        anyio.run(body, backend="asyncio")
    finally:
        listener.close()
