"""The journaled session registry, in-process on trio's MockClock: replay on start, orphans, the
timeout of restored sessions, and every fault the journal file can have (it never costs protection)."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from lidguard_runtime_harness import EPOCH, Harness, WebhookReceiver, run_mock, with_runtime, with_settings

from lidguard.ipc.limits import SESSION_JOURNAL_FILE_NAME
from lidguard.runtime import journal_file
from lidguard.runtime.components import journal as journal_component
from lidguard.runtime.journal_file import session_from_json, session_to_json
from lidguard.runtime.sessions import AgentProvider, Session, SessionKey

DEAD_PID = 2**31 - 2  # no process has it


def _journal(harness: Harness) -> Path:
    return harness.paths.data_dir / SESSION_JOURNAL_FILE_NAME


def _session(name: str, *, pid: int | None = None, minutes_ago: float = 1.0, **changes: Any) -> Session:
    at = EPOCH - timedelta(minutes=minutes_ago)
    return Session(key=SessionKey.create(AgentProvider.CLAUDE, name), started_at=at, last_activity_at=at,
                   watched_process_identifier=pid, working_directory="/work", **changes)


def _put(session: Session) -> str:
    return json.dumps({"v": 1, "op": "put", "session": session_to_json(session)}) + "\n"


def _write(harness: Harness, text: str) -> None:
    path = _journal(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _names(harness: Harness) -> list[str]:
    return sorted(key.session_identifier for key in harness.runtime.state.sessions)


def _records(harness: Harness) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _journal(harness).read_text().splitlines() if line.strip()]


def _folded(harness: Harness) -> list[str]:
    """The sessions the journal describes (puts and dels applied in order)."""
    names: dict[str, None] = {}
    for record in _records(harness):
        if record["op"] == "put":
            names[record["session"]["key"][2]] = None
        elif record["op"] == "del":
            names.pop(record["key"][2], None)
    return sorted(names)


def test_every_change_is_journaled_and_a_clean_exit_empties_the_journal():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("a")
        await h.start("b")
        await h.stop("a")
        await anyio.sleep(1)  # the writer runs as its own task
        assert _folded(h) == ["b"]
        await h.send("mark-session-active", Provider="Claude", SessionIdentifier="b")
        await h.stop("b")
        await anyio.sleep(1)
        assert [r["op"] for r in _records(h)][-2:] == ["put", "del"]  # appended, not rewritten
        assert _folded(h) == []
        assert oct(_journal(h).stat().st_mode & 0o777) == "0o600"

    run_mock(lambda: with_runtime(harness, body))
    assert _journal(harness).read_bytes() == b""


def test_replay_restores_live_and_unwatched_sessions_and_orphans_dead_ones_without_a_webhook():
    receiver = WebhookReceiver()
    harness = Harness(with_settings(PostSessionEndWebhookUrl="http://hooks.test/end"), receiver=receiver)
    alive = _session("alive", pid=os.getpid(), minutes_ago=3, pending_provider_work=True)
    unwatched = _session("unwatched", minutes_ago=2)
    dead = _session("dead", pid=DEAD_PID)
    _write(harness, _put(alive) + _put(unwatched) + _put(dead))

    async def body(h: Harness) -> None:
        assert _names(h) == ["alive", "unwatched"]
        assert h.runtime.state.sessions[alive.key] == alive  # same identity, timestamps and pending work
        assert h.runtime.state.sessions[unwatched.key] == unwatched
        assert h.actions()[:1] == ["protection-applied"]
        assert [e["SessionIdentifier"] for e in h.log_entries("journal-session-orphaned")] == ["dead"]
        assert sorted(e["SessionIdentifier"] for e in h.log_entries("session-restored")) == ["alive", "unwatched"]
        await anyio.sleep(1)
        assert receiver.requests == []  # orphans end without PostSessionEnd
        # Compaction on start: one record per live session, the dead one gone.
        assert sorted(r["session"]["key"][2] for r in _records(h) if r["op"] == "put") == ["alive", "unwatched"]

    run_mock(lambda: with_runtime(harness, body))


def test_a_restored_session_obeys_its_timeout_from_its_journaled_activity():
    harness = Harness()
    _write(harness, _put(_session("quiet", minutes_ago=10)))

    async def body(h: Harness) -> None:
        assert h.actions() == ["protection-applied", "lid-policy-changed"]
        await anyio.sleep(119)  # 10 minutes were already spent: the 12-minute timeout fires in 2
        assert "protection-released" not in h.actions()
        await anyio.sleep(2)
        session = h.runtime.state.sessions[SessionKey.create(AgentProvider.CLAUDE, "quiet")]
        assert session.soft_locked
        assert "protection-released" in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_a_torn_last_line_is_ignored_and_the_journal_is_kept():
    harness = Harness()
    line = _put(_session("whole"))
    _write(harness, line + _put(_session("torn"))[:40])

    async def body(h: Harness) -> None:
        assert _names(h) == ["whole"]
        assert h.log_entries("session-journal-set-aside") == []
        assert not list(h.paths.data_dir.glob("*.bad-*"))

    run_mock(lambda: with_runtime(harness, body))


def _fault(harness: Harness, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _journal(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    good = _put(_session("kept"))
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "corrupt":
        path.write_text(good + "{not json\n" + '{"v":1,"op":"put","session":{"key":7}}\n')
    elif kind == "nan":
        path.write_text(good + '{"v":1,"op":"put","session":NaN}\n')
    elif kind == "deep":
        path.write_text(good + "[" * 100_000 + "\n")
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(journal_file.MAX_JOURNAL_BYTES + 1)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        target = path.with_name("elsewhere.jsonl")
        target.write_text(good)
        path.symlink_to(target)
    elif kind == "unreadable":
        path.write_text(good)
        real_open = os.open

        def refuse(name: Any, flags: int, *args: Any) -> int:
            if os.fspath(name) == os.fspath(path) and not flags & (os.O_WRONLY | os.O_RDWR):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(name))
            return real_open(name, flags, *args)

        monkeypatch.setattr(journal_file.os, "open", refuse)
    else:
        raise AssertionError(kind)


FAULTS = ["empty", "corrupt", "nan", "deep", "huge", "fifo", "directory", "symlink", "unreadable"]


@pytest.mark.parametrize("kind", FAULTS)
def test_a_bad_journal_never_blocks_start_or_protection(kind: str, monkeypatch: pytest.MonkeyPatch):
    harness = Harness()
    _fault(harness, kind, monkeypatch)

    async def body(h: Harness) -> None:
        reply = await h.start("new")
        assert reply["Succeeded"], reply
        assert "protection-applied" in h.actions()
        await anyio.sleep(1)
        if kind in ("corrupt", "nan", "deep"):
            assert "kept" in _names(h)  # what could be read is kept
        if kind != "empty":
            [warning] = h.log_entries("session-journal-set-aside")
            assert not warning["Succeeded"]
            assert list(h.paths.data_dir.glob(f"{SESSION_JOURNAL_FILE_NAME}.bad-*"))
        else:
            assert h.log_entries("session-journal-set-aside") == []
        monkeypatch.undo()
        path = _journal(h)
        assert path.is_file() and not path.is_symlink()  # a fresh journal took its place
        assert "new" in [r["session"]["key"][2] for r in _records(h) if r["op"] == "put"]

    run_mock(lambda: with_runtime(harness, body))


def test_an_oversized_journal_keeps_every_readable_record():
    """Issue 39 item 3: a journal past ``MAX_JOURNAL_BYTES`` (long paths, many appends) was set aside whole,
    dropping every session; now what it holds is read (a damaged line skipped) and then it is set aside."""
    harness = Harness()
    long_folder = "/w/" + "x" * 4000
    first = _put(_session("first"))
    filler = _put(dataclasses.replace(_session("busy"), working_directory=long_folder))
    count = journal_file.MAX_JOURNAL_BYTES // len(filler) + 10
    path = _journal(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        handle.write(first + "{damaged\n")
        for _ in range(count):
            handle.write(filler)
        handle.write(_put(_session("last")) + json.dumps({"v": 1, "op": "del", "key": ["Claude", "", "first"]}) + "\n")
    assert path.stat().st_size > journal_file.MAX_JOURNAL_BYTES

    async def body(h: Harness) -> None:
        assert _names(h) == ["busy", "last"]
        [session] = [s for s in h.runtime.state.sessions.values() if s.key.session_identifier == "busy"]
        assert session.working_directory == long_folder
        [warning] = h.log_entries("session-journal-set-aside")
        assert not warning["Succeeded"]
        assert list(h.paths.data_dir.glob(f"{SESSION_JOURNAL_FILE_NAME}.bad-*"))
        await anyio.sleep(1)
        assert _folded(h) == ["busy", "last"]  # the new journal holds them

    run_mock(lambda: with_runtime(harness, body))


def test_long_records_are_compacted_by_size_too(monkeypatch: pytest.MonkeyPatch):
    """Issue 39 item 3: compaction counted lines only, so sessions with long paths grew the journal to many
    MiB (4 KiB records x ~2,000 lines) before a compaction; it now also follows the bytes appended."""
    harness = Harness()
    folder = "/w/" + "x" * 4000
    sizes: list[int] = []

    async def body(h: Harness) -> None:
        await h.start("long", WorkingDirectory=folder)
        for _ in range(1200):
            await anyio.sleep(0.01)
            await h.send("mark-session-active", Provider="Claude", SessionIdentifier="long")
            sizes.append(_journal(h).stat().st_size)
        assert _folded(h) == ["long"]

    run_mock(lambda: with_runtime(harness, body))
    # bounded by the byte trigger: 1 MiB + twice the snapshot + the batch that crossed it (each ~4.2 KiB)
    assert max(sizes) <= journal_component.COMPACT_AFTER_BYTES + 6 * 5000, max(sizes)


def test_a_symlinked_journal_is_never_written_through():
    harness = Harness()
    path = _journal(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = path.with_name("victim.txt")
    target.write_text("precious\n")

    async def body(h: Harness) -> None:
        path.symlink_to(target)  # planted after the start's compaction
        await h.start("s1")
        await anyio.sleep(1)
        assert target.read_text() == "precious\n"
        assert h.runtime.state.sessions  # still protected
        assert "protection-applied" in h.actions()

    run_mock(lambda: with_runtime(harness, body))


def test_a_full_disk_degrades_the_journal_once_and_it_recovers(monkeypatch: pytest.MonkeyPatch):
    harness = Harness()
    full = {"on": True}
    calls: list[str] = []

    def failing(real: Any) -> Any:
        def write(path: Path, data: bytes) -> None:
            calls.append(real.__name__)
            if full["on"]:
                raise OSError(errno.ENOSPC, "No space left on device")
            real(path, data)
        return write

    monkeypatch.setattr(journal_component, "append_to_journal", failing(journal_file.append_to_journal))
    monkeypatch.setattr(journal_component, "write_snapshot", failing(journal_file.write_snapshot))

    async def body(h: Harness) -> None:
        for name in ("a", "b", "c"):
            assert (await h.start(name))["Succeeded"]
            await anyio.sleep(1)
        assert h.actions()[:1] == ["protection-applied"]
        assert len(h.log_entries("session-journal-degraded")) == 1  # reported once
        assert h.runtime.journal.degraded and h.runtime.journal.failures >= 3
        full["on"] = False
        await h.start("d")
        await anyio.sleep(1)
        assert h.runtime.journal.degraded is None
        assert h.log_entries("session-journal-recovered")
        # After the failures the next write is a whole snapshot: nothing the full disk dropped is missing.
        assert sorted(r["session"]["key"][2] for r in _records(h) if r["op"] == "put") == ["a", "b", "c", "d"]

    run_mock(lambda: with_runtime(harness, body))


def test_writes_are_batched_not_one_per_request(monkeypatch: pytest.MonkeyPatch):
    harness = Harness()
    writes: list[int] = []
    real = journal_file.append_to_journal

    def counting(path: Path, data: bytes) -> None:
        writes.append(data.count(b"\n"))
        real(path, data)

    monkeypatch.setattr(journal_component, "append_to_journal", counting)

    async def body(h: Harness) -> None:
        await h.start("s1")
        await anyio.sleep(1)
        writes.clear()
        async with anyio.create_task_group() as group:
            for _ in range(50):
                group.start_soon(lambda: h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1"))
        await anyio.sleep(1)
        # one batch, and in it one record for s1's latest state (not one per request)
        assert writes == [1], writes
        [record] = [json.loads(line) for line in h.runtime.journal.path.read_bytes().splitlines()][-1:]
        assert record["op"] == "put"
        assert session_from_json(record["session"]) == h.runtime.state.sessions[next(iter(h.runtime.state.sessions))]

    run_mock(lambda: with_runtime(harness, body))


def test_a_session_that_comes_and_goes_within_one_batch_writes_nothing_and_one_on_file_gets_its_del():
    """Requests that arrive while a batch is being written share the next one (group commit)."""
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("kept")
        await anyio.sleep(1)
        before = _records(h)
        replies: list[dict[str, Any]] = []

        async def send(command: str) -> None:
            replies.append(await h.send(command, Provider="Claude", SessionIdentifier="brief"))

        async with anyio.create_task_group() as group:
            await h.runtime.journal._writing.acquire()  # a write in flight: the replies wait for the next
            for command in ("start", "mark-session-active", "stop"):
                group.start_soon(send, command)
                await anyio.sleep(0.01)
            assert replies == []  # no reply before its change is written
            assert _records(h) == before
            h.runtime.journal._writing.release()
        assert [reply["Succeeded"] for reply in replies] == [True, True, True]
        assert _records(h) == before  # never on file: neither its put nor its del is written
        await h.stop("kept")
        await anyio.sleep(1)
        assert [r["op"] for r in _records(h)][len(before):] == ["del"]
        assert _folded(h) == []

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("seed", range(12))
def test_whatever_the_batches_hold_the_journal_folds_to_the_registry(seed: int, monkeypatch: pytest.MonkeyPatch):
    """Random starts, activity and stops of a few sessions, with the batch written at random moments (and a
    compaction, a directory in the journal's place or a full disk now and then): after every write that
    succeeds the file describes exactly the registry, state for state."""
    import random

    rng = random.Random(seed)
    harness = Harness()

    async def body(h: Harness) -> None:
        journal = h.runtime.journal
        for _ in range(60):
            name = f"s{rng.randrange(4)}"
            action = rng.random()
            if action < 0.35:
                await h.start(name)
            elif action < 0.7:
                await h.send("mark-session-active", Provider="Claude", SessionIdentifier=name,
                             SessionStateReason=f"PreToolUse:{rng.randrange(100)}")
            else:
                await h.stop(name)
            if rng.random() < 0.3:
                fault = rng.random()
                if fault < 0.1:
                    journal._compact = True
                elif fault < 0.2:  # a directory in the journal's place: set aside, a snapshot written instead
                    path = _journal(h)
                    path.unlink(missing_ok=True)
                    path.mkdir()
                    await h.start(f"after-{rng.randrange(1000)}")  # something to write, so the write finds it
                elif fault < 0.3:  # a full disk for one write: degraded, the next write is a snapshot
                    failing = rng.random() < 0.5
                    monkeypatch.setattr(journal_component, "append_to_journal" if failing else "write_snapshot",
                                        _full_disk)
                    await journal.flush()
                    monkeypatch.undo()
                await journal.flush()
                sessions, _, _ = journal._fold(_records(h))
                assert sessions == dict(h.runtime.state.sessions)

    run_mock(lambda: with_runtime(harness, body))


def _full_disk(path: Path, data: bytes) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_the_journal_module_never_fsyncs():
    source = Path(journal_file.__file__).read_text() + Path(journal_component.__file__).read_text()
    assert "fsync" not in source.replace("no fsync", "").replace("without fsync", "")


# -- the pending suspend (issue 17) ------------------------------------------------------------------
async def _crash_after(harness: Harness, body: Any) -> None:
    """Runs ``body`` and then stops the runtime the way a crash does (no shutdown, journal as it is)."""
    async with anyio.create_task_group() as group:
        await harness.runtime.run(group)
        await body(harness)
        group.cancel_scope.cancel()


def test_a_runtime_restarted_during_the_post_stop_delay_suspends_once():
    from lidguard_runtime_harness import closed_lid_machine

    first = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())

    async def stop_then_crash(h: Harness) -> None:
        await h.start("s1")
        await h.stop("s1")
        assert h.runtime.suspend.pending is not None
        await anyio.sleep(5)  # in the delay

    run_mock(lambda: _crash_after(first, stop_then_crash))
    assert "suspend-requested" not in first.actions()
    second = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        assert h.runtime.suspend.pending is not None
        assert h.log_entries("pending-suspend-restored")
        assert h.actions()[:1] == ["protection-applied"]  # kept awake through the delay again
        await anyio.sleep(11)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(second, body))


def test_a_kill_right_after_the_suspend_request_never_suspends_again_after_restart():
    """Issue 39 item 13: the journal says the suspend was requested before the platform is asked, so
    a runtime killed right after the request (the journal as it was at that moment) does not suspend
    the machine a second time when it starts again."""
    from lidguard_runtime_harness import closed_lid_machine

    first = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())
    at_request: list[bytes] = []
    suspend = first.platform.suspend.suspend

    def suspend_and_note_the_journal(mode: Any) -> Any:
        at_request.append(_journal(first).read_bytes())  # what a kill -9 right now leaves on disk
        return suspend(mode)

    first.platform.suspend.suspend = suspend_and_note_the_journal

    async def stop_then_suspend(h: Harness) -> None:
        await h.start("s1")
        await h.stop("s1")
        await anyio.sleep(11)

    run_mock(lambda: _crash_after(first, stop_then_suspend))
    assert first.actions().count("suspend-requested") == 1 and len(at_request) == 1
    second = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())
    _write(second, at_request[0].decode())

    async def body(h: Harness) -> None:
        assert h.runtime.suspend.pending is None
        assert h.log_entries("pending-suspend-already-requested")
        await anyio.sleep(30)
        assert "suspend-requested" not in h.actions()

    run_mock(lambda: with_runtime(second, body))


def test_a_restored_active_session_drops_the_journaled_pending_suspend():
    from lidguard_runtime_harness import closed_lid_machine

    first = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())

    async def stop_then_crash(h: Harness) -> None:
        await h.start("s1")
        await h.stop("s1")
        await anyio.sleep(1)
        _write(h, _journal(h).read_text() + _put(_session("busy", pid=os.getpid())))

    run_mock(lambda: _crash_after(first, stop_then_crash))
    second = Harness(with_settings(PostStopSuspendDelaySeconds=10), machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        assert h.runtime.suspend.pending is None
        assert h.log_entries("pending-suspend-dropped")
        await anyio.sleep(30)
        assert "suspend-requested" not in h.actions()

    run_mock(lambda: with_runtime(second, body))


def test_cancelling_at_every_step_of_the_replay_leaves_nothing_applied_and_the_journal_readable(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    import trio
    from lidguard_runtime_harness import assert_nothing_left_applied, closed_lid_machine

    from lidguard.runtime.journal_file import read_journal

    class CancelAt(trio.abc.Instrument):
        def __init__(self, target: int | None) -> None:
            self.target, self.steps, self.scope, self.fired = target, 0, None, False

        def after_task_step(self, task: Any) -> None:
            if self.scope is None:
                return
            self.steps += 1
            if self.steps == self.target and not self.fired:
                self.fired = True
                self.scope.cancel()

    def attempt(target: int | None) -> tuple[Harness, CancelAt]:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / f"at-{target}"))
        harness = Harness(machine=closed_lid_machine())
        _write(harness, _put(_session("alive", pid=os.getpid())) + _put(_session("dead", pid=DEAD_PID)))
        instrument = CancelAt(target)

        async def scenario() -> None:
            with anyio.CancelScope() as outer:
                instrument.scope = outer
                try:
                    async with anyio.create_task_group() as group:
                        await harness.runtime.run(group)
                        await harness.start("new")
                        await anyio.sleep(1)
                        instrument.scope = None
                        group.cancel_scope.cancel()
                finally:
                    await harness.runtime.shutdown()

        run_mock(scenario, instruments=[instrument])
        return harness, instrument

    complete, counted = attempt(None)
    assert complete.log_entries("session-restored")
    for target in range(1, counted.steps + 1):
        harness, instrument = attempt(target)
        if not instrument.fired:
            break
        assert_nothing_left_applied(harness)
        read = read_journal(_journal(harness))
        assert read.problem is None, (target, read.problem)


def test_the_journal_is_compacted_when_it_grows_past_its_bound(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(journal_component, "COMPACT_AFTER_LINES", 20)
    harness = Harness(with_settings(SessionTimeoutMinutes=None))

    async def body(h: Harness) -> None:
        await h.start("s1")
        await h.start("s2")
        for _ in range(200):
            await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1")
            await anyio.sleep(0.1)
        lines = _journal(h).read_text().count("\n")
        assert lines <= 20 + 2 * 2 + 2, lines
        assert _folded(h) == ["s1", "s2"]

    run_mock(lambda: with_runtime(harness, body))


def test_a_clock_stepped_back_while_no_runtime_ran_never_makes_the_replayed_turns_stop_stale():
    """Issue 32.7 across a restart: the runtime's monotonic look cannot span a step made while it was down
    (it crashed; NTP stepped the clock five minutes back before the next hook started it again). The
    replayed turn then starts "in the future" and the agent's Stop, sent now, looked older than it."""
    harness = Harness(with_settings(SessionTimeoutMinutes=None))
    ahead = _session("s1", turn_started_at=EPOCH + timedelta(minutes=5), turn_id="")
    _write(harness, _put(ahead))

    async def body(h: Harness) -> None:
        assert _names(h) == ["s1"]
        [stepped] = h.log_entries("clock-stepped-back")
        assert "while no runtime ran" in stepped["Message"]
        sent = int(h.clock.now().timestamp() * 1000)
        reply = await h.stop(SentAtUnixMilliseconds=sent)
        assert "older" not in reply["Message"] and _names(h) == []
        assert h.log_entries("session-stale-turn-event-ignored") == []

    run_mock(lambda: with_runtime(harness, body))


def test_a_replayed_turn_that_started_before_now_is_left_as_it_was():
    harness = Harness(with_settings(SessionTimeoutMinutes=None))
    past = _session("s1", turn_started_at=EPOCH - timedelta(seconds=30), turn_id="")
    _write(harness, _put(past))

    async def body(h: Harness) -> None:
        assert h.runtime.state.sessions[past.key].turn_started_at == past.turn_started_at
        assert h.log_entries("clock-stepped-back") == []
        late = await h.stop(SentAtUnixMilliseconds=int((EPOCH - timedelta(seconds=40)).timestamp() * 1000))
        assert "older" in late["Message"], "an event sent before the turn began is still told apart"

    run_mock(lambda: with_runtime(harness, body))


def test_a_journaled_turn_start_in_year_9999_never_costs_the_other_sessions_their_protection():
    """The journal is a boundary: a record written under a wildly wrong clock (or edited) must not turn the
    step-back correction into an overflow that ends the runtime before it protects anyone."""
    harness = Harness(with_settings(SessionTimeoutMinutes=None))
    wild = _session("wild", turn_started_at=EPOCH.replace(year=9999), turn_id="")
    normal = _session("normal", turn_started_at=EPOCH - timedelta(minutes=1), turn_id="")
    _write(harness, _put(wild) + _put(normal))

    async def body(h: Harness) -> None:
        assert sorted(_names(h)) == ["normal", "wild"]
        assert h.actions()[:1] == ["protection-applied"]
        assert h.runtime.state.sessions[wild.key].turn_started_at <= h.clock.now()
        assert h.runtime.state.sessions[normal.key].turn_started_at == normal.turn_started_at
        reply = await h.stop("wild", SentAtUnixMilliseconds=int(h.clock.now().timestamp() * 1000))
        assert "older" not in reply["Message"] and sorted(_names(h)) == ["normal"]

    run_mock(lambda: with_runtime(harness, body))
