"""macOS ancestry: not written yet (it will read ``sysctl(KERN_PROC_PID)``/libproc through ctypes).

Liveness works today with kill(2); a zombie cannot be told apart from a running process until the
reader lands, so it counts as alive.
"""

from __future__ import annotations

import os

from ..errors import Unsupported
from ..process_info import ProcessInfo

__all__ = ["NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "is_process_alive", "read_ancestry",
           "read_process_state"]

OS_NAME = "macos"
NATIVE_MODULE: str | None = None
NATIVE_ABI_VERSION = 0
REASON = "process ancestry on macOS needs the macOS reader (sysctl KERN_PROC), which is not written yet"


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    raise Unsupported("process", REASON)


def read_process_state(pid: int) -> str | None:
    return None


def is_process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    return True
