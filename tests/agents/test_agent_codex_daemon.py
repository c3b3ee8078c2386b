"""The real Codex TUI in its default mode (issue 35.3): its hooks run under the shared ``codex app-server``
daemon the TUI starts, which outlives the TUI (AGENT_CLIS.md: reparented to pid 1, its SessionEnd ~74 s after
``/exit``). The watched process must be the TUI above the daemon, so closing the TUI ends the session at once
while the daemon lives on; watching the daemon kept the session for as long as the daemon lived."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from agents_harness import AgentRun

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _cmdline(pid: int) -> list[str]:
    try:
        return [part.decode(errors="replace") for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if part]
    except OSError:
        return []


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def test_the_codex_tui_is_watched_not_its_app_server_daemon_and_closing_it_ends_the_session(agent: Any) -> None:
    run: AgentRun = agent("codex")
    run.hook_install()
    run.prepare_machine(lid="open")
    run.start_interactive([str(run.cli), "-a", "never", "-s", "danger-full-access", "say hello"])
    assert run.wait_until(lambda: run.events("session-started"), timeout=120), f"{run.screen()}\n{run.describe()}"
    [started] = run.events("session-started")
    watched = started["WatchedProcessIdentifier"]
    context = f"watched {watched}: {_cmdline(watched)}\n{run.screen()}\n{run.describe()}"
    assert watched and "app-server" not in _cmdline(watched), context
    assert Path(_cmdline(watched)[0]).name == "codex", context
    daemons = [pid for pid, name in run.watch.seen.items() if "app-server" in _cmdline(pid)] if run.watch else []
    assert daemons, f"no app-server daemon ran the hooks (the default TUI mode changed?)\n{context}"
    assert any(_parent(pid) == watched for pid in daemons), f"the daemon is not the TUI's child\n{context}"
    # The user closes the TUI (its terminal goes away): the session ends at once though the daemon lives on.
    os.kill(watched, signal.SIGTERM)
    assert run.wait_until(lambda: not Path(f"/proc/{watched}").exists() or _zombie(watched), timeout=30), context
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0, timeout=30), context
    assert any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in daemons), \
        "the daemon outlived the TUI (it must not be what ended the session)"
