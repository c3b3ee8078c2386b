"""The real Augment ``auggie`` 0.36.0 (npm), logged in to a fake Augment tenant (``fake_augment.py``: auggie
has no model API of its own, AGENT_CLIS_NEW.md section 6): after ``lidguard hook-install --provider auggie``
one ``auggie -p`` turn with a shell tool call reaches the runtime through its hooks - PromptSubmit starts the
session keyed by the conversation, watching the ``node .../.bin/auggie`` the hooks run under, the tool is
activity (PromptSubmit's hook is not awaited, so the first PreToolUse may come before the start), Stop ends
it, and the closed lid then suspends once. With the tenant's ``enable_hooks`` flag off the same turn runs no
hook at all."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from agents_harness import AgentRun
from fake_augment import SHELL_TOOL, FakeAugment

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def tenant() -> Iterator[FakeAugment]:
    with FakeAugment() as fake:
        yield fake


@pytest.fixture
def auggie(lidguard: Any, tenant: FakeAugment) -> Iterator[AgentRun]:
    run = AgentRun("auggie", lidguard, tenant)
    yield run
    run.close()


def test_a_real_auggie_turn_starts_and_stops_its_session_through_the_hooks(auggie: AgentRun) -> None:
    installed = auggie.hook_install()
    assert "augment" in installed.lower() and (auggie.home / ".augment" / "settings.json").is_file(), installed
    auggie.prepare_machine(lid="closed")
    result = auggie.run_headless(timeout=90)
    context = auggie.describe(result)
    assert result.returncode == 0 and "All done: hello" in result.stdout, context
    assert "unsupported configuration" not in result.stdout + result.stderr, context  # our matchers are accepted
    assert any("hello" in request.text() for request in auggie.model.model_requests()[1:]), context

    start = auggie.started_session("Augment")  # also: the watched pid is the node the hooks run under
    conversation = start["SessionIdentifier"]
    assert len(conversation) == 36 and start["WorkingDirectory"] == str(auggie.work), context
    mine = [e for e in auggie.session_log() if e.get("SessionIdentifier") == conversation]
    stops = [e for e in mine if e["EventName"] == "session-stopped"]
    assert len(stops) == 1 and stops[0]["IsProviderSessionEnd"] is True, context
    assert stops[0]["SessionEndReason"] == "Stop:end_turn", context
    hook_log = (auggie.lidguard.data_dir / "auggie-hook-events.log").read_text()
    received = sorted(re.findall(r"kind=received event=(\S+)", hook_log))
    assert received == sorted(["PromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]), hook_log
    for event in ("PreToolUse", "PostToolUse"):
        assert re.search(rf"event={event} .* tool={SHELL_TOOL} ", hook_log), hook_log
    # auggie does not wait for its PromptSubmit hook (nor SessionStart/SessionEnd): the first PreToolUse may reach
    # the runtime before the start and be ignored; PostToolUse comes after the awaited PreToolUse and the tool.
    assert any(e["EventName"] == "session-activity-recorded" for e in mine), context

    assert auggie.wait_until(lambda: auggie.suspend_requests()), context
    status = auggie.status()
    assert status["activeSessionCount"] == 0 and status.get("pendingSuspend") is None, status
    time.sleep(1.0)  # a second request would follow the first at once (auggie has already exited)
    assert len(auggie.suspend_requests()) == 1, f"{auggie.lidguard.actions()}\n{context}"


def test_without_the_tenants_enable_hooks_flag_auggie_runs_no_hook(auggie: AgentRun, tenant: FakeAugment) -> None:
    tenant.hooks = False
    auggie.hook_install()
    result = auggie.run_headless(timeout=90)
    assert result.returncode == 0 and "All done: hello" in result.stdout, auggie.describe(result)
    assert not (auggie.lidguard.data_dir / "auggie-hook-events.log").exists(), auggie.describe(result)
    assert auggie.events("session-started") == []
