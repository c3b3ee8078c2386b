"""Linux ancestry and liveness from /proc with plain Python file calls (stdlib only).

The compiled twin ``read_chain`` (``native/proctree_linux.pyx``, ``lidguard._native._proctree``) does
the same walk with libc ``open``/``read``/``readlink`` in one call and must return the same values.

File formats are described in proc(5): ``/proc/<pid>/stat`` holds ``pid (comm) state ppid ...``
where comm may itself contain spaces and parentheses, so it is the text between the first ``(`` and
the last ``)``; ``cmdline`` is argv separated and terminated by NUL bytes; ``exe`` is a symbolic
link that cannot be read for kernel threads or, without ptrace access, other users' processes.
The walk takes a ``proc_root`` so tests can point it at a fake tree on any OS.
"""

from __future__ import annotations

import os

from ..process_info import ProcessInfo
from .cputime import sum_descendants
from .posix import pid_exists

__all__ = [
    "DEFAULT_PROC_ROOT",
    "NATIVE_ABI_VERSION",
    "descendant_cpu_seconds",
    "read_cpu_table",
    "NATIVE_MODULE",
    "OS_NAME",
    "is_process_alive",
    "read_ancestry",
    "read_ancestry_procfs",
    "read_process_state",
]

OS_NAME = "linux"
NATIVE_MODULE: str | None = "_proctree"
NATIVE_ABI_VERSION = 3  # native/proctree_linux.pyx ABI_VERSION (2: descendant_cpu, 3: record_type)
DEFAULT_PROC_ROOT = "/proc"
# proc(5): state "Z" is a zombie (exited, not yet reaped by its parent); "X" is dead.
_EXITED_STATES = frozenset({"Z", "X"})


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    return read_ancestry_procfs(pid, max_depth=max_depth, proc_root=DEFAULT_PROC_ROOT)


def read_ancestry_procfs(pid: int, *, max_depth: int, proc_root: str) -> list[ProcessInfo]:
    """The pure-Python walk; same stop rules and values as the compiled ``read_chain``.

    Stops after a process whose ppid is 0 (init, kthreadd), at a process that is gone or whose stat
    is unreadable or malformed, at a pid already seen (only possible in a fake tree) and after
    ``max_depth`` processes.
    """
    chain: list[ProcessInfo] = []
    seen: set[int] = set()
    current = pid
    while current > 0 and len(chain) < max_depth and current not in seen:
        base = f"{proc_root}/{current}"
        try:
            stat = _read_bytes(f"{base}/stat")
        except OSError:
            break  # gone (ENOENT), exiting (ESRCH) or hidden (EACCES): the chain ends here
        parsed = _parse_stat(stat)
        if parsed is None:
            break
        name, _state, parent = parsed
        chain.append(ProcessInfo(current, parent, name, _read_exe(base), _read_cmdline(base)))
        seen.add(current)
        current = parent
    return chain


def is_process_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie counts as exited (it only waits to be reaped).

    ``kill(pid, 0)`` (kill(2)) checks existence; EPERM means it exists but belongs to someone else.
    A zombie still answers kill(2), so its state is read from ``/proc/<pid>/stat`` (proc(5)).
    """
    if not pid_exists(pid):
        return False
    state = read_process_state(pid)
    return state is None or state not in _EXITED_STATES


def read_process_state(pid: int, *, proc_root: str = DEFAULT_PROC_ROOT) -> str | None:
    """The one-letter state from ``<proc_root>/<pid>/stat`` (R, S, D, Z, ...), None if unreadable."""
    try:
        parsed = _parse_stat(_read_bytes(f"{proc_root}/{pid}/stat"))
    except OSError:
        return None
    return None if parsed is None else parsed[1]


def _decode(raw: bytes) -> str:
    # Same as os.fsdecode on a UTF-8 system, and what the compiled reader does on every system.
    return raw.decode("utf-8", "surrogateescape")


def _read_bytes(path: str) -> bytes:
    with open(path, "rb", buffering=0) as file:
        return file.readall()


def _parse_stat(stat: bytes) -> tuple[str, str, int] | None:
    """(comm, state, ppid) from a stat line, or None when it is malformed."""
    first_open = stat.find(b"(")
    last_close = stat.rfind(b")")
    if first_open < 0 or last_close <= first_open:
        return None
    fields = stat[last_close + 1 :].split(None, 2)
    if len(fields) < 2 or not fields[1][:1].isdigit():
        return None
    digits = fields[1]
    end = 0
    while end < len(digits) and digits[end : end + 1].isdigit():
        end += 1
    return _decode(stat[first_open + 1 : last_close]), _decode(fields[0]), int(digits[:end])


def _read_exe(base: str) -> str:
    try:
        return _decode(os.readlink(os.fsencode(f"{base}/exe")))
    except OSError:
        return ""  # kernel thread, zombie, other user's process, or not a link in a fake tree


def _read_cmdline(base: str) -> tuple[str, ...]:
    try:
        raw = _read_bytes(f"{base}/cmdline")
    except OSError:
        return ()
    if not raw:
        return ()
    if raw.endswith(b"\0"):
        raw = raw[:-1]  # the terminator of the last argument, not an empty argument
    return tuple(_decode(argument) for argument in raw.split(b"\0"))


def descendant_cpu_seconds(pid: int, *, proc_root: str = DEFAULT_PROC_ROOT) -> float | None:
    """CPU seconds used by the descendants of ``pid`` (None: ``pid`` is gone). One pass over /proc."""
    return sum_descendants(read_cpu_table(proc_root), pid)


def read_cpu_table(proc_root: str = DEFAULT_PROC_ROOT) -> dict[int, tuple[int, float]]:
    """pid -> (ppid, CPU seconds) from every ``<proc_root>/<pid>/stat``: utime + stime plus the
    cutime + cstime of children it has reaped (a finished compiler's time stays in its make)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    table: dict[int, tuple[int, float]] = {}
    try:
        names = os.listdir(proc_root)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = _read_bytes(f"{proc_root}/{name}/stat")
        except OSError:
            continue  # exited meanwhile, or hidden
        parsed = _parse_stat_times(stat)
        if parsed is not None:
            table[int(name)] = (parsed[0], parsed[1] / ticks)
    return table


def _parse_stat_times(stat: bytes) -> tuple[int, int] | None:
    """(ppid, utime + stime + cutime + cstime in clock ticks) from a stat line (proc(5) fields 4, 14-17)."""
    last_close = stat.rfind(b")")
    if last_close < 0:
        return None
    fields = stat[last_close + 1 :].split()
    if len(fields) < 15:
        return None
    try:
        return int(fields[1]), sum(int(field) for field in fields[11:15])
    except ValueError:
        return None
