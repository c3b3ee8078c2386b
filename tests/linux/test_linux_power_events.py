"""The Linux power-source change listener (issue 19 item 1): kernel uevents of the ``power_supply``
subsystem on an AF_NETLINK / NETLINK_KOBJECT_UEVENT socket (multicast group 1), non-blocking, parsed
strictly and bounded. A Unix datagram socket pair stands in for the netlink socket (the factory is
injected) and carries real-format uevents plus garbage; one test opens the real socket."""

from __future__ import annotations

import errno
import socket

import anyio
import pytest
import trio.testing

from lidguard.platform.api import Unsupported
from lidguard.platform.fake import FakePlatform
from lidguard.platform.linux.power_events import (
    MAX_DATAGRAM_BYTES,
    UeventPowerSourceChanges,
    is_power_supply_change,
    open_uevent_socket,
    parse_uevent,
)
from lidguard.platform.unsupported import UnsupportedPlatform


def uevent(action: str, devpath: str, subsystem: str, *extra: str) -> bytes:
    fields = [f"{action}@{devpath}", f"ACTION={action}", f"DEVPATH={devpath}", f"SUBSYSTEM={subsystem}", *extra,
              "SEQNUM=4711"]
    return b"".join(field.encode() + b"\0" for field in fields)


AC_CHANGE = uevent("change", "/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0003:00/power_supply/AC", "power_supply",
                   "POWER_SUPPLY_NAME=AC", "POWER_SUPPLY_TYPE=Mains", "POWER_SUPPLY_ONLINE=0")
BATTERY_CHANGE = uevent("change", "/devices/LNXSYSTM:00/LNXSYBUS:00/PNP0C0A:00/power_supply/BAT0", "power_supply",
                        "POWER_SUPPLY_NAME=BAT0", "POWER_SUPPLY_STATUS=Discharging", "POWER_SUPPLY_CAPACITY=25",
                        "POWER_SUPPLY_MODEL_NAME=Bätterie 5B10")
USB_ADD = uevent("add", "/devices/pci0000:00/0000:00:14.0/usb1/1-1", "usb", "DEVTYPE=usb_device")
BACKLIGHT = uevent("change", "/devices/pci0000:00/0000:00:02.0/drm/card0/card0-eDP-1/intel_backlight",
                   "backlight")

GARBAGE = [
    b"",
    b"\0",
    b"\xff",
    b"@",
    AC_CHANGE[:-1],  # the last field is not NUL-terminated
    AC_CHANGE.replace(b"\0", b"\n"),  # no NUL at all
    b"power_supply" * 10,
    AC_CHANGE.replace(b"change@", b"change"),  # header without '@'
    AC_CHANGE.replace(b"change@/", b"@/"),  # no action
    AC_CHANGE.replace(b"change@/", b"change@"),  # the device path is not absolute
    AC_CHANGE.replace(b"ACTION=change", b"ACTION=add"),  # the header and ACTION disagree
    AC_CHANGE.replace(b"ACTION=change\0", b""),  # no ACTION
    AC_CHANGE.replace(b"SUBSYSTEM=power_supply\0", b""),  # no SUBSYSTEM
    AC_CHANGE.replace(b"SUBSYSTEM=", b"SUBSYSTEM"),  # a field without '='
    AC_CHANGE.replace(b"SUBSYSTEM=", b"=power_supply\0SUBSYSTEM="),  # an empty key
    AC_CHANGE + b"SUBSYSTEM=usb\0",  # a repeated key
    AC_CHANGE.replace(b"POWER_SUPPLY_NAME=AC", b"POWER_SUPPLY_NAME=\xed\xa0\x80"),  # a lone surrogate (bad UTF-8)
    AC_CHANGE.replace(b"POWER_SUPPLY_NAME", b"power supply name"),  # not a key
    AC_CHANGE + b"POWER_SUPPLY_X=" + b"9" * MAX_DATAGRAM_BYTES + b"\0",  # huge
    AC_CHANGE + b"".join(b"K%d=v\0" % index for index in range(500)),  # too many fields
    b"libudev\0\xfe\xed\xca\xfe" + AC_CHANGE,  # udevd's own format (never on group 1)
    USB_ADD,
    BACKLIGHT,
    uevent("bind", "/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0003:00/power_supply/AC", "power_supply"),
]


@pytest.mark.parametrize("data", [AC_CHANGE, BATTERY_CHANGE,
                                  uevent("add", "/devices/platform/USBC000:00/power_supply/ucsi-source-psy-1",
                                         "power_supply"),
                                  uevent("remove", "/devices/platform/USBC000:00/power_supply/ucsi-source-psy-1",
                                         "power_supply")])
