"""Other programs' sleep blockers on Linux (issue 34.3): logind ``block`` inhibitors on ``sleep``.

``list_sleep_blockers`` reads ListInhibitors (org.freedesktop.login1(5): what, who, why, mode, uid,
pid) and keeps the ``block`` entries whose ``what`` includes ``sleep`` - those make logind refuse a
Suspend (real logind: InteractiveAuthorizationRequired unless ``suspend-ignore-inhibit`` is granted;
root is let through) - leaving out lidguard's own (``who`` = ``lidguard``). ``BlockInhibitedChanges``
follows logind's ``BlockInhibited`` property: logind emits PropertiesChanged for it whenever a block
inhibitor starts or stops; the listener is ``gdbus monitor`` on logind's manager object (a plain
signal match any user may add; ``DBUS_SYSTEM_BUS_ADDRESS`` honoured), so no compiled code changes.
Where gdbus is missing the runtime polls ListInhibitors instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from ..api import SuspendBlocker, Unsupported
from ._binding import LogindConnection, LogindError, LogindUnavailable, refuse_real_system_bus_under_pytest

__all__ = ["BlockInhibitedChanges", "blockers_from_inhibitors", "list_sleep_blockers"]

OWN_WHO = "lidguard"  # power.INHIBITOR_WHO (not imported: power.py pulls in the inhibitor machinery)


def blockers_from_inhibitors(entries: list[tuple[str, str, str, str, int, int]]) -> list[SuspendBlocker]:
    """The foreign ``block`` inhibitors on ``sleep`` among ListInhibitors' entries."""
    blockers = []
    for what, who, why, mode, uid, pid in entries:
        if mode != "block" or "sleep" not in what.split(":") or who == OWN_WHO:
            continue
        blockers.append(SuspendBlocker(who, why, pid or None, uid, what, mode))
    return blockers


def list_sleep_blockers() -> list[SuspendBlocker]:
    try:
        with LogindConnection() as connection:
            entries = connection.list_inhibitors()
    except LogindUnavailable as error:
        raise Unsupported("suspend_blockers", f"systemd-logind is not reachable ({error})") from error
    except LogindError as error:
        raise OSError(f"logind ListInhibitors failed: {error.name}: {error.message}") from error
    return blockers_from_inhibitors(entries)


def read_block_inhibited() -> str | None:
    """logind's ``BlockInhibited`` (``sleep:idle:handle-lid-switch``), None when logind cannot tell."""
    try:
        with LogindConnection() as connection:
            return connection.read_string_property("BlockInhibited")
    except LogindError:
        return None


class BlockInhibitedChanges:
    """``gdbus monitor --system --dest org.freedesktop.login1 --object-path /org/freedesktop/login1``:
    ``wait`` returns after a PropertiesChanged naming BlockInhibited (or once a ListInhibitors-visible
    change may have happened: the monitor restarted). ``OSError`` when the monitor ended."""

    def __init__(self) -> None:
        refuse_real_system_bus_under_pytest("watch systemd-logind's inhibitors")
        gdbus = shutil.which("gdbus")
        if gdbus is None:
            raise Unsupported("suspend_blocker_changes", "gdbus is not installed; ListInhibitors is polled")
        self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
            [gdbus, "monitor", "--system", "--dest", "org.freedesktop.login1",
             "--object-path", "/org/freedesktop/login1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True, env={**os.environ, "LC_ALL": "C"})
        assert self._process.stdout is not None
        os.set_blocking(self._process.stdout.fileno(), False)
        self._buffer = b""

    async def wait(self) -> None:
        import anyio

        process = self._process
        if process is None or process.stdout is None:
            raise OSError("the BlockInhibited listener is closed")
        while True:
            await anyio.wait_readable(process.stdout.fileno())
            try:
                chunk = os.read(process.stdout.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                raise OSError("gdbus monitor ended")
            self._buffer = (self._buffer + chunk)[-65536:]
            lines = self._buffer.split(b"\n")
            self._buffer = lines.pop()
            if any(b"PropertiesChanged" in line and b"BlockInhibited" in line for line in lines):
                return

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.kill()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if process.stdout is not None:
            process.stdout.close()
