"""macOS ancestry for the hook path: one ``ps -axo pid=,ppid=,comm=,command=`` table (stdlib only).

The runtime's ``ProcessWatcher`` (platform/macos/process.py) reads the same chain through libproc when
the cffi binding is active; the hook path stays on the standard library (no cffi import) and pays one
``ps`` call. Liveness is kill(2); a zombie cannot be told apart here, so it counts as alive.
"""

from __future__ import annotations

from ..errors import Unsupported
from ..process_info import ProcessInfo
from .posix import pid_exists

__all__ = ["NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "descendant_cpu_seconds", "is_process_alive",
           "read_ancestry", "read_process_state"]

OS_NAME = "macos"
NATIVE_MODULE: str | None = None
NATIVE_ABI_VERSION = 0


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    """``pid`` and its parents, closest first, [] when it is gone; OSError when ps fails;
    ``Unsupported`` when ps is missing or (in test mode) is not a stand-in."""
    from ..macos.commands import RealToolRefused
    from ..macos.ps import ancestry_from_table, read_ps_table

    try:
        table = read_ps_table()
    except RealToolRefused as error:
        raise Unsupported("process", str(error)) from error
    return ancestry_from_table(table, pid, max_depth=max_depth)


def read_process_state(pid: int) -> str | None:
    return None


def is_process_alive(pid: int) -> bool:
    return pid_exists(pid)


def descendant_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of ``pid``'s descendants from one ``ps -axo pid=,ppid=,time=`` (None: ``pid`` is gone)."""
    import subprocess

    from ..macos.commands import RealToolRefused, run_tool
    from .cputime import parse_ps_cpu_table, sum_descendants

    try:
        result = run_tool("ps", ["-axo", "pid=,ppid=,time="], capability="process", timeout=5.0)
    except RealToolRefused as error:
        raise Unsupported("process", str(error)) from error
    except subprocess.TimeoutExpired as error:
        raise OSError("ps did not finish within 5 s") from error
    if not result.ok:
        raise OSError(result.failure_text())
    return sum_descendants(parse_ps_cpu_table(result.stdout), pid)
