"""Issue 35.5 on the Linux backend (dbusmock's logind): a ``sleep:idle`` block inhibitor held with
who="Claude Code" (what Claude Code's newer builds hold during a turn) or who="Qwen Code" (Qwen's
``systemd-inhibit --what=sleep``) is what doctor and status name through ListInhibitors; an idle-only
inhibitor (Codex's ``--what=idle``) is not, nor lidguard's own."""

from __future__ import annotations

import os

import pytest

from lidguard.cli.agent_keep_awake import live_holders
from lidguard.platform import load_platform
from lidguard.platform.linux._binding import LogindConnection

pytestmark = pytest.mark.dbus


def _hold(what: str, who: str, why: str) -> int:
    with LogindConnection() as connection:
        return connection.inhibit(what, who, why, "block")


def test_agents_block_inhibitors_are_named_through_list_inhibitors(binding_active, logind_mock, monkeypatch):
    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")
    platform = load_platform("linux")
    fds = [_hold("sleep:idle", "Claude Code", "Claude is working"), _hold("sleep", "Qwen Code", "streaming"),
           _hold("idle", "codex", "Codex is running an active turn"), _hold("sleep", "lidguard", "own")]
    try:
        logind_mock.wait_for_inhibitors(lambda entries: len(entries) == 4)
        holders = live_holders(platform, {}, ignores_other_blockers=False)
    finally:
        for fd in fds:
            os.close(fd)
    # The mock reports pid 123456 for every inhibitor: no such process, so the who string names the agent.
    assert [holder["text"] for holder in holders] == [
        "Claude Code (pid 123456) holds a sleep:idle block inhibitor: while it holds it after its session ends, "
        "lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)",
        "Qwen Code (pid 123456) holds a sleep block inhibitor: while it holds it after its session ends, "
        "lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)"]
    logind_mock.wait_for_inhibitors(lambda entries: not entries)
    assert live_holders(platform, {}, ignores_other_blockers=False) == []
