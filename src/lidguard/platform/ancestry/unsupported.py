"""Any other OS: no ancestry reader; liveness through kill(2) where the OS has it."""

from __future__ import annotations

import sys

from ..errors import Unsupported
from ..process_info import ProcessInfo
from .posix import pid_exists

__all__ = ["NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "descendant_cpu_seconds", "is_process_alive",
           "read_ancestry", "read_process_state"]

OS_NAME = "unsupported"
NATIVE_MODULE: str | None = None
NATIVE_ABI_VERSION = 0


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    raise Unsupported("process", f"no process ancestry reader for {sys.platform}")


def read_process_state(pid: int) -> str | None:
    return None


def is_process_alive(pid: int) -> bool:
    return pid_exists(pid)


def descendant_cpu_seconds(pid: int) -> float | None:
    raise Unsupported("process", f"no process CPU reader for {sys.platform}")
