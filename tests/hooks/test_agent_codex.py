"""Codex's newer events (issue 35.3; payloads as AGENT_CLIS.md records them): Interrupt ends the turn like a
stop but never as a normal end, SubagentStart/SubagentStop keep background work in flight, both installed
(Interrupt clamped to 3 s like SessionEnd); hook-status reads ``[features] hooks`` as the canonical key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lidguard.agents import codex as codex_agent
from lidguard.hooks.runner import run_hook
from lidguard.runtime.requests import check_wire_message, parse_request

COMMON = {"session_id": "01a22a59-65c4-7000-8000-000000000001", "cwd": "/work", "model": "fake-model",
          "transcript_path": "/home/u/.codex/sessions/2026/11/30/rollout-2026-11-30T02-47-11-01a22a59.jsonl",
          "permission_mode": "bypassPermissions"}
codex = codex_agent.installer()


def _one(stub_environment, payload: dict[str, Any]) -> dict[str, Any]:
    runtime, environment = stub_environment()
    run_hook("codex", [], json.dumps({**COMMON, **payload}).encode(), environment)
    [(message, _, _)] = runtime.requests
    check_wire_message(message)
    parse_request(message)
    return message


def test_interrupt_ends_the_turn_without_a_normal_session_end(stub_environment):
    message = _one(stub_environment, {"hook_event_name": "Interrupt", "turn_id": "01a22a59-65db"})
    assert message["Command"] == "stop" and message["IsProviderSessionEnd"] is False
    assert message["IsTurnEnd"] is True and "WaitForFollowUp" not in message
    stop = _one(stub_environment, {"hook_event_name": "Stop", "turn_id": "t", "stop_hook_active": False})
    assert stop["IsTurnEnd"] is True and stop["IsProviderSessionEnd"] is True
    end = _one(stub_environment, {"hook_event_name": "SessionEnd", "reason": "other"})
    assert "IsTurnEnd" not in end


@pytest.mark.parametrize(("payload", "state"), [
    ({"hook_event_name": "SubagentStart", "agent_id": "019a-child", "agent_type": "default", "source": "startup"},
     "Running"),
    ({"hook_event_name": "SubagentStop", "agent_id": "019a-child", "agent_type": "default", "turn_id": "t2",
      "agent_transcript_path": "/home/u/.codex/sessions/child.jsonl", "last_assistant_message": "done",
      "stop_hook_active": False}, "Finished"),
])
def test_subagents_are_background_work_of_the_parent_session(stub_environment, payload, state):
    message = _one(stub_environment, payload)
    assert message["Command"] == "mark-session-active" and message["SessionIdentifier"] == COMMON["session_id"]
    assert (message["ToolCallId"], message["ToolCallState"], message["BackgroundWork"]) == (
        "subagent:019a-child", state, True)


@pytest.fixture
def codex_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return isolated_home / ".codex"


def test_interrupt_and_subagents_are_installed_and_trusted(codex_home: Path):
    codex.install(None, 600)
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert {"Interrupt", "SubagentStart", "SubagentStop"} <= set(hooks)
    assert hooks["Interrupt"][0]["hooks"][0]["timeout"] == 3  # Codex clamps it: the trust hash needs 3
    lines = codex.status_lines(None, 600)
    assert "Status: Installed" in lines and "Untrusted hooks: none" in lines
    assert "Interrupt: Installed" in lines


@pytest.mark.parametrize(("toml", "flag", "source", "note"), [
    ("", "on", "[features] hooks not set: on by default", None),
    ("[features]\nhooks = true\ncodex_hooks = false\n", "on", "[features] hooks", "hooks decides"),
    ("[features]\nhooks = false\ncodex_hooks = true\n", "off", "[features] hooks", "hooks decides"),
    ("[features]\ncodex_hooks = true\n", "on", "[features] codex_hooks", "rename it to hooks"),
])
def test_hook_status_reads_features_hooks_as_the_canonical_key(codex_home: Path, toml, flag, source, note):
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(toml)
    lines = codex.status_lines(None, 600)
    assert f"Feature flag: {flag}" in lines and f"Feature flag from: {source}" in lines
    notes = [line for line in lines if line.startswith("Note: ")]
    assert (note is None and not notes) or (note is not None and note in notes[0] and "deprecated" in notes[0])
