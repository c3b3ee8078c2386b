"""Other programs' sleep blockers on macOS (issue 34.3): ``pmset -g assertions``.

Its "Listed by owning process:" block has one line per assertion (pmset(1))::

   pid 412(backupd): [0x0000a1b200018c3f] 00:05:12 PreventSystemSleep named: "com.apple.backupd"

The holders of ``PreventSystemSleep`` and ``PreventUserIdleSystemSleep`` are the blockers; lidguard's
own ``caffeinate`` helpers (started by this process, ``power.OWN_HELPER_PIDS``) are left out. macOS
has no uid in that line (None); the "Details:"/"Created for PID:" line that may follow names who
asked (kept in ``why``).
"""

from __future__ import annotations

import re
import subprocess

from ..api import SuspendBlocker
from .commands import run_tool

__all__ = ["SLEEP_ASSERTION_TYPES", "parse_assertions", "read_sleep_assertions"]

SLEEP_ASSERTION_TYPES = ("PreventSystemSleep", "PreventUserIdleSystemSleep")
ASSERTIONS_TIMEOUT_SECONDS = 10.0
_LINE = re.compile(r"^\s*pid (\d+)\((.*?)\): \[0x[0-9A-Fa-f]+\] \S+ (\w+) named: \"(.*)\"\s*$")
_DETAIL = re.compile(r"^\s*(Details|Created for PID): (.*?)\s*$")


def parse_assertions(text: str, *, own_pids: frozenset[int] = frozenset()) -> list[SuspendBlocker]:
    blockers: list[SuspendBlocker] = []
    listed = False
    for line in text.splitlines():
        if line.startswith("Listed by owning process"):
            listed = True
            continue
        if listed and line and not line[0].isspace():
            listed = False  # "Kernel Assertions:", "Idle sleep preventers:" end the block
        if not listed:
            continue
        match = _LINE.match(line)
        if match is not None:
            pid, process, kind, name = int(match[1]), match[2], match[3], match[4]
            if kind in SLEEP_ASSERTION_TYPES and pid not in own_pids:
                blockers.append(SuspendBlocker(process, name, pid, None, kind, "assertion"))
            continue
        detail = _DETAIL.match(line)
        if detail is not None and blockers and blockers[-1].pid is not None:
            last = blockers[-1]
            why = f"{last.why} ({detail[1]}: {detail[2].rstrip('.')})" if last.why else detail[2]
            blockers[-1] = SuspendBlocker(last.who, why, last.pid, last.uid, last.what, last.mode)
    return blockers


def read_sleep_assertions() -> list[SuspendBlocker]:
    """``OSError`` when pmset fails or times out."""
    from .power import OWN_HELPER_PIDS

    try:
        result = run_tool("pmset", ["-g", "assertions"], capability="suspend", timeout=ASSERTIONS_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise OSError("pmset -g assertions timed out") from error
    if not result.ok:
        raise OSError(result.failure_text())
    return parse_assertions(result.stdout, own_pids=frozenset(OWN_HELPER_PIDS))
