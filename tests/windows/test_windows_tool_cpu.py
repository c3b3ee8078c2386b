"""The CPU time of running tools on Windows: one Toolhelp snapshot for the tree, then OpenProcess +
GetProcessTimes per descendant (fake binding): exits mid-read, access denied, reused parent pids."""

from __future__ import annotations

from fake_winapi import FakeWindowsApi

from lidguard.platform.windows.process import WindowsProcessWatcher

SECOND = 10_000_000  # FILETIME units
T0 = 133_000_000_000_000_000  # a creation time in 2022, 100 ns since 1601


def agent_machine() -> FakeWindowsApi:
    """node.exe (1300, the agent) -> cmd.exe (1400, the Bash tool) -> msbuild.exe (1500) -> cl.exe (1600);
    a sibling agent 2300 with its own tool 2400 that must not count."""
    api = FakeWindowsApi()
    api.processes = [(4, 0, "System"), (1100, 4, "pwsh.exe"), (1300, 1100, "node.exe"), (1400, 1300, "cmd.exe"),
                     (1500, 1400, "msbuild.exe"), (1600, 1500, "cl.exe"), (2300, 1100, "node.exe"),
                     (2400, 2300, "cmd.exe")]
    api.times = {4: (0, 900 * SECOND, 0), 1100: (T0, SECOND, SECOND), 1300: (T0 + 1, 7 * SECOND, 8 * SECOND),
                 1400: (T0 + 2, SECOND // 10, SECOND // 10), 1500: (T0 + 3, 2 * SECOND, 3 * SECOND),
                 1600: (T0 + 4, SECOND // 2, 4 * SECOND), 2300: (T0 + 5, SECOND, SECOND),
                 2400: (T0 + 6, 50 * SECOND, 50 * SECOND)}
    return api


def test_the_descendants_kernel_and_user_time_from_one_snapshot():
    api = agent_machine()
    watcher = WindowsProcessWatcher(api)
    assert watcher.descendant_cpu_seconds(1300) == 0.2 + 5.0 + 4.5  # not the agent itself, not 2400
    assert api.names().count("CreateToolhelp32Snapshot") == 1
    assert sorted(call[1] for call in api.calls if call[0] == "GetProcessTimes") == [1300, 1400, 1500, 1600]
    assert watcher.descendant_cpu_seconds(1600) == 0.0  # no children
    api.times[1600] = (T0 + 4, SECOND, 4 * SECOND)
    assert watcher.descendant_cpu_seconds(1300) == 0.2 + 5.0 + 5.0  # the compiler kept working


def test_a_gone_agent_reads_none():
    api = agent_machine()
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(9999) is None  # not in the snapshot
    del api.times[1300]  # in the snapshot, exited before OpenProcess
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(1300) is None


def test_a_process_that_exits_mid_read_adds_nothing_and_its_children_still_count():
    api = agent_machine()

    def exit_the_tool_shell(pid: int) -> None:
        if pid == 1300:  # the agent's own read: the shell exits right after the snapshot
            api.times.pop(1400, None)

    api.on_process_times = exit_the_tool_shell
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(1300) == 5.0 + 4.5


def test_an_unreadable_process_adds_nothing_and_its_children_still_count():
    api = agent_machine()
    api.times_denied = {1500}  # e.g. an elevated msbuild
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(1300) == 0.2 + 4.5
    api.times_denied = {1300}  # even the agent unreadable: no creation guard, the tree still counts
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(1300) == 0.2 + 5.0 + 4.5


def test_a_process_older_than_its_parent_pid_is_no_descendant():
    """The agent's pid was reused: an older process (and its subtree) still naming that pid as its
    parent belonged to the dead one; a grandchild older than a known ancestor is left out too."""
    api = agent_machine()
    api.processes += [(3000, 1300, "stale.exe"), (3100, 3000, "stale-child.exe")]
    api.times[3000] = (T0 - 100 * SECOND, 60 * SECOND, 60 * SECOND)
    api.times[3100] = (T0 - 50 * SECOND, 60 * SECOND, 60 * SECOND)
    api.times_denied = {1500}
    api.processes.append((3200, 1500, "old.exe"))  # under an unreadable parent, older than the tool shell
    api.times[3200] = (T0 + 1, 60 * SECOND, 0)
    assert WindowsProcessWatcher(api).descendant_cpu_seconds(1300) == 0.2 + 4.5


def test_a_cycle_of_reused_pids_is_walked_once():
    api = FakeWindowsApi()
    api.processes = [(10, 20, "a.exe"), (20, 10, "b.exe"), (30, 30, "self.exe")]
    api.times = {10: (T0, 0, 0), 20: (T0 + 1, SECOND, 0), 30: (T0, SECOND, 0)}
    watcher = WindowsProcessWatcher(api)
    assert watcher.descendant_cpu_seconds(10) == 1.0
    assert watcher.descendant_cpu_seconds(30) == 0.0
