"""Any other OS: no ancestry reader; liveness through kill(2) where the OS has it."""

from __future__ import annotations

import os
import sys

from ..errors import Unsupported
from ..process_info import ProcessInfo

__all__ = ["NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "is_process_alive", "read_ancestry",
           "read_process_state"]

OS_NAME = "unsupported"
NATIVE_MODULE: str | None = None
NATIVE_ABI_VERSION = 0


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    raise Unsupported("process", f"no process ancestry reader for {sys.platform}")


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
        pass
    return True
