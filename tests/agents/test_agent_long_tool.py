"""A long tool call is work: real Claude Code (``-p``) against the fake model runs a shell tool for
over two minutes while the inactivity timeout is one minute and the lid is closed. The session must
never be soft-locked and nothing may suspend while the tool runs (its processes keep using CPU time,
read when the timer fires); once the tool ends and the agent stops, exactly one suspend."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fake_model import Script

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TOOL_SECONDS = 125
# A build-like tool: a little CPU work every half second (bash arithmetic), for over two minutes, timed by
# /proc/uptime (the boot-time clock, as the test's monotonic clock): bash's $SECONDS follows the wall
# clock, which this VM once stepped ~12 s forward mid-run (the tool ended after 112.7 s of real time).
COMMAND = (f"read up _ < /proc/uptime; end=$((${{up%.*}}+{TOOL_SECONDS})); "
           "while read up _ < /proc/uptime; [ ${up%.*} -lt $end ]; do i=0; "
           "while [ $i -lt 4000 ]; do i=$((i+1)); done; sleep 0.5; done; echo hello")


def test_a_two_minute_tool_with_a_one_minute_timeout_never_sleeps_and_suspends_once_after(agent: Any) -> None:
    run = agent("claude")
    run.model.script = Script(command=COMMAND, description="A long build",
                              extra_arguments={"timeout": 600000})
    run.hook_install()
    run.prepare_machine(lid="closed")
    run.lidguard_run("settings", "--session-timeout-minutes", "1")
    began = time.monotonic()
    # -p cannot ask for permission: the (not read-only) build command is allowed up front.
    result = run.run_headless([str(run.cli), "-p", "run the long build", "--allowedTools", "Bash"], timeout=400)
    took = time.monotonic() - began
    tool_results = [request.text()[-800:] for request in run.model.tool_requests()[1:]]
    context = f"{run.describe(result)}\ntool results: {tool_results}"
    assert result.returncode == 0, context
    assert took >= TOOL_SECONDS, context  # the tool really ran its two minutes
    assert "All done: hello" in result.stdout, context

    log = run.session_log()
    names = [entry["EventName"] for entry in log]
    assert "running-tool-activity" in names, context  # the timer fired while the tool ran, and kept it active
    assert "session-timeout-softlock-recorded" not in names, context
    assert "session-running-tool-abandoned" not in names, context
    stopped = names.index("session-stopped")
    assert all(name != "session-timeout-softlock-recorded" for name in names[:stopped]), context

    assert run.wait_until(lambda: run.suspend_requests()), context
    actions = [action["action"] for action in run.lidguard.actions()]
    # Protection was held from the start to the stop: released once, right before the one suspend.
    assert actions.count("protection-released") == 1, actions
    assert actions.index("protection-released") < actions.index("suspend-requested"), actions
    time.sleep(1.0)
    assert len(run.suspend_requests()) == 1, f"{run.lidguard.actions()}\n{context}"
