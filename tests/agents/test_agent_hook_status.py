"""``lidguard hook-status`` explains the silent failures of AGENT_CLIS_MORE.md, checked against the real CLIs:
Gemini CLI runs no hooks at all (the user's own included) in a folder it does not trust, and none with
``hooksConfig.enabled: false``; Qwen Code runs none with ``disableAllHooks: true``. Each case shows the
status lines, then a real turn that reaches the fake model with no lidguard hook running."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents_harness import GEMINI_MODEL, AgentRun

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def hook_status(run: AgentRun) -> str:
    return run.lidguard_run("hook-status", "--provider", run.name).stdout


def assert_no_hook_ran(run: AgentRun, context: str) -> None:
    assert run.model.model_requests(), f"the agent never reached the model\n{context}"
    assert not (run.lidguard.data_dir / f"{run.name}-hook-events.log").exists(), context
    assert not run.events("session-started"), context


def test_gemini_in_an_untrusted_folder_runs_no_hooks_and_hook_status_says_so(agent: Any) -> None:
    run = agent("gemini")
    run.hook_install()
    run.trust_gemini_folder("DO_NOT_TRUST")
    status = hook_status(run)
    assert "  Status: Installed" in status and "  Hooks enabled: True" in status, status
    assert f"  Current folder: {run.work}" in status, status
    assert "  Current folder trust: not trusted (DO_NOT_TRUST in" in status, status
    assert "Warning: Gemini CLI runs no hooks at all, user hooks included, in a folder it does not trust" in status
    run.prepare_machine(lid="open")
    run.start_interactive([str(run.cli), "-m", GEMINI_MODEL, "-i", "run echo hello"])
    # BeforeAgent and BeforeTool come before the confirmation dialog (AGENT_CLIS_MORE.md 1.5): once the dialog
    # or the answer shows, a hook that was going to run has run.
    shown = run.wait_until(lambda: any(text in run.screen() for text in ("Allow execution", "All done")), timeout=90)
    context = f"{run.screen()}\n{run.describe()}"
    assert shown, context
    assert_no_hook_ran(run, context)


@pytest.mark.parametrize(("name", "switch", "explained"), [
    ("gemini", {"hooksConfig": {"enabled": False}},
     "Warning: hooksConfig.enabled is false in this settings file; Gemini CLI runs no hooks."),
    ("qwen", {"disableAllHooks": True},
     "Warning: disableAllHooks is true in this settings file; Qwen Code runs no hooks."),
])
def test_hooks_turned_off_in_settings_run_nothing_and_hook_status_says_so(
        agent: Any, name: str, switch: dict[str, Any], explained: str) -> None:
    run = agent(name)
    run.hook_install()
    path = run.home / f".{name}" / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **switch}, indent=2))
    status = hook_status(run)
    assert "  Status: Installed" in status and "  Hooks enabled: False" in status and explained in status, status
    run.prepare_machine(lid="open")
    result = run.run_headless()
    context = run.describe(result)
    assert result.returncode == 0 and "All done: hello" in result.stdout, context
    assert_no_hook_ran(run, context)
