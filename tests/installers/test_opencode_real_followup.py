"""Bonus: ask-before-sleep with the real OpenCode CLI (`opencode run`, from H13's npm cache) against the
fake model of tests/agents: the managed plugin waits inside the final text part's awaited
``experimental.text.complete``, the real ``lidguard opencode-hook`` waits for the fake notification
server's reply, the plugin sends it with ``promptAsync``, and OpenCode makes one more model request
carrying it. The continued turn's stop (``stop_hook_active``, RepeatClosedLidStopFollowUp off) suspends
at once. Skipped when the CLI is not installed."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))

from agents_harness import AgentRun  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from followup_server import FollowUpServer  # noqa: E402

# No skip of its own: AgentRun -> agent_cli skips without node/npm, and fails under CI=true or when the
# pinned opencode is missing (a silently skipped end-to-end test must not pass CI).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

REPLY = "now also print the date"


def test_opencode_run_waits_for_the_reply_and_continues_with_it(lidguard: Any) -> None:
    server = FollowUpServer()
    with FakeModel() as model:
        run = AgentRun("opencode", lidguard, model)
        try:
            run.hook_install()
            lidguard.set_machine(lid="closed", displays=[])
            run.lidguard_run("settings", "--post-stop-suspend-delay-seconds", "10",
                             "--closed-lid-stop-follow-up-webhook-url", server.url,
                             "--closed-lid-stop-follow-up-delay-seconds", "20",
                             "--repeat-closed-lid-stop-follow-up", "false")
            run.start_runtime()
            results: list[Any] = []
            agent = threading.Thread(target=lambda: results.append(run.run_headless(timeout=200)), daemon=True)
            agent.start()
            asked = server.started.wait(120)
            if asked:
                server.reply(REPLY)
            agent.join(220)
            assert results, "opencode run did not finish"
            result = results[0]
            context = run.describe(result)
            assert asked, f"no StopFollowUp webhook\n{context}"
            assert result.returncode == 0, context
            [event] = server.events("StopFollowUp")
            assert event["provider"] == "OpenCode" and event["lastAssistantMessage"] == "All done: hello", event
            carrying = [request for request in model.model_requests() if REPLY in request.text()]
            assert carrying, f"no model request carries the reply\n{context}"
            assert run.wait_until(lambda: run.suspend_requests(), timeout=30), context
            assert len(server.events("StopFollowUp")) == 1  # the continued stop did not ask again
        finally:
            run.close()
            server.close()
