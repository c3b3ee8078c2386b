"""Transcript monitors (REFERENCE 6): pure detection on real files, the runtime component on trio's
MockClock with the poll alone, and one real-time run through watchfiles."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from lidguard_runtime_harness import Harness, run_mock, with_runtime  # noqa: E402

from lidguard.providers import AgentProvider  # noqa: E402
from lidguard.runtime.components.transcripts import (  # noqa: E402
    CODEX_PENDING_REASON,
    TranscriptComponent,
    detect,
    read_tail,
)
from lidguard.runtime.sessions import SessionKey  # noqa: E402


def line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def append(path: Path, *records: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for record in records:
            handle.write(line(record))


CODEX_CALL = {"type": "response_item", "payload": {"type": "function_call", "name": "request_user_input",
                                                    "call_id": "c1", "arguments": "{}"}}
CODEX_OUTPUT = {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "x"}}
CODEX_ABORT = {"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}}
CODEX_MESSAGE = {"type": "event_msg", "payload": {"type": "agent_message", "message": "working"}}


# -- detection -----------------------------------------------------------------------------------------
def test_codex_turn_aborted_as_last_record_is_a_stop() -> None:
    assert detect(AgentProvider.CODEX, [CODEX_MESSAGE, CODEX_ABORT]).kind == "stop"
    assert detect(AgentProvider.CODEX, [CODEX_ABORT, CODEX_MESSAGE]).kind == "activity"


def test_codex_pending_request_user_input_soft_locks_until_its_output() -> None:
    signal = detect(AgentProvider.CODEX, [CODEX_MESSAGE, CODEX_CALL, CODEX_MESSAGE])
    assert (signal.kind, signal.reason) == ("soft-lock", CODEX_PENDING_REASON)
    signal = detect(AgentProvider.CODEX, [CODEX_CALL, CODEX_OUTPUT])
    assert (signal.kind, signal.reason) == ("activity", "codex_transcript_activity_detected")


@pytest.mark.parametrize("content", [
    "[Request interrupted by user]",
    [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
])
def test_claude_interrupt_marker_as_last_user_record_is_a_stop(content: Any) -> None:
    record = {"type": "user", "message": {"role": "user", "content": content}}
    assert detect(AgentProvider.CLAUDE, [{"type": "assistant"}, record]).kind == "stop"
    assert detect(AgentProvider.CLAUDE, [record, {"type": "assistant"}]).reason == "claude_transcript_activity_detected"


def test_copilot_abort_is_a_stop_else_activity() -> None:
    assert detect(AgentProvider.GITHUB_COPILOT, [{"type": "user.message"}, {"type": "abort"}]).kind == "stop"
    signal = detect(AgentProvider.GITHUB_COPILOT, [{"type": "abort"}, {"type": "assistant.message"}])
    assert signal.reason == "github_copilot_session_event_activity_detected"


def test_read_tail_reads_only_the_end_and_skips_cut_and_torn_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    filler = line({"type": "filler", "data": "x" * 1000})
    path.write_text(filler * 3000 + line({"type": "last"}) + '{"type": "torn', encoding="utf-8")  # ~3 MB
    records = read_tail(path, limit=64 * 1024)
    assert records[-1] == {"type": "last"}
    assert all(record["type"] in ("filler", "last") for record in records)
    assert len(records) < 70  # only the tail was parsed


# -- the component on MockClock (poll only) ------------------------------------------------------------
def component(harness: Harness) -> TranscriptComponent:
    found = next(c for c in harness.runtime.components if isinstance(c, TranscriptComponent))
    found.use_watchfiles = False
    return found


async def sleep_polls(count: int = 2) -> None:
    await anyio.sleep(1.0 * count + 0.1)


def test_growth_clears_a_soft_lock_with_the_transcript_reason(tmp_path: Path) -> None:
    transcript = tmp_path / "rollout.jsonl"
    append(transcript, CODEX_MESSAGE)

    async def body(h: Harness) -> None:
        component(h)
        await h.start("c1", "Codex", TranscriptPath=str(transcript))
        key = SessionKey.create(AgentProvider.CODEX, "c1")
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier="c1",
                     SessionStateReason="permission_prompt")
        await sleep_polls()
        assert h.runtime.state.sessions[key].soft_locked  # growth before the soft-lock is not activity
        append(transcript, CODEX_MESSAGE)
        await sleep_polls()
        assert not h.runtime.state.sessions[key].soft_locked
        messages = [entry["Message"] for entry in h.log_entries("session-activity-recorded")]
        assert any("codex_transcript_activity_detected" in message for message in messages)
        assert h.log_entries("codex-transcript-monitor-configured")

    run_mock(lambda: with_runtime(Harness(), body))


def test_pending_request_user_input_soft_locks_and_its_output_resumes(tmp_path: Path) -> None:
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text("", encoding="utf-8")

    async def body(h: Harness) -> None:
        component(h)
        await h.start("c1", "Codex", TranscriptPath=str(transcript))
        key = SessionKey.create(AgentProvider.CODEX, "c1")
        append(transcript, CODEX_CALL)
        await sleep_polls()
        assert h.runtime.state.sessions[key].soft_lock_reason == CODEX_PENDING_REASON
        assert h.log_entries("codex-transcript-softlock-recorded")
        append(transcript, CODEX_MESSAGE)  # still pending: stays soft-locked
        await sleep_polls()
        assert h.runtime.state.sessions[key].soft_lock_reason == CODEX_PENDING_REASON
        append(transcript, CODEX_OUTPUT)
        await sleep_polls()
        assert not h.runtime.state.sessions[key].soft_locked

    run_mock(lambda: with_runtime(Harness(), body))


@pytest.mark.parametrize(("provider", "record", "command"), [
    ("Codex", CODEX_ABORT, "codex-transcript-turn-aborted"),
    ("Claude", {"type": "user", "message": {"content": "[Request interrupted by user]"}},
     "claude-transcript-interrupted"),
    ("GitHubCopilot", {"type": "abort"}, "github-copilot-transcript-abort"),
])
def test_stop_signal_ends_the_session_once_and_later_growth_is_ignored(
        tmp_path: Path, provider: str, record: dict[str, Any], command: str) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("", encoding="utf-8")

    async def body(h: Harness) -> None:
        monitors = component(h)
        await h.start("s1", provider, TranscriptPath=str(transcript))
        append(transcript, record)
        await sleep_polls()
        assert not h.runtime.state.sessions
        stopped = h.log_entries("session-stopped")
        assert [entry["Command"] for entry in stopped] == [command]
        assert stopped[0]["IsProviderSessionEnd"] in (False, None)
        assert not monitors.monitored
        append(transcript, CODEX_MESSAGE)
        await sleep_polls()
        assert len(h.log_entries("session-stopped")) == 1

    run_mock(lambda: with_runtime(Harness(), body))


def test_shrink_takes_a_new_baseline_without_a_signal(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    append(transcript, CODEX_MESSAGE, CODEX_MESSAGE)

    async def body(h: Harness) -> None:
        component(h)
        await h.start("c1", "Codex", TranscriptPath=str(transcript))
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier="c1", SessionStateReason="x")
        transcript.write_text(line(CODEX_MESSAGE), encoding="utf-8")  # shorter
        await sleep_polls()
        assert h.runtime.state.sessions[SessionKey.create(AgentProvider.CODEX, "c1")].soft_locked

    run_mock(lambda: with_runtime(Harness(), body))


def test_stop_and_missing_folder_and_copilot_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    (tmp_path / "copilot" / "session-state" / "abc").mkdir(parents=True)

    async def body(h: Harness) -> None:
        monitors = component(h)
        await h.start("abc", "GitHubCopilot")
        expected = tmp_path / "copilot" / "session-state" / "abc" / "events.jsonl"
        assert monitors.monitored == {SessionKey.create(AgentProvider.GITHUB_COPILOT, "abc"): expected}
        await h.start("c9", "Claude", TranscriptPath=str(tmp_path / "nowhere" / "x.jsonl"))
        await anyio.sleep(0.1)  # the fallback search by session id runs off the gate first
        assert h.log_entries("claude-transcript-monitor-skipped")
        await h.start("m1", "Custom", TranscriptPath=str(tmp_path / "x.jsonl"))
        assert len(monitors.monitored) == 1  # custom/mcp sessions are not monitored
        await h.stop("abc", "GitHubCopilot")
        assert monitors.monitored == {}

    run_mock(lambda: with_runtime(Harness(), body))


# -- real time: watchfiles notices the change long before the poll would ----------------------------------
@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_watchfiles_notices_growth(tmp_path: Path, backend: str) -> None:
    transcript = tmp_path / "rollout.jsonl"
    append(transcript, CODEX_MESSAGE)

    async def body(h: Harness) -> None:
        monitors = next(c for c in h.runtime.components if isinstance(c, TranscriptComponent))
        monitors.poll_seconds = 600.0  # only the watcher can see the change within the bound
        await h.start("c1", "Codex", TranscriptPath=str(transcript))
        key = SessionKey.create(AgentProvider.CODEX, "c1")
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier="c1", SessionStateReason="x")
        await anyio.sleep(0.3)  # the watcher is running
        append(transcript, CODEX_MESSAGE)
        with anyio.fail_after(15):
            while h.runtime.state.sessions[key].soft_locked:
                await anyio.sleep(0.05)

    anyio.run(lambda: with_runtime(Harness(), body), backend=backend)


def _inotify_instances() -> int:
    count = 0
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify"
    return count


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counting inotify instances needs /proc")
@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_every_monitor_shares_one_watcher(tmp_path: Path, backend: str) -> None:
    """Issue 17: one inotify instance per session ran out at 128 (the per-user default); share one."""
    sessions = 20
    transcripts = [tmp_path / f"folder{index}" / "rollout.jsonl" for index in range(sessions)]
    for transcript in transcripts:
        transcript.parent.mkdir()
        append(transcript, CODEX_MESSAGE)
    before = _inotify_instances()

    async def body(h: Harness) -> None:
        monitors = next(c for c in h.runtime.components if isinstance(c, TranscriptComponent))
        monitors.poll_seconds = 600.0  # only the watcher can see the change within the bound
        for index, transcript in enumerate(transcripts):
            await h.start(f"c{index}", "Codex", TranscriptPath=str(transcript))
        await anyio.sleep(1.0)  # every watch that would be opened is open
        assert _inotify_instances() - before <= 1
        for index in range(sessions // 2):  # the watch moves to the remaining folders
            await h.stop(f"c{index}", "Codex")
        last = SessionKey.create(AgentProvider.CODEX, f"c{sessions - 1}")
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier=f"c{sessions - 1}",
                     SessionStateReason="x")
        await anyio.sleep(0.5)
        assert _inotify_instances() - before <= 1
        append(transcripts[-1], CODEX_MESSAGE)
        with anyio.fail_after(15):
            while h.runtime.state.sessions[last].soft_locked:
                await anyio.sleep(0.05)

    anyio.run(lambda: with_runtime(Harness(), body), backend=backend)
