"""Windows ancestry and liveness: one Toolhelp snapshot plus the PEB command lines of the chain.

The Win32 calls go through the Windows binding (``platform/windows/_binding.py``, loaded on first
use; this module itself imports only the standard library, as the hook path requires):
``snapshot_processes`` is one CreateToolhelp32Snapshot walk giving every pid -> (ppid, exe name);
``process_times`` is OpenProcess + GetProcessTimes (the CPU time of running tools);
``read_command_lines`` reads NtQueryInformationProcess(ProcessBasicInformation) + the PEB's
ProcessParameters.CommandLine for the whole chain in one call. Command lines are split into argv
with the rules of CommandLineToArgvW (argv[0] without escapes; ``2n`` backslashes + quote -> ``n``
backslashes and a quote toggle, ``2n+1`` -> ``n`` and a literal quote).

Windows reuses pids and keeps a dead parent's pid in its children's snapshot entries, so the walk
stops at a pid already seen. Liveness cannot fall back to ``os.kill(pid, 0)``: on Windows it calls
TerminateProcess and would kill the process it probes; it waits 0 ms on a SYNCHRONIZE handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import Unsupported
from ..process_info import ProcessInfo

if TYPE_CHECKING:
    from ..windows.winapi import WindowsApi

__all__ = ["DEFAULT_MAX_DEPTH", "NATIVE_ABI_VERSION", "NATIVE_MODULE", "OS_NAME", "descendant_cpu_seconds",
           "descendant_cpu_seconds_with", "is_process_alive",
           "is_process_alive_with", "read_ancestry", "read_ancestry_with", "read_process_state",
           "split_command_line"]

OS_NAME = "windows"
NATIVE_MODULE: str | None = None  # the cffi binding is the native layer (loaded by _live_api)
NATIVE_ABI_VERSION = 0
DEFAULT_MAX_DEPTH = 64
_ERROR_ACCESS_DENIED = 5
_WAIT_TIMEOUT = 0x102
_FILETIME_UNITS_PER_SECOND = 10_000_000  # FILETIME counts 100 ns intervals


def _live_api() -> WindowsApi:
    from ..windows._binding import load_windows_api

    api, reason = load_windows_api()
    if api is None:
        raise Unsupported("process", f"the Windows API binding is unavailable: {reason}")
    return api


def read_ancestry(pid: int, *, max_depth: int) -> list[ProcessInfo]:
    return read_ancestry_with(_live_api(), pid, max_depth=max_depth)


def read_process_state(pid: int) -> str | None:
    return None  # Windows has no one-letter process state


def is_process_alive(pid: int) -> bool:
    return is_process_alive_with(_live_api(), pid)


def read_ancestry_with(api: WindowsApi, pid: int, *, max_depth: int) -> list[ProcessInfo]:
    """``pid`` and its parents, closest first; [] when ``pid`` is not in the snapshot."""
    table = {entry_pid: (parent, name) for entry_pid, parent, name in api.snapshot_processes()}
    chain_ids: list[int] = []
    current = pid
    while current in table and len(chain_ids) < max_depth and current not in chain_ids:
        chain_ids.append(current)
        parent = table[current][0]
        if parent == 0 or parent == current:
            break
        current = parent
    lines = api.read_command_lines(chain_ids) if chain_ids else {}
    chain = []
    for entry_pid in chain_ids:
        parent, name = table[entry_pid]
        argv = tuple(split_command_line(lines[entry_pid])) if entry_pid in lines else ()
        exe = argv[0] if argv and ("\\" in argv[0] or "/" in argv[0]) else ""
        chain.append(ProcessInfo(entry_pid, parent, name, exe, argv))
    return chain


def is_process_alive_with(api: WindowsApi, pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        handle = api.open_process_for_wait(pid)
    except OSError as error:
        return getattr(error, "winerror", None) == _ERROR_ACCESS_DENIED  # exists, owned by someone else
    try:
        return api.wait_for_single_object(handle, 0) == _WAIT_TIMEOUT
    finally:
        try:
            api.close_handle(handle)
        except OSError:
            pass


def split_command_line(line: str) -> list[str]:
    """argv as CommandLineToArgvW would split ``line``."""
    arguments: list[str] = []
    index, length = 0, len(line)
    # argv[0]: quoted up to the next quote, else up to whitespace; backslashes are literal.
    if line.startswith('"'):
        end = line.find('"', 1)
        end = length if end < 0 else end
        arguments.append(line[1:end])
        index = end + 1
    else:
        while index < length and line[index] not in " \t":
            index += 1
        arguments.append(line[:index])
    while True:
        while index < length and line[index] in " \t":
            index += 1
        if index >= length:
            return arguments if arguments != [""] else []
        current: list[str] = []
        quoted = False
        while index < length and (quoted or line[index] not in " \t"):
            char = line[index]
            if char == "\\":
                start = index
                while index < length and line[index] == "\\":
                    index += 1
                count = index - start
                if index < length and line[index] == '"':
                    current.append("\\" * (count // 2))
                    if count % 2:
                        current.append('"')
                        index += 1
                else:
                    current.append("\\" * count)
                continue
            if char == '"':
                if quoted and index + 1 < length and line[index + 1] == '"':
                    current.append('"')
                    index += 2
                    continue
                quoted = not quoted
                index += 1
                continue
            current.append(char)
            index += 1
        arguments.append("".join(current))


def descendant_cpu_seconds(pid: int) -> float | None:
    return descendant_cpu_seconds_with(_live_api(), pid)


def descendant_cpu_seconds_with(api: WindowsApi, pid: int) -> float | None:
    """CPU seconds (kernel + user) the descendants of ``pid`` used; None when ``pid`` is gone.

    One Toolhelp snapshot gives the tree, then GetProcessTimes for ``pid`` and each descendant. A
    process that exited since the snapshot or cannot be opened (another user's) adds nothing, and
    its children are still walked. Windows keeps a dead parent's pid in its children's entries and
    reuses pids, so a process created before its supposed parent (or before the nearest ancestor
    whose creation time is known) is no descendant: it and everything below it are left out.
    """
    children: dict[int, list[int]] = {}
    present: set[int] = set()
    for entry_pid, parent, _name in api.snapshot_processes():
        present.add(entry_pid)
        if entry_pid != parent:
            children.setdefault(parent, []).append(entry_pid)
    if pid not in present:
        return None
    try:
        root_created = api.process_times(pid)[0]
    except OSError as error:
        if getattr(error, "winerror", None) != _ERROR_ACCESS_DENIED:
            return None  # exited since the snapshot (ERROR_INVALID_PARAMETER)
        root_created = 0  # exists but unreadable: no creation time to guard with
    total = 0
    seen = {pid}
    pending = [(child, root_created) for child in children.get(pid, ())]
    while pending:
        current, ancestor_created = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            created, kernel, user = api.process_times(current)
        except OSError:
            pending.extend((child, ancestor_created) for child in children.get(current, ()))
            continue
        if created < ancestor_created:
            continue  # older than its parent: the parent's pid was reused, this is someone else's tree
        total += kernel + user
        pending.extend((child, created) for child in children.get(current, ()))
    return total / _FILETIME_UNITS_PER_SECOND
