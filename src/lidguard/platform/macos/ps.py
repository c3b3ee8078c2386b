"""The ``ps`` fallback for macOS ancestry (stdlib only: the hook path uses it on macOS).

``ps -axo pid=,ppid=,comm=,command=`` prints one line per process: pid, ppid, the executable
(``comm``, a full path on macOS, which may contain spaces) and the command line (``command``,
argv joined by spaces). ``comm`` and ``command`` are told apart by the command line starting
with argv[0], which is the executable path for nearly every process; otherwise the first
word is taken as ``comm``. Arguments that themselves contain spaces cannot be recovered from
``ps`` output: the libproc path (``_binding``) reads the exact argv where it is available.
"""

from __future__ import annotations

import os
import subprocess

from ..process_info import ProcessInfo
from .commands import run_tool

__all__ = ["PS_ARGUMENTS", "ancestry_from_table", "parse_ps_table", "read_ps_table"]

PS_ARGUMENTS = ["-axo", "pid=,ppid=,comm=,command="]
PS_TIMEOUT_SECONDS = 5.0


def _split_comm_and_command(rest: str) -> tuple[str, str]:
    positions = [index for index, character in enumerate(rest) if character == " "]
    for index in positions:
        comm, command = rest[:index], rest[index + 1:].lstrip(" ")
        if command and (command == comm or command.startswith(comm + " ")):
            return comm, command
    for index in positions:
        comm, command = rest[:index], rest[index + 1:].lstrip(" ")
        first = command.split(" ", 1)[0]
        if command and os.path.basename(comm) == os.path.basename(first):
            return comm, command
    comm, _, command = rest.partition(" ")
    return comm, command.lstrip(" ") or comm


def parse_ps_table(text: str) -> dict[int, ProcessInfo]:
    """pid -> ProcessInfo (name = basename of comm, exe = comm when absolute, cmdline = words)."""
    table: dict[int, ProcessInfo] = {}
    for line in text.splitlines():
        parts = line.strip().split(None, 2)
        if len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
            continue
        comm, command = _split_comm_and_command(parts[2].strip())
        pid, ppid = int(parts[0]), int(parts[1])
        exe = comm if comm.startswith("/") else ""
        table[pid] = ProcessInfo(pid, ppid, os.path.basename(comm), exe, tuple(command.split()))
    return table


def ancestry_from_table(table: dict[int, ProcessInfo], pid: int, *, max_depth: int) -> list[ProcessInfo]:
    chain: list[ProcessInfo] = []
    seen: set[int] = set()
    current = pid
    while current > 0 and current in table and current not in seen and len(chain) < max_depth:
        seen.add(current)
        info = table[current]
        chain.append(info)
        current = info.ppid
    return chain


def read_ps_table() -> dict[int, ProcessInfo]:
    """Raises OSError when ps fails (``ToolMissing`` when it is not installed)."""
    try:
        result = run_tool("ps", PS_ARGUMENTS, capability="process", timeout=PS_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise OSError(f"ps did not finish within {PS_TIMEOUT_SECONDS:g} s") from error
    if not result.ok:
        raise OSError(result.failure_text())
    return parse_ps_table(result.stdout)