def test_real_power_supply_uevents_are_changes(data: bytes):
    assert is_power_supply_change(data)
    fields = parse_uevent(data)
    assert fields is not None and fields["SUBSYSTEM"] == "power_supply"


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_and_other_subsystems_are_no_change(data: bytes):
    assert not is_power_supply_change(data)


def test_parse_keeps_the_fields():
    fields = parse_uevent(BATTERY_CHANGE)
    assert fields is not None
    assert fields["ACTION"] == "change" and fields["POWER_SUPPLY_CAPACITY"] == "25"
    assert fields["POWER_SUPPLY_MODEL_NAME"] == "Bätterie 5B10"


def _run(test) -> None:
    anyio.run(test, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


def _pair() -> tuple[socket.socket, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    theirs.setblocking(False)
    return ours, theirs


async def _feed(kernel: socket.socket, datagrams: list[bytes]) -> None:
    """Sends like the kernel does, waiting while the (small) datagram queue is full."""
    for data in datagrams:
        while True:
            try:
                kernel.send(data)
                break
            except BlockingIOError:
                await anyio.wait_writable(kernel)


def test_a_power_supply_uevent_after_garbage_wakes_the_listener_and_garbage_alone_does_not():
    ours, kernel = _pair()
    opened: list[socket.socket] = []

    def factory() -> socket.socket:
        opened.append(ours)
        return ours

    async def body() -> None:
        listener = UeventPowerSourceChanges(open_socket=factory)
        assert opened == [ours] and not ours.getblocking()
        try:
            async with anyio.create_task_group() as feeders:
                feeders.start_soon(_feed, kernel, GARBAGE * 3)
                with anyio.move_on_after(5) as scope:
                    await listener.wait()
            assert scope.cancelled_caught  # garbage alone is no change
            async with anyio.create_task_group() as feeders:  # more than one bounded drain, then the change
                feeders.start_soon(_feed, kernel, [USB_ADD] * 300 + [b"", AC_CHANGE])
                with anyio.fail_after(5):
                    await listener.wait()
            await _feed(kernel, [BATTERY_CHANGE, BATTERY_CHANGE])
            with anyio.fail_after(5):
                await listener.wait()  # a burst is read at once: one wake for both
            with anyio.move_on_after(5) as scope:
                await listener.wait()
            assert scope.cancelled_caught
        finally:
            listener.close()
            listener.close()  # idempotent
        assert ours.fileno() == -1

    try:
        _run(body)
    finally:
        ours.close()
        kernel.close()


def test_a_socket_error_while_waiting_is_raised_and_an_overrun_counts_as_a_change():
    class Overrun:
        def __init__(self, error: int) -> None:
            self.error = error
            self.closed = False

        def setblocking(self, flag: bool) -> None:
            assert flag is False

        def fileno(self) -> int:
            return 0

        def recv(self, size: int) -> bytes:
            raise OSError(self.error, errno.errorcode[self.error])

        def close(self) -> None:
            self.closed = True

    async def body() -> None:
        overrun = UeventPowerSourceChanges(open_socket=lambda: Overrun(errno.ENOBUFS))  # type: ignore[arg-type,return-value]
        with anyio.fail_after(5):
            await overrun.wait()  # the kernel dropped uevents: one may have been a power change
        broken = UeventPowerSourceChanges(open_socket=lambda: Overrun(errno.EBADF))  # type: ignore[arg-type,return-value]
        with pytest.raises(OSError), anyio.fail_after(5):
            await broken.wait()
        broken.close()

    _run(body)


def test_the_other_platforms_keep_the_poll():
    with pytest.raises(Unsupported):
        FakePlatform().power_source_changes()
    with pytest.raises(Unsupported):
        UnsupportedPlatform("plan9").power_source_changes()


def test_the_real_netlink_uevent_socket_opens_and_closes_cleanly():
    try:
        sock = open_uevent_socket()
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EACCES, errno.EPROTONOSUPPORT, errno.EAFNOSUPPORT):
            pytest.skip(f"the kernel refuses a NETLINK_KOBJECT_UEVENT socket here: {error}")
        raise
    try:
        assert sock.family == socket.AF_NETLINK and sock.proto == 15  # NETLINK_KOBJECT_UEVENT
        assert sock.type == socket.SOCK_DGRAM and not sock.getblocking()
        _pid, groups = sock.getsockname()
        assert groups == 1  # the kernel's uevent multicast group
    finally:
        sock.close()
    assert sock.fileno() == -1

    async def body() -> None:
        listener = UeventPowerSourceChanges()
        with anyio.move_on_after(0.05):  # real time, short: no power change expected; then close
            await listener.wait()
        listener.close()

    anyio.run(body, backend="asyncio")
