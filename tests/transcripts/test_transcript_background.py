"""Claude's "[Request interrupted by user]" (Esc fires no hook) ends only the turn (issue 35.3): while its
subagents still run the stop is deferred and the transcript is followed on. MockClock, poll only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from lidguard_runtime_harness import Harness, run_mock, with_runtime  # noqa: E402

from lidguard.providers import AgentProvider  # noqa: E402
from lidguard.runtime.components.transcripts import TranscriptComponent  # noqa: E402
from lidguard.runtime.sessions import SessionKey  # noqa: E402

KEY = SessionKey.create(AgentProvider.CLAUDE, "s1")
INTERRUPT = {"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}}


def _append(path: Path, record: dict) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def test_an_interrupt_while_a_subagent_runs_defers_the_stop_and_the_transcript_is_followed_on(tmp_path: Path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("", encoding="utf-8")

    async def body(h: Harness) -> None:
        monitors = next(c for c in h.runtime.components if isinstance(c, TranscriptComponent))
        monitors.use_watchfiles = False
        await h.start("s1", "Claude", TranscriptPath=str(transcript))
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1", ToolCallId="subagent:a1",
                     ToolCallState="Running", BackgroundWork=True)
        _append(transcript, INTERRUPT)
        await anyio.sleep(2.1)
        session = h.runtime.state.sessions[KEY]
        assert session.pending_provider_work and h.log_entries("session-stop-deferred")
        assert not h.log_entries("session-stopped")
        assert KEY in monitors.monitored  # followed on: later growth is the subagent's activity
        _append(transcript, {"type": "assistant", "message": {"content": "working"}})
        await anyio.sleep(2.1)
        assert h.runtime.state.sessions[KEY].last_activity_at > session.last_activity_at

    run_mock(lambda: with_runtime(Harness(), body))


def test_an_interrupt_with_nothing_in_flight_still_ends_the_session(tmp_path: Path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("", encoding="utf-8")

    async def body(h: Harness) -> None:
        next(c for c in h.runtime.components if isinstance(c, TranscriptComponent)).use_watchfiles = False
        await h.start("s1", "Claude", TranscriptPath=str(transcript))
        _append(transcript, INTERRUPT)
        await anyio.sleep(2.1)
        assert KEY not in h.runtime.state.sessions
        [stopped] = h.log_entries("session-stopped")
        assert stopped["Command"] == "claude-transcript-interrupted"

    run_mock(lambda: with_runtime(Harness(), body))
