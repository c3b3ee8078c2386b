"""The real Cline CLI 3.0.65 (npm ``cline``, AGENT_CLIS_NEW.md section 2) against the fake model: its provider
set up with ``cline auth -p openai-compatible -b <fake>/v1``, ``lidguard hook-install --provider cline`` writes
the hook files, and one headless turn with a ``run_commands`` tool call goes through them to the runtime: the
session starts watching the ``cline`` process itself (never its hub daemon), records the tool call and stops at
TaskComplete; the lid being closed with no display, one suspend follows. Cline starts a detached
``cline --cline-hub-daemon`` that outlives it: each test gives it its own port (``CLINE_HUB_PORT``) and kills
it by pid afterwards."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_harness import AgentRun
from fake_model import FakeModel

from lidguard.agents import cline

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SHELL_TOOL = "run_commands"  # Cline's shell tool: {"commands": [...]}, additionalProperties false


class ClineModel(FakeModel):
    """The fake model with Cline's shell tool and its arguments."""

    def wants_tool_call(self, body: dict[str, Any], has_tool_result: bool) -> str | None:
        offered = [tool.get("function", {}).get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)]
        return SHELL_TOOL if SHELL_TOOL in offered and not has_tool_result else None

    def tool_arguments(self, tool: str) -> dict[str, Any]:
        return {"commands": [self.script.command]}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def hub_daemons(home: Path) -> list[int]:
    """The pids of this test's ``cline --cline-hub-daemon`` processes (its HOME in their environment)."""
    marker = f"HOME={home}".encode() + b"\0"
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if cline.HUB_DAEMON_OPTION.encode() not in Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0"):
                continue
            if marker in Path(f"/proc/{entry.name}/environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_hub_daemons(home: Path) -> None:
    for pid in hub_daemons(home):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
    deadline = time.monotonic() + 10
    while hub_daemons(home) and time.monotonic() < deadline:
        time.sleep(0.05)


class ClineRun(AgentRun):
    def _configure_cline(self) -> None:
        for variable in [name for name in self.env if name.startswith("CLINE")]:
            del self.env[variable]  # nothing of the developer's own Cline set-up (CLINE_DIR, ...)
        self.env["CLINE_HUB_PORT"] = str(_free_port())  # its own hub daemon, not another run's on 25463

    def authenticate(self) -> None:
        result = subprocess.run([str(self.cli), "auth", "-p", "openai-compatible", "-k", "sk-fake-local", "-m",
                                 "fake-model", "-b", f"{self.model.base_url}/v1"], env=self.env, cwd=self.work,
                                text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
        assert result.returncode == 0, f"cline auth: {result.stdout}{result.stderr}"

    def headless_command(self, prompt: str = "run echo hello and then say hi") -> list[str]:
        return [str(self.cli), prompt]


@pytest.fixture
def cline_run(lidguard: Any) -> Iterator[ClineRun]:
    with ClineModel() as model:
        run = ClineRun("cline", lidguard, model)
        try:
            yield run
        finally:
            run.close()
            kill_hub_daemons(run.home)


def test_a_real_turn_goes_through_the_hook_files_and_the_hub_daemon_is_cleaned_up(cline_run: ClineRun) -> None:
    run = cline_run
    run.authenticate()
    installed = run.hook_install()
    assert "Installed the LidGuard Cline CLI hooks." in installed, installed
    folder = run.home / ".cline" / "hooks"
    for event in cline.EVENTS:
        hook = folder / event
        assert hook.stat().st_mode & 0o777 == 0o700, event
        assert hook.read_text().splitlines()[2].endswith(" cline-hook"), event
    run.prepare_machine(lid="closed")

    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0, context
    assert "All done: hello" in result.stdout, context
    assert any("hello" in request.text() for request in run.model.tool_requests()[1:]), context

    # TaskComplete's hook is fire-and-forget: it may still be on its way when cline has exited.
    assert run.wait_until(lambda: run.events("session-stopped") or run.events("session-stopped-already-stopped")), \
        context
    [start] = [entry for entry in run.events("session-started") if entry["Provider"] == "Cline"]
    session = start["SessionIdentifier"]
    assert session.startswith("conv_"), start  # the taskId
    assert start["WorkingDirectory"] == str(run.work), start
    assert run.watch is not None
    watched = start["WatchedProcessIdentifier"]
    assert run.watch.seen.get(watched) == "cline" and watched == run.agent_pid, (watched, run.watch.seen)
    assert hub_daemons(run.home), "cline left no hub daemon: the clean-up below proves nothing"
    assert watched not in hub_daemons(run.home)

    mine = [entry for entry in run.session_log() if entry.get("SessionIdentifier") == session]
    names = [entry["EventName"] for entry in mine]
    assert names.count("session-activity-recorded") == 2, names  # PreToolUse, PostToolUse: while it ran
    hook_log = (run.lidguard.data_dir / "cline-hook-events.log").read_text()
    for event in ("agent_start", "tool_call", "tool_result", "agent_end"):
        assert f"event={event} session={session}" in hook_log, hook_log
    assert names.index("session-started") < names.index("session-stopped"), names
    [stop] = [entry for entry in mine if entry["EventName"] == "session-stopped"]
    assert stop["SessionEndReason"] == "TaskComplete" and stop["IsProviderSessionEnd"] is True, stop

    assert run.wait_until(lambda: run.suspend_requests()), context
    time.sleep(0.5)
    assert len(run.suspend_requests()) == 1, run.lidguard.actions()

    kill_hub_daemons(run.home)
    assert hub_daemons(run.home) == []
