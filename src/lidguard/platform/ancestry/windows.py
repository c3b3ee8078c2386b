"""Windows ancestry and liveness: not written yet (CreateToolhelp32Snapshot / OpenProcess via ctypes).

Liveness cannot fall back to ``os.kill(pid, 0)``: on Windows it calls TerminateProcess and would kill
the process it probes.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..process_info import ProcessInfo

__all__ = ["NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "is_process_alive", "read_ancestry",
           "read_process_state"]

OS_NAME = "windows"
NATIVE_MODULE: str | None = None
NATIVE_ABI_VERSION = 0
REASON = "process ancestry on Windows needs the Windows reader (Toolhelp snapshots), which is not written yet"


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    raise Unsupported("process", REASON)


def read_process_state(pid: int) -> str | None:
    return None


def is_process_alive(pid: int) -> bool:
    raise Unsupported("process", "liveness checks on Windows need the Windows backend")
