"""Power-source change notifications on macOS: Darwin notify(3) names of IOPowerSources.

``kIOPSNotifyPowerSource`` ("com.apple.system.powersources.source": AC plugged in or out) and
``kIOPSNotifyPercentChange`` ("com.apple.system.powersources.percent": the battery floor can react)
are registered on one file descriptor with ``notify_register_file_descriptor`` (``_binding.py``).
Each notification writes the registration's token to it, a 4-byte int in network byte order, so
the event loop waits on the descriptor (``anyio.wait_readable``): no CFRunLoop, no thread.

The descriptor is non-blocking and drained at most ``MAX_READS_PER_WAKE`` reads per wake. Only
whole tokens this listener registered count as a change (a short read waits for its remaining
bytes; any other value is ignored); end of file means the listener broke (``OSError``).
``close`` cancels the registrations, which closes the descriptor (libnotify owns it).
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from ._binding import MacBinding

__all__ = ["MAX_READS_PER_WAKE", "NOTIFY_NAMES", "NotifyPowerSourceChanges"]

NOTIFY_NAMES = ("com.apple.system.powersources.source", "com.apple.system.powersources.percent")
TOKEN_BYTES = 4
READ_BYTES = 4096
MAX_READS_PER_WAKE = 16


class NotifyPowerSourceChanges:
    """``wait()`` returns after a power-source or percent notification; ``close()`` is idempotent.
    Registers at once; ``OSError`` when notify(3) refuses (the runtime then polls)."""

    def __init__(self, binding: MacBinding) -> None:
        descriptor, tokens = binding.register_notifications(NOTIFY_NAMES)
        self._binding = binding
        self._tokens: list[int] | None = tokens
        self._descriptor = descriptor
        self._ours = frozenset((token & 0xFFFFFFFF).to_bytes(TOKEN_BYTES, "big") for token in tokens)
        self._partial = b""
        try:
            os.set_blocking(descriptor, False)
        except BaseException:
            self.close()
            raise

    async def wait(self) -> None:
        while True:
            if self._tokens is None:
                raise OSError(errno.EBADF, "the power-source change listener is closed")
            if self._drain():
                return
            await anyio.wait_readable(self._descriptor)

    def _drain(self) -> bool:
        """Reads what is queued (bounded); True when one of our tokens was among it."""
        changed = False
        for _ in range(MAX_READS_PER_WAKE):
            try:
                data = os.read(self._descriptor, READ_BYTES)
            except (BlockingIOError, InterruptedError):
                return changed
            if not data:
                raise OSError(errno.EPIPE, "the notify(3) descriptor reached end of file")
            data = self._partial + data
            whole = len(data) - len(data) % TOKEN_BYTES
            self._partial = data[whole:]
            if any(data[start:start + TOKEN_BYTES] in self._ours for start in range(0, whole, TOKEN_BYTES)):
                changed = True
        return changed

    def close(self) -> None:
        tokens, self._tokens = self._tokens, None
        if tokens:
            self._binding.cancel_notifications(tokens)
