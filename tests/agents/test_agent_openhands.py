"""The real OpenHands CLI 1.16.0 (PyPI, its own Python 3.12 venv from ci/install-openhands.sh) against the fake model:
``lidguard hook-install --provider openhands`` writes a ``~/.openhands/hooks.json`` the real CLI runs (each test
one of its two shapes: events at the top level, the ``hooks`` wrapper); one headless turn with a terminal tool
call is protected - started, watched on the ``openhands`` process, tool activity, stopped - and suspends once
with the lid closed; ask-before-sleep's reply, printed by lidguard's own Stop hook as ``decision: deny``, makes it
send one more model request (tests/hooks/followup_server.py as the notification server, the fake platform).
OpenHands' ``tmux -L openhands`` server is ended after each test (``AgentRun.close``)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from followup_server import FollowUpServer  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
REPLY = "now also print the date"


def _running(pid: int) -> bool:
    """Alive and not a zombie (an ended server waits for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split(None, 1)[0] != "Z"


def test_one_real_turn_is_protected_and_suspends_once_with_the_lid_closed(agent: Any) -> None:
    """The user's file has its events at the top level (snake_case, OpenHands' own ``save`` shape): hook-install
    keeps that shape (a ``hooks`` wrapper would hide the user's events) and both the user's and lidguard's run."""
    run = agent("openhands")
    config = run.home / ".openhands" / "hooks.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"pre_tool_use": [{"matcher": "terminal",
                                                    "hooks": [{"command": run.hook_command("user-pre")}]}]}))
    assert "Installed the LidGuard OpenHands hooks" in run.hook_install()
    written = json.loads(config.read_text())
    assert sorted(written) == ["post_tool_use", "pre_tool_use", "session_end", "stop", "user_prompt_submit"]
    run.prepare_machine(lid="closed")
    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0, context
    assert "All done: hello" in result.stdout, context
    assert [call["label"] for call in run.hook_calls()] == ["user-pre"], context
    assert any("hello" in request.text() for request in run.model.tool_requests()[1:]), context  # the tool ran

    start = run.started_session("OpenHands")  # watched: the openhands process (python3.12), the hooks' grandparent
    session = start["SessionIdentifier"]
    assert len(session) == 36 and start["WorkingDirectory"] == str(run.work), context
    mine = [e for e in run.session_log() if e.get("SessionIdentifier") == session]
    assert any(e["Command"] == "mark-session-active" and e["Succeeded"] for e in mine), context
    stops = [e for e in mine if e["EventName"] == "session-stopped"]
    assert len(stops) == 1 and stops[0]["IsProviderSessionEnd"] is True, context

    assert run.wait_until(lambda: run.suspend_requests()), context
    status = run.status()
    assert status["activeSessionCount"] == 0 and status.get("pendingSuspend") is None, status
    time.sleep(1.0)  # a second request would follow the first at once (the agent has already exited)
    assert len(run.suspend_requests()) == 1, f"{run.lidguard.actions()}\n{context}"
    servers = run.openhands_tmux_servers()
    assert servers, "OpenHands' terminal server outlives the CLI (AgentRun.close() ends it)"
    run.close()
    assert run.wait_until(lambda: not any(_running(pid) for pid in servers), timeout=10), servers


def test_ask_before_sleep_continues_the_real_openhands_with_the_reply(agent: Any) -> None:
    """A new file (the Claude-style ``hooks`` wrapper). lidguard's own Stop hook waits for the fake notification
    server's reply and prints it as ``{"decision": "deny", "reason": ...}``; OpenHands sends it to the model as
    ``[Stop hook feedback] <reply>``. Its next Stop carries no ``stop_hook_active``; lidguard tells it is the
    continued one from the conversation's event files, and with RepeatClosedLidStopFollowUp off it suspends at once
    instead of asking again."""
    run = agent("openhands")
    assert "Installed the LidGuard OpenHands hooks" in run.hook_install()
    config = json.loads((run.home / ".openhands" / "hooks.json").read_text())
    assert list(config) == ["hooks"], config
    server = FollowUpServer()
    try:
        run.lidguard.set_machine(lid="closed", displays=[])
        run.lidguard_run("settings", "--post-stop-suspend-delay-seconds", "10",
                         "--closed-lid-stop-follow-up-webhook-url", server.url,
                         "--closed-lid-stop-follow-up-delay-seconds", "20",
                         "--repeat-closed-lid-stop-follow-up", "false")
        run.start_runtime()
        results: list[Any] = []
        turn = threading.Thread(target=lambda: results.append(run.run_headless(timeout=200)), daemon=True)
        turn.start()
        asked = server.started.wait(150)
        if asked:
            server.reply(REPLY)
            # The reply went back to the model: were the continued Stop asked again, it would get a cancel.
            run.model.wait_for(lambda: any(REPLY in r.text() for r in run.model.model_requests()), timeout=120)
            server.cancel()
        turn.join(220)
        assert results, "openhands did not finish"
        result = results[0]
        context = run.describe(result)
        assert asked, f"no StopFollowUp webhook\n{context}"
        assert result.returncode == 0, context
        first = server.events("StopFollowUp")[0]
        assert first["provider"] == "OpenHands", first
        carrying = [r for r in run.model.model_requests() if f"[Stop hook feedback] {REPLY}" in r.text()]
        assert len(carrying) == 1, f"one more model request carries the reply\n{context}"
        assert run.wait_until(lambda: run.suspend_requests(), timeout=60), context
        assert len(server.events("StopFollowUp")) == 1, server.posts  # the continued Stop did not ask again
        time.sleep(1.0)
        assert len(run.suspend_requests()) == 1, f"{run.lidguard.actions()}\n{context}"
    finally:
        server.close()
