"""The transcript monitor logs a skip once per change of what it sees, not once per registry change.

A Copilot session whose session-state folder is missing (or any session whose transcript folder is gone)
is looked at again on every change of any session, so that a folder appearing later is still noticed; each
look logged `...-transcript-monitor-skipped` again: N such sessions and E events wrote N x E lines (the
session log filled with the same sentence, a quadratic spam). Now: once per session and path, again only
after the monitor ran or the path changed."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from lidguard_runtime_harness import Harness, run_mock, with_runtime  # noqa: E402

SESSIONS = 20
EVENTS = 50


def test_a_missing_transcript_folder_is_logged_once_per_session(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))  # no session-state folder at all
    counts: dict[str, int] = {}

    async def body(h: Harness) -> None:
        for index in range(SESSIONS):
            await h.start(f"c{index}", "GitHubCopilot")
        for index in range(EVENTS):
            await h.send("mark-session-active", Provider="GitHubCopilot", SessionIdentifier=f"c{index % SESSIONS}")
        await anyio.sleep(0.1)
        counts["before"] = len(h.log_entries("github-copilot-transcript-monitor-skipped"))
        # the folder appears: the next change starts the monitor; it goes again: one more skip for that session
        folder = tmp_path / "copilot" / "session-state" / "c3"
        folder.mkdir(parents=True)
        await h.send("mark-session-active", Provider="GitHubCopilot", SessionIdentifier="c0")
        folder.rmdir()
        await h.stop("c3", "GitHubCopilot")
        await h.start("c3", "GitHubCopilot")
        for index in range(EVENTS):
            await h.send("mark-session-active", Provider="GitHubCopilot", SessionIdentifier=f"c{index % SESSIONS}")
        counts["after"] = len(h.log_entries("github-copilot-transcript-monitor-skipped"))

    run_mock(lambda: with_runtime(Harness(), body))
    print(counts)
    assert counts == {"before": SESSIONS, "after": SESSIONS + 1}
