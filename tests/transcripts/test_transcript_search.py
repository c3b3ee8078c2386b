"""Transcript fallback search (REFERENCE 6): a Codex or Claude session whose hook gave no transcript path
(or a stale one) is found under ~/.codex/sessions or ~/.claude/projects by its session id - bounded,
newest first, unique match only - and then monitored like any other."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from lidguard_runtime_harness import Harness, run_mock, with_runtime  # noqa: E402

from lidguard.providers import AgentProvider  # noqa: E402
from lidguard.runtime.components.transcripts import TranscriptComponent  # noqa: E402
from lidguard.runtime.sessions import SessionKey  # noqa: E402
from lidguard.runtime.transcript_search import find_transcript, search_root  # noqa: E402

CODEX_ID = "019a1b2c-3d4e-7f80-9abc-def012345678"
CLAUDE_ID = "5f1d2c3b-aaaa-4bbb-8ccc-0123456789ab"
MESSAGE = {"type": "event_msg", "payload": {"type": "agent_message", "message": "working"}}


def _write(path: Path, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(MESSAGE) + "\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def _rollout(root: Path, day: str, session_id: str, mtime: float | None = None) -> Path:
    return _write(root / "sessions" / day / f"rollout-{day.replace('/', '-')}T10-00-00-{session_id}.jsonl", mtime)


def test_finds_the_unique_file_naming_the_session_case_insensitively(tmp_path):
    _rollout(tmp_path, "2026/01/01", "019a0000-0000-7000-8000-000000000000")
    wanted = _rollout(tmp_path, "2026/01/02", CODEX_ID)
    _write(tmp_path / "sessions" / "2026" / "01" / "02" / f"{CODEX_ID}.txt")  # not a .jsonl
    result = find_transcript(tmp_path / "sessions", CODEX_ID.upper())
    assert result.path == wanted
    duplicate = _rollout(tmp_path, "2026/01/03", CODEX_ID)
    result = find_transcript(tmp_path / "sessions", CODEX_ID)
    assert result.path is None and "2 transcripts" in result.message
    duplicate.unlink()


@pytest.mark.parametrize("session_id", ["", ".", "..", "a/b", "..\\x", "x\0y", "\ud800abc", "x" * 201])
def test_ids_that_cannot_name_a_file_are_never_searched(tmp_path, session_id):
    _rollout(tmp_path, "2026/01/02", CODEX_ID)
    result = find_transcript(tmp_path / "sessions", session_id)
    assert result.path is None and result.examined == 0


def test_newest_first_within_the_entry_budget(tmp_path):
    old = time.time() - 100_000
    for index in range(50):
        _rollout(tmp_path, f"2025/{index % 12 + 1:02d}/{index % 28 + 1:02d}", f"old-{index:04d}", old + index)
    for folder, _, _ in os.walk(tmp_path / "sessions" / "2025"):
        os.utime(folder, (old, old))
    wanted = _rollout(tmp_path, "2026/02/01", CODEX_ID, old + 10_000)
    for folder in (tmp_path / "sessions" / "2026" / "02" / "01", tmp_path / "sessions" / "2026" / "02",
                   tmp_path / "sessions" / "2026"):
        os.utime(folder, (old + 10_000, old + 10_000))
    result = find_transcript(tmp_path / "sessions", CODEX_ID, max_entries=6)
    assert result.path == wanted and result.examined <= 6
    result = find_transcript(tmp_path / "sessions", "old-0000", max_entries=6)
    assert result.path is None and "budget ran out" in result.message


def test_the_time_budget_and_depth_bound_stop_the_walk(tmp_path):
    _rollout(tmp_path, "2026/01/02", CODEX_ID)
    ticks = iter(range(1000))
    result = find_transcript(tmp_path / "sessions", CODEX_ID, max_seconds=2, clock=lambda: float(next(ticks)))
    assert result.path is None and "budget ran out" in result.message
    assert find_transcript(tmp_path / "sessions", CODEX_ID, max_depth=3).path is None
    assert find_transcript(tmp_path / "sessions", CODEX_ID, max_depth=4).path is not None


def test_symlinks_fifos_and_missing_roots_are_not_followed(tmp_path):
    outside = _rollout(tmp_path / "outside", "2026/01/02", CODEX_ID)
    (tmp_path / "sessions").mkdir()
    os.symlink(outside.parent, tmp_path / "sessions" / "linked")
    os.symlink(outside, tmp_path / "sessions" / f"{CLAUDE_ID}.jsonl")
    os.mkfifo(tmp_path / "sessions" / f"fifo-{CODEX_ID}.jsonl")
    assert find_transcript(tmp_path / "sessions", CODEX_ID).path is None
    assert find_transcript(tmp_path / "sessions", CLAUDE_ID).path is None
    assert "does not exist" in find_transcript(tmp_path / "absent", CODEX_ID).message


def test_roots_follow_codex_home_and_claude_config_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "relative/ignored")
    assert search_root(AgentProvider.CODEX) == tmp_path / "cx" / "sessions"
    assert search_root(AgentProvider.CLAUDE) == Path(os.path.expanduser("~")) / ".claude" / "projects"
    assert search_root(AgentProvider.GITHUB_COPILOT) is None


def test_the_searched_providers_are_exactly_those_with_a_search_root():
    from lidguard.runtime.transcript_search import SEARCHED_PROVIDERS

    assert {provider for provider in AgentProvider if search_root(provider) is not None} == SEARCHED_PROVIDERS


def _component(h: Harness) -> TranscriptComponent:
    found = next(c for c in h.runtime.components if isinstance(c, TranscriptComponent))
    found.use_watchfiles = False
    return found


def test_sessions_without_or_with_a_stale_path_are_found_and_monitored(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    rollout = _rollout(tmp_path / "codex", "2026/01/02", CODEX_ID)
    transcript = _write(tmp_path / "claude" / "projects" / "-work-project" / f"{CLAUDE_ID}.jsonl")

    async def body(h: Harness) -> None:
        monitors = _component(h)
        await h.start(CODEX_ID, "Codex")
        await h.start(CLAUDE_ID, "Claude", TranscriptPath=str(tmp_path / "moved" / f"{CLAUDE_ID}.jsonl"))
        await h.start("unknown-id-0000", "Codex")
        import anyio

        await anyio.sleep(0.1)
        assert monitors.monitored == {SessionKey.create(AgentProvider.CODEX, CODEX_ID): rollout,
                                      SessionKey.create(AgentProvider.CLAUDE, CLAUDE_ID): transcript}
        [found] = h.log_entries("claude-transcript-found")
        assert "moved" in found["Message"]
        [skipped] = h.log_entries("codex-transcript-monitor-skipped")
        assert "no transcript under" in skipped["Message"]
        key = SessionKey.create(AgentProvider.CODEX, CODEX_ID)
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier=CODEX_ID,
                     SessionStateReason="permission_prompt")
        await anyio.sleep(2.1)
        assert h.runtime.state.sessions[key].soft_locked
        with rollout.open("a") as file:
            file.write(json.dumps(MESSAGE) + "\n")
        await anyio.sleep(2.1)
        assert not h.runtime.state.sessions[key].soft_locked  # the found transcript's growth is activity
        messages = [entry["Message"] for entry in h.log_entries("session-activity-recorded")]
        assert any("codex_transcript_activity_detected" in message for message in messages)
        await h.stop(CODEX_ID, "Codex")
        assert SessionKey.create(AgentProvider.CODEX, CODEX_ID) not in monitors.monitored

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_state_change_looks_only_at_the_sessions_that_changed(tmp_path, monkeypatch):
    """Each event used to walk every session (at 100 sessions most of the runtime's work per hook event);
    a session whose search result is known and whose object did not change is not looked at again,
    and one that changes is, with its monitor still following it."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    rollout = _rollout(tmp_path / "codex", "2026/01/02", CODEX_ID)
    looked: list[SessionKey] = []
    original = TranscriptComponent._path_of

    def counting(self: TranscriptComponent, session):  # type: ignore[no-untyped-def]
        looked.append(session.key)
        return original(self, session)

    monkeypatch.setattr(TranscriptComponent, "_path_of", counting)

    async def body(h: Harness) -> None:
        import anyio

        monitors = _component(h)
        await h.start(CODEX_ID, "Codex")
        for index in range(20):
            await h.start(f"absent-{index:04d}", "Claude")
        await anyio.sleep(0.1)  # the searches ran: one found, twenty found nothing
        key = SessionKey.create(AgentProvider.CODEX, CODEX_ID)
        assert monitors.monitored == {key: rollout}
        looked.clear()
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="absent-0003")
        assert looked == [SessionKey.create(AgentProvider.CLAUDE, "absent-0003")]
        looked.clear()
        await h.send("mark-session-softlocked", Provider="Codex", SessionIdentifier=CODEX_ID,
                     SessionStateReason="permission_prompt")
        assert looked == [key] and monitors.monitored == {key: rollout}
        await anyio.sleep(2.1)
        assert h.runtime.state.sessions[key].soft_locked
        with rollout.open("a") as file:
            file.write(json.dumps(MESSAGE) + "\n")
        await anyio.sleep(2.1)
        assert not h.runtime.state.sessions[key].soft_locked  # still monitored after being skipped
        await h.stop(CODEX_ID, "Codex")
        assert monitors.monitored == {}
        looked.clear()
        await h.stop("absent-0003", "Claude")
        assert looked == []

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_session_whose_transcript_folder_appears_later_is_still_picked_up_on_any_change(tmp_path, monkeypatch):
    """Sessions with a transcript path are never skipped: its folder can come or go without the session
    changing, and the next event of any session notices it (as it always did)."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    later = tmp_path / "later" / f"{CLAUDE_ID}.jsonl"

    async def body(h: Harness) -> None:
        import anyio

        monitors = _component(h)
        await h.start(CLAUDE_ID, "Claude", TranscriptPath=str(later))
        for index in range(5):
            await h.start(f"other-{index}", "Claude")
        await anyio.sleep(0.1)
        assert monitors.monitored == {}
        _write(later)
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="other-2")
        assert monitors.monitored == {SessionKey.create(AgentProvider.CLAUDE, CLAUDE_ID): later}
        import shutil

        shutil.rmtree(later.parent)
        await h.stop("other-3")
        assert monitors.monitored == {}

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_crowd_of_starts_is_searched_by_one_task_and_an_ended_session_not_at_all(tmp_path, monkeypatch):
    """Each search used to be a task of its own: a crowd of starts without a transcript path (a burst of
    hooks) paid a task each. One task works through the queue and then waits for more (a later start costs
    no task either); a session that ended while it waited is not searched."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    spawned: list[str] = []
    searched: list[str] = []
    ended: set[str] = set()
    after_end: list[str] = []

    def searching(root, session_id):  # type: ignore[no-untyped-def]
        searched.append(session_id)
        if session_id in ended:
            after_end.append(session_id)
        return find_transcript(root, session_id)

    monkeypatch.setattr("lidguard.runtime.components.transcripts.find_transcript", searching)

    async def body(h: Harness) -> None:
        import anyio

        original = h.runtime.spawn

        def counting(function):  # type: ignore[no-untyped-def]
            spawned.append(getattr(function, "__name__", ""))
            return original(function)

        h.runtime.spawn = counting  # type: ignore[method-assign]
        for index in range(30):
            await h.start(f"crowd-{index:02d}")
        ended.add("crowd-07")
        await h.stop("crowd-07")
        await anyio.sleep(0.1)
        assert spawned.count("_run_searches") == 1, spawned
        # A reply now waits for its journal write (issue 39), so the search task may run between two starts
        # and search crowd-07 while it still ran; once it ended, never.
        others = [f"crowd-{index:02d}" for index in range(30) if index != 7]
        assert sorted(name for name in searched if name != "crowd-07") == others and searched.count("crowd-07") <= 1
        assert after_end == []
        skipped = len(h.log_entries("claude-transcript-monitor-skipped"))
        assert skipped == len(searched)
        await h.start("late")
        await anyio.sleep(0.1)
        assert spawned.count("_run_searches") == 1 and searched[-1] == "late"  # the task waited for more
        assert len(h.log_entries("claude-transcript-monitor-skipped")) == skipped + 1

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_search_that_fails_is_recorded_and_the_others_in_the_queue_still_run(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    searched: list[str] = []

    def searching(root, session_id):  # type: ignore[no-untyped-def]
        searched.append(session_id)
        if session_id == "broken":
            raise RuntimeError("a search bug")
        return find_transcript(root, session_id)

    monkeypatch.setattr("lidguard.runtime.components.transcripts.find_transcript", searching)

    async def body(h: Harness) -> None:
        import anyio

        for name in ("first", "broken", "after"):
            await h.start(name)
        await anyio.sleep(0.1)
        assert searched == ["first", "broken", "after"]
        skipped = [entry["SessionIdentifier"] for entry in h.log_entries("claude-transcript-monitor-skipped")]
        assert skipped == ["first", "after"]
        assert "transcript-search-failed" in h.runtime.exception_log.path.read_text()

    run_mock(lambda: with_runtime(Harness(), body))
