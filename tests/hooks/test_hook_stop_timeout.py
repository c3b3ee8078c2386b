"""One formula for the blocking Stop hook's life (issue 19): the installed timeout (seed 000: delay +
reply window + 5 min) and the hook's own wait come from ``hooks.stop_timeout``; for the same settings
file the hook always gives up (and has told the runtime when) before the agent would kill it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lidguard.hooks.followup import follow_up_wait_seconds
from lidguard.installers import common
from lidguard.ipc.stop_timeout import (
    HOOK_GIVE_UP_MARGIN_SECONDS,
    RUNTIME_ANSWER_MARGIN_SECONDS,
    runtime_answer_after_seconds,
    stop_hook_timeout_seconds,
    stop_hook_wait_seconds,
)

URL = "https://notify.example/api/webhooks/lidguard/s"


@pytest.mark.parametrize(("delay", "window"), [(10, 120), (10, 20), (3600, 3600), (0 + 10, 3600), (600, 20)])
def test_the_hook_waits_less_than_the_installed_timeout_for_the_same_settings_file(tmp_path: Path, delay, window):
    settings = {"ClosedLidStopFollowUpWebhookUrl": URL, "PostStopSuspendDelaySeconds": delay,
                "ClosedLidStopFollowUpDelaySeconds": window}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    installed = common.stop_hook_timeout_seconds(path)
    # issue 32.6: the margins come out of the installed timeout, never out of the extended window
    assert installed == delay + window + 300 + HOOK_GIVE_UP_MARGIN_SECONDS + RUNTIME_ANSWER_MARGIN_SECONDS
    wait = follow_up_wait_seconds(settings)
    assert wait is not None and wait == installed - HOOK_GIVE_UP_MARGIN_SECONDS
    assert runtime_answer_after_seconds(wait) < wait < installed


def test_the_formula_is_monotonic_and_never_zero():
    for delay in range(0, 3601, 450):
        for window in range(0, 3601, 450):
            timeout = stop_hook_timeout_seconds(delay, window)
            assert 1 <= stop_hook_wait_seconds(delay, window) < timeout
    assert runtime_answer_after_seconds(1) == 0.0


@pytest.mark.parametrize(("delay", "window"), [(10, 120), (0, 0), (3600, 3600), (600, 20)])
def test_the_hook_and_the_runtime_stay_for_the_whole_extended_reply_window(delay, window):
    """Issue 32.6: the runtime answers the hook no earlier than delay + window + 5 min (was 20 s before)."""
    extended_window = delay + window + 300
    wait = stop_hook_wait_seconds(delay, window)
    assert runtime_answer_after_seconds(wait) >= extended_window
    assert runtime_answer_after_seconds(wait) < wait < stop_hook_timeout_seconds(delay, window)
