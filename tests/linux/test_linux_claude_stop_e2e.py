"""Issue 8 end to end through real processes: a Claude Code `Stop` hook payload with
``last_assistant_message`` fed to a real `lidguard claude-hook`, the runtime on the Linux backend
against dbusmock's logind (temporary lid tree closed), a local HTTP receiver for the PreSuspend
webhook: PreSuspend arrives after the post-stop delay with the session identity and that message, then
logind sees exactly one Suspend. Reuses the harness of test_linux_suspend_flow.py.

Nothing here can reach the real logind: every D-Bus call goes to the private bus of ``system_bus``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from test_linux_suspend_flow import Receiver, build_machine, ours

pytestmark = pytest.mark.dbus

PROMPT = {"session_id": "claude-e2e", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit",
          "prompt": "refactor the parser", "transcript_path": ""}
STOP = {"session_id": "claude-e2e", "cwd": "/w/app", "hook_event_name": "Stop", "stop_hook_active": False,
        "last_assistant_message": "Refactoring finished: the parser is now a state machine."}


@pytest.fixture
def pre_suspend_receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def _claude_hook(lidguard, payload: dict) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=lidguard.env,
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60)


def test_claude_stop_hook_pre_suspend_with_the_message_then_exactly_one_suspend(
        binding_active, logind_mock, lidguard, tmp_path, pre_suspend_receiver):
    root = tmp_path / "machine"
    build_machine(root, lid="closed", connectors={"card0-eDP-1": "connected", "card0-HDMI-A-1": "disconnected"})
    lidguard.env.update({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(root),
                         "DBUS_SYSTEM_BUS_ADDRESS": os.environ["DBUS_SYSTEM_BUS_ADDRESS"]})
    lidguard.env.pop("LIDGUARD_LOGIND_BINDING", None)
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "2", "--pre-suspend-webhook-url",
                 pre_suspend_receiver.url, check=True)
    started = _claude_hook(lidguard, PROMPT)  # launches the runtime on the Linux backend
    assert started.returncode == 0 and started.stdout == b"", started.stderr
    assert lidguard.wait_until(lambda: len(ours(logind_mock.list_inhibitors())) == 3, timeout=30)
    stopped_at = time.monotonic()
    stopped = _claude_hook(lidguard, STOP)
    assert stopped.returncode == 0 and stopped.stdout == b"", stopped.stderr  # no ask-before-sleep: no output
    assert time.monotonic() - stopped_at < 10  # the Stop hook did not wait for the delay
    assert lidguard.wait_until(lambda: lidguard.json("suspend-history")["entries"], timeout=30)
    [post] = pre_suspend_receiver.posts
    assert post["at"] - stopped_at >= 2.0
    body = post["body"]
    assert body["eventType"] == "PreSuspend" and body["reason"] == "Completed"
    assert body["provider"] == "Claude" and body["sessionIdentifier"] == "claude-e2e"
    assert body["workingDirectory"] == "/w/app"
    assert body["lastAssistantMessage"] == STOP["last_assistant_message"]
    assert body["inputPromptPreview"] == "refactor the parser"
    assert [args for _, args in logind_mock.get_method_calls("Suspend")] == [[False]]
    assert not lidguard.wait_until(lambda: len(logind_mock.get_method_calls("Suspend")) > 1, timeout=3)
    [entry] = lidguard.json("suspend-history")["entries"]
    assert entry["Succeeded"] is True and entry["SessionIdentifier"] == "claude-e2e"
    assert not ours(logind_mock.list_inhibitors())
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert "Internal error" not in log and log.count("runtime-result") == 2
