"""macOS ``ProcessWatcher``: ancestry through libproc (cffi binding) or ``ps``, exits through kqueue.

``wait_for_exit`` registers ``EVFILT_PROC``/``NOTE_EXIT`` for the pid on a kqueue (kqueue(2)); the
kqueue descriptor turns readable when the event fires, so one ``anyio.wait_readable`` waits without
polling. Registering a pid that is already gone fails with ESRCH, which means "exited". Where
``select.kqueue`` is missing (any OS but macOS/BSD - e.g. Linux running the macOS backend over
stand-ins) it polls :meth:`is_alive` once a second. ``describe()`` says which, for ``doctor``.
"""

from __future__ import annotations

import errno
import select
from typing import Any

import anyio

from ..ancestry.posix import pid_exists
from ..api import ProcessInfo
from . import _binding
from .ps import ancestry_from_table, read_ps_table

__all__ = ["DEFAULT_MAX_DEPTH", "DEFAULT_POLL_INTERVAL_SECONDS", "MacProcessWatcher", "kqueue_available"]

DEFAULT_MAX_DEPTH = 64
DEFAULT_POLL_INTERVAL_SECONDS = 1.0
# kqueue names exist only on macOS/BSD builds of Python; typeshed hides them elsewhere.
_kq: Any = select


def kqueue_available() -> bool:
    return hasattr(select, "kqueue") and hasattr(anyio, "wait_readable")


class MacProcessWatcher:
    def __init__(self, *, poll_interval_seconds: float = DEFAULT_POLL_INTERVAL_SECONDS) -> None:
        self._poll_interval_seconds = poll_interval_seconds

    def describe(self) -> str:
        active, reason = _binding.binding_status()
        ancestry = ("native: libproc proc_pidinfo/proc_pidpath + sysctl KERN_PROCARGS2 via cffi" if active
                    else f"command-line: ps -axo pid=,ppid=,comm=,command= (libproc binding inactive: {reason})")
        exits = "kqueue EVFILT_PROC/NOTE_EXIT" if kqueue_available() else "polling (select.kqueue is missing here)"
        return f"available (ancestry {ancestry}; exit watching {exits})"

    def read_ancestry(self, pid: int) -> list[ProcessInfo]:
        if _binding.binding_status()[0]:
            return _binding.active_binding().read_ancestry(pid, DEFAULT_MAX_DEPTH)
        return ancestry_from_table(read_ps_table(), pid, max_depth=DEFAULT_MAX_DEPTH)

    def is_alive(self, pid: int) -> bool:
        if not pid_exists(pid):
            return False
        if _binding.binding_status()[0]:
            return not _binding.active_binding().is_zombie(pid)
        return True

    def descendant_cpu_seconds(self, pid: int) -> float | None:
        """Natively through libproc when the cffi binding is active, else one ``ps`` table."""
        if _binding.binding_status()[0]:
            return _binding.active_binding().descendant_cpu_seconds(pid)
        from ..ancestry import macos as ancestry

        return ancestry.descendant_cpu_seconds(pid)

    async def wait_for_exit(self, pid: int) -> None:
        """Returns once ``pid`` has exited; at once if it is gone."""
        if pid <= 0:
            return
        if kqueue_available():
            queue = _kq.kqueue()
            try:
                event = _kq.kevent(pid, filter=_kq.KQ_FILTER_PROC,
                                   flags=_kq.KQ_EV_ADD | _kq.KQ_EV_ONESHOT, fflags=_kq.KQ_NOTE_EXIT)
                try:
                    queue.control([event], 0, 0)
                except OSError as error:
                    if error.errno == errno.ESRCH:
                        return
                    raise
                await anyio.wait_readable(queue.fileno())
                return
            finally:
                queue.close()
        while self.is_alive(pid):
            await anyio.sleep(self._poll_interval_seconds)
