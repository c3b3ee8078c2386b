"""A new agent is its module and one registry line (issue 35.1; AGENTS.md "A new agent"): a stand-in agent
registered only that way gets its `<key>-hook` command, its mapping and output contract through the
engine, its `--provider` words and a wire provider the runtime's parser accepts."""

from __future__ import annotations

import json
import sys
import types
from typing import Any

import pytest

from lidguard import agents, providers
from lidguard.agents import IGNORE, Action, stop_action


def _stand_in() -> types.ModuleType:
    module = types.ModuleType("lidguard.agents.demo")
    module.KEY, module.PROVIDER, module.DISPLAY, module.ALIASES = "demo", "Demo", "Demo Agent", ("demo-cli",)
    module.PROCESS_COMMANDS, module.PROCESS_PACKAGES = frozenset({"demo"}), ("@demo/cli",)
    module.LOG_DETAILS = (("tool", ("tool",)),)

    def map_event(event: str, payload: Any) -> Action:
        if event == "prompt":
            return Action("start", prompt=payload.text("prompt"))
        if event == "ask":
            return Action("permission")
        return stop_action(payload, event) if event == "done" else IGNORE

    module.map_event = map_event
    module.permission_output = lambda decision: {"demo": decision}
    return module


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = _stand_in()
    monkeypatch.setitem(sys.modules, "lidguard.agents.demo", module)
    monkeypatch.setitem(agents.AGENTS, "demo", "Demo")
    return module


def test_a_registered_agent_runs_through_the_engine(demo: types.ModuleType, stub_environment: Any) -> None:
    from lidguard.hooks.runner import run_hook

    runtime, environment = stub_environment()
    assert agents.agent_for_hook_command("demo-hook") == "demo"
    run_hook("demo", [], json.dumps({"hook_event_name": "prompt", "session_id": "d1", "prompt": "hi"}).encode(),
             environment)
    start = runtime.requests[-1][0]
    assert (start["Command"], start["Provider"], start["SessionIdentifier"]) == ("start", "Demo", "d1")
    runtime.lid = "Closed"
    output = run_hook("demo", [], json.dumps({"hook_event_name": "ask", "session_id": "d1"}).encode(), environment)
    assert output == {"demo": "Deny"}


def test_its_wire_value_and_words_parse_without_an_enum_member(demo: types.ModuleType) -> None:
    provider = providers.AgentProvider("Demo")
    assert provider is providers.AgentProvider("Demo") and provider.value == "Demo"
    assert providers.parse_provider("demo-cli") is provider
    assert providers.agent_process_word(provider) in ("demo", "unknown")
    with pytest.raises(ValueError):
        providers.AgentProvider("NoSuchAgent")
