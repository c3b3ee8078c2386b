"""The real Kilo Code CLI 7.7.9 (``kilo run``, the platform package's native program) against the fake model:
``lidguard hook-install --provider kilo`` writes the shared OpenCode-style plugin into Kilo's config folder, and
a real turn reaches the runtime through ``lidguard kilo-hook`` - the session started with the ``kilo`` process
watched (the plugin runs inside it), tool activity, the stop at ``session.idle`` and, the lid being closed with
no display, one suspend. Then ask-before-sleep: the plugin waits in the final text part, the reply goes back to
Kilo through its plugin SDK (``promptAsync``) and Kilo makes one more model request carrying it."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from agents_harness import AgentRun

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from followup_server import FollowUpServer  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROVIDER = "KiloCode"
REPLY = "now also print the date"


class KiloRun(AgentRun):
    def _configure_kilo(self) -> None:
        """AGENT_CLIS_NEW.md section 3: ``kilo.json`` in ``$XDG_CONFIG_HOME/kilo`` naming the fake provider, and
        no network beyond the fake model (no update check, model catalogue, telemetry, indexing or sharing)."""
        import json

        self.env = {key: value for key, value in self.env.items() if not key.startswith(("KILO", "OPENCODE"))}
        folder = self.home / ".config" / "kilo"
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "autoupdate": False, "share": "disabled", "model": "fake/fake-model", "small_model": "fake/fake-model",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake local",
                                  "options": {"baseURL": f"{self.model.base_url}/v1", "apiKey": "sk-fake-local"},
                                  "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                                            "limit": {"context": 128000, "output": 4096}}}}},
        }
        (folder / "kilo.json").write_text(json.dumps(config, indent=2))
        self.env.update({name: "1" for name in (
            "KILO_DISABLE_AUTOUPDATE", "KILO_DISABLE_MODELS_FETCH", "KILO_DISABLE_CODEBASE_INDEXING",
            "KILO_DISABLE_LSP_DOWNLOAD", "KILO_DISABLE_SHARE", "KILO_DISABLE_SESSION_INGEST", "KILO_DISABLE_PRESENCE",
            "KILO_DISABLE_DEFAULT_PLUGINS", "DO_NOT_TRACK")})
        self.env["KILO_TELEMETRY_LEVEL"] = "off"

    def headless_command(self, prompt: str = "run echo hello and then say hi") -> list[str]:
        return [str(self.cli), "run", prompt]


@pytest.fixture
def kilo(lidguard: Any, fake_model: Any) -> Any:
    run = KiloRun("kilo", lidguard, fake_model)
    yield run
    run.close()


def _mine(run: KiloRun, starts: int = 1) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one Kilo session (``starts`` starts; checked to watch the ``kilo`` process itself) and its log."""
    context = run.describe()
    started = [entry for entry in run.events("session-started") if entry["Provider"] == PROVIDER]
    assert len(started) == starts and len({entry["SessionIdentifier"] for entry in started}) == 1, context
    session = started[0]["SessionIdentifier"]
    assert session.startswith("ses_") and started[0]["WorkingDirectory"] == str(run.work), started[0]
    watched = started[0]["WatchedProcessIdentifier"]
    assert run.watch is not None and run.watch.seen.get(watched) == "kilo", (watched, run.watch.seen)
    assert watched == run.agent_pid, "the plugin runs in the kilo process the test started"
    return started[0], [entry for entry in run.session_log() if entry.get("SessionIdentifier") == session]


def test_hook_install_writes_the_plugin_and_a_real_turn_starts_and_stops_the_session(kilo: KiloRun) -> None:
    installed = kilo.hook_install()
    plugin = kilo.home / ".config" / "kilo" / "plugin" / "lidguard.js"
    assert f"Config: {plugin}" in installed and '"kilo-hook", "--event"' in plugin.read_text(), installed
    kilo.prepare_machine(lid="closed")
    result = kilo.run_headless(timeout=180)
    context = kilo.describe(result)
    assert result.returncode == 0 and "All done: hello" in result.stdout, context
    assert any("hello" in request.text() for request in kilo.model.tool_requests()[1:]), context

    start, mine = _mine(kilo)
    names = [entry["EventName"] for entry in mine]
    assert names.index("session-started") < names.index("session-stopped"), names
    assert [e for e in mine if e["Command"] == "mark-session-active" and e["Succeeded"]], context
    [stop] = [entry for entry in mine if entry["EventName"] == "session-stopped"]
    assert stop["SessionEndReason"] == "session.idle" and stop["IsProviderSessionEnd"] is True, stop

    assert kilo.wait_until(lambda: kilo.suspend_requests()), context
    status = kilo.status()
    assert status["activeSessionCount"] == 0 and status.get("pendingSuspend") is None, status
    assert len(kilo.suspend_requests()) == 1, kilo.lidguard.actions()


def test_ask_before_sleep_continues_the_real_turn_through_the_plugin_sdk(kilo: KiloRun) -> None:
    server = FollowUpServer()
    try:
        kilo.hook_install()
        kilo.lidguard.set_machine(lid="closed", displays=[])
        kilo.lidguard_run("settings", "--post-stop-suspend-delay-seconds", "10",
                          "--closed-lid-stop-follow-up-webhook-url", server.url,
                          "--closed-lid-stop-follow-up-delay-seconds", "20",
                          "--repeat-closed-lid-stop-follow-up", "false")
        kilo.start_runtime()
        results: list[Any] = []
        agent = threading.Thread(target=lambda: results.append(kilo.run_headless(timeout=200)), daemon=True)
        agent.start()
        asked = server.started.wait(150)
        if asked:
            server.reply(REPLY)
        agent.join(220)
        assert results, "kilo run did not finish"
        context = kilo.describe(results[0])
        assert asked and results[0].returncode == 0, context
        [event] = server.events("StopFollowUp")
        assert event["provider"] == PROVIDER and event["lastAssistantMessage"] == "All done: hello", event
        assert [request for request in kilo.model.model_requests() if REPLY in request.text()], context

        # The reply restarts the session and the continuation's chat.message starts it again; two stops, the
        # second one marked as after our continuation (the plugin counts it: stop_hook_active).
        _, mine = _mine(kilo, starts=3)
        stops = [entry for entry in mine if entry["EventName"] == "session-stopped"]
        assert len(stops) == 2, context
        assert kilo.wait_until(lambda: kilo.suspend_requests(), timeout=30), context
        assert len(server.events("StopFollowUp")) == 1  # the continued stop did not ask again
        # One stop per turn: the bus session.idle of the turn we continued (after our chat.message in Kilo)
        # sent a second one, which ended the session while the continued turn still ran.
        hook_log = (kilo.lidguard.data_dir / "kilo-hook-events.log").read_text().splitlines()
        assert len([line for line in hook_log if "kind=received event=session.idle " in line]) == 2, context
    finally:
        server.close()
