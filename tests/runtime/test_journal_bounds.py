"""Issue 39 item 3 (the rest): the session journal's records are bounded, so the file stays proportional to
the live sessions and far below the 32 MiB set-aside bound whatever the sessions carry.

1,000 sessions (the registry's bound) with 4,096-character non-ASCII working directories and transcript
paths, each touched a few times: the journal stays within ``JOURNAL_BUDGET_BYTES`` (before: ~130 MB,
records ``\\u``-escaped at 6 bytes a character), every line within ``MAX_SESSION_RECORD_BYTES``, and after a
crash every session comes back (no set-aside), its folder cut at 4,096 bytes, its unopenable transcript
path left out and found again by session id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from lidguard_runtime_harness import Harness, run_mock

from lidguard.ipc.limits import SESSION_JOURNAL_FILE_NAME
from lidguard.runtime import journal_file
from lidguard.runtime.bounds import MAX_SESSIONS
from lidguard.runtime.components.transcripts import TranscriptComponent
from lidguard.runtime.sessions import AgentProvider, Session, SessionKey

FOLDER = "/" + "é" * 4095  # 4,096 characters, 8,191 bytes
TRANSCRIPT = "/" + "ж" * 4090 + ".json"  # 4,096 characters, 8,186 bytes: no open() takes it


def _journal(harness: Harness) -> Path:
    return harness.paths.data_dir / SESSION_JOURNAL_FILE_NAME


async def _crash_after(harness: Harness, body: Any) -> None:
    async with anyio.create_task_group() as group:
        await harness.runtime.run(group)
        await body(harness)
        group.cancel_scope.cancel()


def test_a_thousand_sessions_with_long_non_ascii_paths_stay_within_the_budget_and_all_come_back():
    # Gemini: no transcript monitor (whose look at every session with a missing folder on every change is a
    # cost of its own); the journal records the same fields for every provider.
    first = Harness()
    sizes: list[int] = []

    async def fill(h: Harness) -> None:
        for index in range(MAX_SESSIONS):
            reply = await h.start(f"s{index}", "Gemini", WorkingDirectory=FOLDER, TranscriptPath=TRANSCRIPT)
            assert reply["Succeeded"], reply
            if index % 50 == 0:
                sizes.append(_journal(h).stat().st_size)
        for _ in range(3):
            for index in range(MAX_SESSIONS):
                await h.send("mark-session-active", Provider="Gemini", SessionIdentifier=f"s{index}")
                if index % 50 == 0:
                    sizes.append(_journal(h).stat().st_size)
        await anyio.sleep(1)
        sizes.append(_journal(h).stat().st_size)

    run_mock(lambda: _crash_after(first, fill))
    print(f"journal: largest {max(sizes) / 1e6:.1f} MB, last {sizes[-1] / 1e6:.1f} MB")
    assert max(sizes) <= journal_file.JOURNAL_BUDGET_BYTES < journal_file.MAX_JOURNAL_BYTES
    lines = _journal(first).read_bytes().split(b"\n")
    assert max(len(line) + 1 for line in lines) <= journal_file.MAX_SESSION_RECORD_BYTES
    assert b"\\u00e9" not in lines[0] and FOLDER[:100].encode() in lines[0]  # UTF-8, not escaped

    second = Harness()

    async def back(h: Harness) -> None:
        assert h.log_entries("session-journal-set-aside") == []
        sessions = h.runtime.state.sessions
        assert len(sessions) == MAX_SESSIONS
        session = sessions[SessionKey.create(AgentProvider.GEMINI, "s7")]
        assert session.working_directory == "/" + "é" * 2047  # cut at 4,096 bytes, at a character boundary
        assert session.transcript_path == ""  # not journaled: the runtime searches by session id

    run_mock(lambda: _crash_after(second, back))


def test_a_session_record_is_bounded_whatever_it_carries():
    at = journal_file.datetime(2026, 12, 3, tzinfo=journal_file.timezone.utc)
    session = Session(key=SessionKey.create(AgentProvider.CLAUDE, "\U0001f600" * 512, "\U0001f600" * 128),
                      started_at=at, last_activity_at=at, soft_lock_reason="\U0001f600" * 512, soft_locked_at=at,
                      working_directory="\U0001f600" * 4096, transcript_path="/t/" + "\U0001f600" * 4000,
                      turn_id="\U0001f600" * 256, tools_in_flight=tuple(f"{i}" + "\U0001f600" * 255 for i in range(64)))
    line = journal_file.session_line(session)
    assert len(line) <= journal_file.MAX_SESSION_RECORD_BYTES
    record = json.loads(line)["session"]
    back = journal_file.session_from_json(record)
    assert back.key == session.key and back.soft_lock_reason == session.soft_lock_reason
    assert back.tools_in_flight == session.tools_in_flight[-len(back.tools_in_flight):]  # the newest kept
    assert back.transcript_path == "" and len(back.working_directory.encode()) <= journal_file.MAX_JOURNAL_PATH_BYTES


def test_a_transcript_path_left_out_of_the_journal_is_found_again_by_session_id():
    home = Path.home()
    transcript = home / ".claude" / "projects" / "p" / "found-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("{}\n")
    first = Harness()

    async def start(h: Harness) -> None:
        await h.start("found-1", WorkingDirectory="/w", TranscriptPath=TRANSCRIPT)
        await anyio.sleep(1)

    run_mock(lambda: _crash_after(first, start))
    second = Harness()

    async def back(h: Harness) -> None:
        await anyio.sleep(1)
        assert h.log_entries("session-journal-set-aside") == []
        [transcripts] = [c for c in h.runtime.components if isinstance(c, TranscriptComponent)]
        assert transcripts.monitored == {SessionKey.create(AgentProvider.CLAUDE, "found-1"): transcript}

    run_mock(lambda: _crash_after(second, back))
