"""Power-source change notifications on Linux: kernel uevents of the ``power_supply`` subsystem.

The kernel multicasts one uevent per device change on an ``AF_NETLINK`` / ``NETLINK_KOBJECT_UEVENT``
socket (group 1): ``ACTION@DEVPATH\\0ACTION=...\\0DEVPATH=...\\0SUBSYSTEM=...\\0...\\0``. An AC adapter
plugged in or out, a battery that changes state (and on many laptops its capacity) sends one with
``SUBSYSTEM=power_supply``. No root, no udevd and no D-Bus are needed to listen.

Every datagram is parsed strictly and bounded (``MAX_DATAGRAM_BYTES``, ``MAX_FIELDS``); anything else
(udevd's own ``libudev`` format, truncated or oversized datagrams, bad UTF-8, other subsystems) is
ignored. The socket is non-blocking and drained at most ``MAX_DATAGRAMS_PER_WAKE`` datagrams per wake,
so a flood of uevents never holds the event loop. A receive-buffer overrun (``ENOBUFS``: the kernel
dropped uevents) counts as a change, since one of the lost ones may have been the power change.
"""

from __future__ import annotations

import errno
import re
import socket
from collections.abc import Callable

import anyio

__all__ = [
    "MAX_DATAGRAM_BYTES",
    "MAX_DATAGRAMS_PER_WAKE",
    "MAX_FIELDS",
    "UeventPowerSourceChanges",
    "is_power_supply_change",
    "open_uevent_socket",
    "parse_uevent",
]

NETLINK_KOBJECT_UEVENT = getattr(socket, "NETLINK_KOBJECT_UEVENT", 15)  # linux/netlink.h
UEVENT_GROUP = 1  # the kernel's multicast group (udevd re-broadcasts on group 2 in its own format)
MAX_DATAGRAM_BYTES = 8192  # the kernel's uevent buffer is 2048 bytes of environment plus the header
MAX_FIELDS = 128  # the kernel allows 64 environment entries
MAX_DATAGRAMS_PER_WAKE = 64
POWER_SUPPLY_ACTIONS = frozenset({"add", "remove", "change", "online", "offline"})

_ACTION = re.compile(r"[a-z]{1,16}")
_KEY = re.compile(r"[A-Z0-9_]{1,64}")


def parse_uevent(data: bytes) -> dict[str, str] | None:
    """The fields of one kernel uevent datagram, or None when it is not exactly one."""
    if not data or len(data) > MAX_DATAGRAM_BYTES or not data.endswith(b"\0"):
        return None
    parts = data[:-1].split(b"\0")
    if len(parts) > MAX_FIELDS + 1:
        return None
    try:
        header, *entries = (part.decode("utf-8") for part in parts)
    except UnicodeDecodeError:
        return None
    action, at, devpath = header.partition("@")
    if not at or not _ACTION.fullmatch(action) or not devpath.startswith("/"):
        return None
    fields: dict[str, str] = {}
    for entry in entries:
        key, equals, value = entry.partition("=")
        if not equals or not _KEY.fullmatch(key) or key in fields:
            return None
        fields[key] = value
    if fields.get("ACTION") != action or "SUBSYSTEM" not in fields:
        return None
    return fields


def is_power_supply_change(data: bytes) -> bool:
    fields = parse_uevent(data)
    return fields is not None and fields["SUBSYSTEM"] == "power_supply" and fields["ACTION"] in POWER_SUPPLY_ACTIONS


def open_uevent_socket() -> socket.socket:
    """A non-blocking socket on the kernel's uevent multicast group; ``OSError`` when refused."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)
    try:
        sock.setblocking(False)
        sock.bind((0, UEVENT_GROUP))  # port id 0: the kernel picks one
    except BaseException:
        sock.close()
        raise
    return sock


class UeventPowerSourceChanges:
    """``wait()`` returns after a ``power_supply`` uevent; ``close()`` is idempotent. Opens at once."""

    def __init__(self, open_socket: Callable[[], socket.socket] = open_uevent_socket) -> None:
        sock = open_socket()
        sock.setblocking(False)
        self._socket: socket.socket | None = sock

    async def wait(self) -> None:
        while True:
            sock = self._socket
            if sock is None:
                raise OSError(errno.EBADF, "the power-source change listener is closed")
            if self._drain(sock):
                return
            await anyio.wait_readable(sock)

    def _drain(self, sock: socket.socket) -> bool:
        """Reads what is queued (bounded); True when a power_supply change (or an overrun) was among it."""
        changed = False
        for _ in range(MAX_DATAGRAMS_PER_WAKE):
            try:
                data = sock.recv(MAX_DATAGRAM_BYTES + 1)
            except (BlockingIOError, InterruptedError):
                return changed
            except OSError as error:
                if error.errno == errno.ENOBUFS:
                    changed = True
                    continue
                raise
            if is_power_supply_change(data):
                changed = True
        return changed

    def close(self) -> None:
        sock, self._socket = self._socket, None
        if sock is not None:
            sock.close()
