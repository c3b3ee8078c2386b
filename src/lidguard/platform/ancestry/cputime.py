"""The CPU time a process's descendants used: the running-tool check of the inactivity timeout.

Every per-OS reader builds one table ``pid -> (ppid, cpu seconds)`` of the processes it can see and
``descendant_cpu_seconds`` sums the descendants of one process (the watched agent: its tools' processes)
with ``sum_descendants``. Read only when the inactivity timer fires, never polled. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["parse_ps_cpu_table", "parse_ps_time", "sum_descendants"]


def sum_descendants(table: Mapping[int, tuple[int, float]], root: int) -> float | None:
    """CPU seconds of every descendant of ``root`` (not ``root`` itself); None when ``root`` is not in
    the table (gone). A pid that appears as its own ancestor (pid reuse) is counted once."""
    if root not in table:
        return None
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cpu) in table.items():
        if pid != ppid:
            children.setdefault(ppid, []).append(pid)
    total = 0.0
    seen = {root}
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += table[pid][1]
        pending.extend(children.get(pid, ()))
    return total


def parse_ps_time(text: str) -> float | None:
    """``[[dd-]hh:]mm:ss[.cc]`` (POSIX ps ``time``) in seconds; None when it is not one."""
    days = 0
    if "-" in text:
        head, _, text = text.partition("-")
        if not head.isdigit():
            return None
        days = int(head)
    parts = text.split(":")
    if not 1 <= len(parts) <= 3:
        return None
    try:
        values = [float(part) for part in parts]
    except ValueError:
        return None
    seconds = 0.0
    for value in values:
        if value < 0 or value != value:
            return None
        seconds = seconds * 60 + value
    return days * 86400 + seconds


def parse_ps_cpu_table(text: str) -> dict[int, tuple[int, float]]:
    """Lines of ``pid ppid time`` (``ps -axo pid=,ppid=,time=``); malformed lines are skipped."""
    table: dict[int, tuple[int, float]] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 3 or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        seconds = parse_ps_time(fields[2])
        if seconds is not None:
            table[int(fields[0])] = (int(fields[1]), seconds)
    return table
