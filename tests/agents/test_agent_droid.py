"""Factory Droid 0.225.2, the real CLI (``@factory/cli``; AGENT_CLIS_NEW.md 1) against the fake model's Chat
Completions with its ``Execute`` tool: ``lidguard hook-install --provider droid`` writes the events at the top
level of ``~/.factory/hooks.json``; a ``droid exec`` turn (no UserPromptSubmit there: its SessionStart starts
the session) is protected, watched on the native ``droid`` and ends with one suspend with the lid closed; a
blocking Stop continues the real agent once (the ask-before-sleep mechanism: lidguard's Stop prints the same
``{"decision": "block", "reason"}``); in the TUI the session starts at the prompt, watches the TUI's own
``droid`` (not its stream-jsonrpc worker) and the approval dialog soft-locks it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_harness import PROMPT, AgentRun
from hook_script import CONTINUATION
from test_agent_turns import assert_protected_turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _hooks_file(run: AgentRun) -> dict[str, Any]:
    return json.loads((run.home / ".factory" / "hooks.json").read_text())


def _hook_log(run: AgentRun) -> list[str]:
    path = run.lidguard.data_dir / "droid-hook-events.log"
    return path.read_text().splitlines() if path.exists() else []


def test_hook_install_and_one_real_exec_turn_protected_then_one_suspend(agent: Any) -> None:
    run = agent("droid")
    assert "Factory Droid" in run.hook_install()
    config = _hooks_file(run)
    assert "hooks" not in config and {"SessionStart", "PreToolUse", "Stop", "SessionEnd"} <= set(config)
    assert config["Stop"][0]["hooks"][0]["command"].endswith("droid-hook")
    run.prepare_machine(lid="closed")
    result = run.run_headless()
    start = assert_protected_turn(run, result)
    log = _hook_log(run)
    context = run.describe(result)
    # exec: SessionStart started it (no UserPromptSubmit), Stop ended it, then SessionEnd came too
    assert any("event=SessionStart" in line and "command=start" in line for line in log), context
    assert not any("event=UserPromptSubmit" in line for line in log), context
    assert any("event=SessionEnd" in line and "command=stop" in line for line in log), context
    transcripts = [path.stem for path in (run.home / ".factory" / "sessions").glob("*/*.jsonl")]
    assert start["SessionIdentifier"] in transcripts and start["TranscriptPath"].endswith(".jsonl"), context


def test_a_blocking_stop_hook_makes_the_real_droid_continue_once(agent: Any) -> None:
    run = agent("droid")
    run.hook_install()
    config = _hooks_file(run)
    config["Stop"].append({"hooks": [{"type": "command", "command": run.hook_command("stop", "--block-once"),
                                      "timeout": 30}]})
    (run.home / ".factory" / "hooks.json").write_text(json.dumps(config, indent=2))
    run.prepare_machine(lid="open")
    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0, context

    stops = [call for call in run.hook_calls() if call["label"] == "stop"]
    assert len(stops) == 2, f"one blocked Stop and one that ended the turn: {stops}\n{context}"
    assert json.loads(stops[0]["stdin"])["stop_hook_active"] is False
    assert json.loads(stops[1]["stdin"])["stop_hook_active"] is True
    requests = run.model.model_requests()
    carrying = [index for index, request in enumerate(requests) if CONTINUATION in request.text()]
    assert len(carrying) == 1 and carrying[0] >= 2, f"one more model request carries the reason\n{context}"
    # lidguard saw both stops (the second with StopHookActive); lid open: no suspend, nothing left active
    stopped = [line for line in _hook_log(run) if "event=Stop" in line and "command=stop" in line]
    assert len(stopped) == 2, context
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0), context
    assert run.suspend_requests() == []


def test_the_tui_starts_at_the_prompt_watches_the_tui_and_soft_locks_at_the_approval(agent: Any) -> None:
    run = agent("droid")
    run.hook_install()
    run.prepare_machine(lid="open")
    pane = run.start_interactive([str(run.cli)])
    assert run.wait_screen("Airgap"), run.screen()
    assert run.wait_until(lambda: any("event=SessionStart" in line for line in _hook_log(run))), run.describe()
    assert run.events("session-started") == [], "the TUI's launch is no work yet"
    run.send_keys(PROMPT)
    run.send_keys("Enter")
    assert run.wait_screen("Yes, allow"), run.screen()  # its approval dialog (default autonomy: off)
    assert run.wait_until(lambda: run.events("session-softlock-recorded")), run.describe()
    [started] = run.events("session-started")
    assert started["WatchedProcessIdentifier"] == pane, (pane, run.watch.seen if run.watch else None)
    run.send_keys("Enter")  # Yes, allow
    assert run.wait_screen("All done: hello"), run.screen()
    assert run.wait_until(lambda: run.status()["activeSessionCount"] == 0), run.describe()
    run.send_keys("/quit")
    run.send_keys("Enter")
    assert run.wait_until(run.interactive_ended), run.screen()
    # /quit: SessionEnd twice (the TUI's own, then its worker's), both after the session ended
    assert run.wait_until(lambda: len([line for line in _hook_log(run) if "kind=received event=SessionEnd" in line
                                       and "action=stop" in line]) == 2), run.describe()
    assert len(run.events("session-started")) == 1 and len(run.events("session-stopped")) == 1, run.describe()
