"""Ancestry from one Toolhelp snapshot + batched command lines, liveness, exit waits, owner detection."""

from __future__ import annotations

import anyio
import pytest
from fake_winapi import FakeWindowsApi

from lidguard.agents.ancestry import resolve_agent_process
from lidguard.platform.ancestry.windows import is_process_alive_with, read_ancestry_with, split_command_line
from lidguard.platform.windows.process import WindowsProcessWatcher
from lidguard.platform.windows.winapi import ERROR_ACCESS_DENIED


@pytest.mark.parametrize(("line", "argv"), [
    ('"C:\\Program Files\\nodejs\\node.exe" cli.js --flag',
     ["C:\\Program Files\\nodejs\\node.exe", "cli.js", "--flag"]),
    ('C:\\x\\codex.exe exec "fix the bug"', ["C:\\x\\codex.exe", "exec", "fix the bug"]),
    ('a.exe "a\\\\\\"b" c\\\\d "e f"\\\\', ["a.exe", 'a\\"b', "c\\\\d", "e f\\\\"]),
    ('a.exe "say ""hi"""', ["a.exe", 'say "hi"']),
    ("", []),
])
def test_command_lines_split_like_command_line_to_argv(line, argv):
    assert split_command_line(line) == argv


def windows_claude_machine() -> FakeWindowsApi:
    api = FakeWindowsApi()
    api.processes = [(4, 0, "System"), (900, 4, "explorer.exe"), (1000, 900, "WindowsTerminal.exe"),
                     (1100, 1000, "pwsh.exe"), (1200, 1100, "cmd.exe"), (1300, 1200, "node.exe"),
                     (1400, 1300, "cmd.exe"), (1500, 1400, "lidguard.exe")]
    api.command_lines = {
        1200: 'C:\\WINDOWS\\system32\\cmd.exe /d /s /c ""C:\\Users\\me\\AppData\\Roaming\\npm\\claude.cmd" "',
        1300: '"C:\\Program Files\\nodejs\\node.exe" '
              '"C:\\Users\\me\\AppData\\Roaming\\npm\\node_modules\\@anthropic-ai\\claude-code\\cli.js"',
        1400: 'C:\\WINDOWS\\system32\\cmd.exe /d /s /c "lidguard claude-hook"',
        1500: '"C:\\Users\\me\\.local\\bin\\lidguard.exe" claude-hook',
    }
    return api


def test_ancestry_walks_one_snapshot_and_reads_command_lines_in_one_batch():
    api = windows_claude_machine()
    chain = read_ancestry_with(api, 1500, max_depth=64)
    assert [process.pid for process in chain] == [1500, 1400, 1300, 1200, 1100, 1000, 900, 4]
    assert api.names() == ["CreateToolhelp32Snapshot", "NtQueryInformationProcess"]
    assert chain[2].name == "node.exe" and chain[2].exe == "C:\\Program Files\\nodejs\\node.exe"
    assert chain[5].cmdline == ()  # a process whose PEB could not be read
    assert read_ancestry_with(api, 77, max_depth=64) == []


def test_the_node_wrapper_of_a_cmd_shim_is_the_claude_agent():
    chain = read_ancestry_with(windows_claude_machine(), 1500, max_depth=64)
    assert resolve_agent_process(chain, "claude").pid == 1300


@pytest.mark.parametrize(("exe", "provider"), [("claude.exe", "claude"), ("codex.exe", "codex"),
                                               ("copilot.exe", "copilot"), ("opencode.exe", "opencode")])
def test_native_windows_agents_are_found_by_their_exe_names(exe, provider):
    api = FakeWindowsApi()
    api.processes = [(10, 0, "explorer.exe"), (20, 10, exe.upper()), (30, 20, "cmd.exe"), (40, 30, "lidguard.exe")]
    api.command_lines = {30: "cmd.exe /c lidguard hook", 40: "lidguard.exe hook"}
    assert resolve_agent_process(read_ancestry_with(api, 40, max_depth=64), provider).pid == 20


def test_a_reused_parent_pid_cannot_loop_the_walk():
    api = FakeWindowsApi()
    api.processes = [(10, 20, "a.exe"), (20, 10, "b.exe")]
    assert [process.pid for process in read_ancestry_with(api, 10, max_depth=64)] == [10, 20]


def test_liveness_waits_zero_ms_on_a_synchronize_handle():
    api = FakeWindowsApi()
    api.alive = {50}
    assert is_process_alive_with(api, 50)
    assert not is_process_alive_with(api, 51)
    api.fail("OpenProcess", ERROR_ACCESS_DENIED)
    assert is_process_alive_with(api, 52)  # exists, another user's
    assert api.names().count("CloseHandle") == 1


def test_wait_for_exit_returns_when_the_handle_is_signalled_and_closes_it():
    api = FakeWindowsApi()
    api.alive = {60}
    watcher = WindowsProcessWatcher(api)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(watcher.wait_for_exit, 60)
            await anyio.sleep(0.05)
            api.alive.discard(60)
        assert api.names()[-1] == "CloseHandle"

    anyio.run(main)
    assert watcher.is_alive(60) is False


def _cancelled_watch(pid: int) -> FakeWindowsApi:
    """A watch of a live ``pid`` cancelled after 50 ms; then up to 30 s for its handle to be closed."""
    api = FakeWindowsApi()
    api.alive = {pid}
    watcher = WindowsProcessWatcher(api)

    async def main() -> None:
        with anyio.move_on_after(0.05):
            await watcher.wait_for_exit(pid)
        with anyio.fail_after(30):
            while "CloseHandle" not in api.names():
                await anyio.sleep(0.01)

    anyio.run(main)
    return api


def test_a_cancelled_watch_ends_its_worker_and_closes_the_handle():
    assert _cancelled_watch(61).names().count("CloseHandle") == 1


def test_a_missing_process_counts_as_exited_at_once():
    api = FakeWindowsApi()
    anyio.run(WindowsProcessWatcher(api).wait_for_exit, 62)
    assert api.names() == ["OpenProcess"]


def test_a_watch_cancelled_before_its_worker_thread_ran_still_closes_the_handle_once(monkeypatch):
    """anyio never runs a thread job cancelled before a worker picked it up (a loaded machine: the 50 ms went
    by first); the handle was then never closed - found by a CI run at load 20."""
    from lidguard.platform.windows import process as windows_process

    async def never_started(function, *args, abandon_on_cancel=False):
        await anyio.sleep_forever()  # cancelled while queued: ``function`` never runs

    monkeypatch.setattr(windows_process.anyio.to_thread, "run_sync", never_started)
    names = _cancelled_watch(63).names()
    assert names.count("CloseHandle") == 1, names
