"""Pre-existing Codex tasks (seed 004, REFERENCE row 57): the rollout reader on files in the format the
pinned Codex CLI writes (0.171: ``ordinal``, ``turn_attribution``; the real CLI's own files are read in
tests/agents/test_agent_codex_rollout.py), and the component on trio's MockClock with the rescan alone."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime"))

from lidguard_runtime_harness import EPOCH, Harness, WebhookReceiver, run_mock, with_runtime  # noqa: E402
from lidguard_runtime_harness import with_settings as settings_with  # noqa: E402

from lidguard.providers import AgentProvider  # noqa: E402
from lidguard.runtime.components import codex_rollouts  # noqa: E402
from lidguard.runtime.components.codex_rollouts import (  # noqa: E402
    GRACE_SECONDS,
    RESCAN_SECONDS,
    CodexRolloutComponent,
    rollout_session_id,
    running_task,
)
from lidguard.runtime.sessions import Session, SessionKey  # noqa: E402

SID = "01a2328a-ec87-7282-926a-ab41fa4f9bf7"
TURN = "01a2328a-ec96-7260-a37d-96196a3ac05d"
TURN2 = "01a2328a-ffff-7260-a37d-96196a3ac05d"
KEY = SessionKey.create(AgentProvider.CODEX, SID)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def started(turn: str = TURN, at: datetime = EPOCH - timedelta(hours=1)) -> str:
    return (f'{{"timestamp":"{stamp(at)}","ordinal":1,"type":"event_msg","payload":{{"type":"task_started",'
            f'"turn_attribution":{{"turn_id":"{turn}","turn_trigger":"exec","parent_turn_id":null,'
            f'"initiating_agent_path":null,"root_turn_id":"{turn}"}},"model_context_window":258400}}}}\n')


def complete(turn: str = TURN, message: str = "All done: hello") -> str:
    return (f'{{"timestamp":"{stamp(EPOCH)}","ordinal":18,"type":"event_msg","payload":{{"type":"task_complete",'
            f'"root_turn_id":"{turn}","turn_id":"{turn}","last_agent_message":{json.dumps(message)}}}}}\n')


def user_message(text: str) -> str:
    return json.dumps({"timestamp": stamp(EPOCH), "ordinal": 7, "type": "response_item",
                       "payload": {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]}},
                      separators=(",", ":")) + "\n"


CONTEXT = '{"timestamp":"2026-11-30T12:00:00.000Z","ordinal":31,"type":"turn_context","payload":{}}\n'
META = '{"timestamp":"2026-11-30T11:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"id":"x"}}\n'


def rollout(root: Path, text: str, session: str = SID, day: str = "2026/11/30") -> Path:
    folder = root / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-11-30T11-00-00-{session}.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
    return path


# -- the reader ----------------------------------------------------------------------------------------
def test_the_session_id_comes_from_the_rollout_file_name() -> None:
    assert rollout_session_id(f"rollout-2026-12-01T16-58-15-{SID}.jsonl") == SID
    for name in (f"{SID}.jsonl", f"rollout-2026-12-01T16-58-15-{SID}.json", "rollout-2026-12-01T16-58-15-a/b.jsonl",
                 f"rollout-2026-12-01T16-58-15-{SID}\udcff.jsonl", "rollout-x.jsonl"):
        assert rollout_session_id(name) is None


def test_a_started_task_runs_until_its_complete_or_abort(tmp_path: Path) -> None:
    path = rollout(tmp_path, META + started() + user_message("hi"))
    assert running_task(path) == (TURN, EPOCH - timedelta(hours=1))
    with open(path, "a") as handle:
        handle.write(complete())
    assert running_task(path) is None
    with open(path, "a") as handle:
        handle.write(started(TURN2))
    assert running_task(path) is not None and running_task(path)[0] == TURN2  # type: ignore[index]
    with open(path, "a") as handle:
        handle.write(aborted(TURN2))
    assert running_task(path) is None


def test_markers_inside_prompt_or_reply_text_never_count(tmp_path: Path) -> None:
    """The marker quoted in a prompt is escaped in JSON; a line that only pretends (no exact prefix),
    and a task_complete whose reply mentions task_started, change nothing."""
    fake_start = user_message('{"type":"event_msg","payload":{"type":"task_started","turn_id":"evil"}}')
    pretend = '{"x":1,"type":"event_msg","payload":{"type":"task_started","turn_id":"evil"}}\n'
    path = rollout(tmp_path, started() + fake_start + pretend)
    assert running_task(path) == (TURN, EPOCH - timedelta(hours=1))
    path.write_text(started() + complete(message='"type":"task_started","turn_id":"evil"'))
    assert running_task(path) is None


def test_no_other_line_is_ever_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No JSON decoder runs at all: only the fixed pattern reads a lifecycle line's start."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a rollout line was JSON-decoded")

    monkeypatch.setattr(json, "loads", refuse)
    monkeypatch.setattr(json.JSONDecoder, "decode", refuse)
    path = rollout(tmp_path, META + user_message("secret prompt") + started() + complete())
    assert running_task(path) is None


@pytest.mark.parametrize("garbage", [
    b"\xff\xfe\xed" * 100 + b"\n",  # not UTF-8
    b'{"timestamp":"\xed\xa0\x80","type":"event_msg","payload":{"type":"task_started"}}\n',  # a lone surrogate
    b'{"timestamp":"2026-99-99T99:99:99Z","type":"event_msg","payload":{"type":"task_complete"}}\n',
    b"[" * 100_000 + b"\n",  # deep nesting
    b'{"timestamp":"2026-11-30T11:00:00Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"'
    + b"9" * 400 + b'"}}\n',  # a turn id too long to be one
])
def test_garbage_lines_are_skipped_and_never_raise(tmp_path: Path, garbage: bytes) -> None:
    path = rollout(tmp_path, started())
    with open(path, "ab") as handle:
        handle.write(garbage)
    result = running_task(path)
    # A lifecycle end with an unknown or unreadable turn ends the task; anything else leaves it running.
    assert result in (None, (TURN, EPOCH - timedelta(hours=1)))
    if b"task_" not in garbage:
        assert result == (TURN, EPOCH - timedelta(hours=1))


def test_only_the_tail_is_read_and_an_oversized_line_is_skipped(tmp_path: Path) -> None:
    filler = user_message("x" * 1000)
    path = rollout(tmp_path, started("old-turn") + filler * 5000 + started())  # ~5 MB: the first start is cut off
    assert running_task(path, limit=1024 * 1024) == (TURN, EPOCH - timedelta(hours=1))
    huge = started(TURN2).replace('"model_context_window"', '"pad":"' + "y" * 70_000 + '","model_context_window"')
    with open(path, "a") as handle:
        handle.write(huge)
    assert running_task(path)[0] == TURN  # type: ignore[index]


def test_a_fifo_or_symlink_at_the_rollout_path_is_no_task(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "2026" / "11" / "30"
    folder.mkdir(parents=True)
    fifo = folder / f"rollout-2026-11-30T11-00-00-{SID}.jsonl"
    os.mkfifo(fifo)
    assert running_task(fifo) is None  # no hang on a FIFO
    target = rollout(tmp_path, started(), session="01a2328a-0000-7282-926a-ab41fa4f9bf7")
    link = folder / "rollout-2026-11-30T11-00-00-01a2328a-1111-7282-926a-ab41fa4f9bf7.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError):
        running_task(link)  # never followed


# -- the component (MockClock, rescan only) ------------------------------------------------------------
@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def component(harness: Harness) -> CodexRolloutComponent:
    found = next(c for c in harness.runtime.components if isinstance(c, CodexRolloutComponent))
    found.use_watchfiles = False
    return found


async def rescans(count: int = 1) -> None:
    await anyio.sleep(RESCAN_SECONDS * count + 0.5)


def sessions(h: Harness) -> dict[SessionKey, Session]:
    return dict(h.runtime.state.sessions)


def test_a_running_task_without_hooks_is_one_protected_session_until_its_task_complete(codex_home: Path) -> None:
    path = rollout(codex_home, META + started() + user_message("secret"))

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        session = sessions(h)[KEY]
        assert session.source == "rollout" and session.turn_id == TURN
        assert session.transcript_path == str(path) and session.watched_process_identifier is None
        assert "protection-applied" in h.actions()
        reply = await h.send("status")
        assert [(s["SessionIdentifier"], s["Source"]) for s in reply["Sessions"]] == [(SID, "rollout")]
        with open(path, "a") as handle:
            handle.write(complete())
        await rescans()
        assert KEY not in sessions(h)
        stopped = h.log_entries("session-stopped")
        assert [entry["Command"] for entry in stopped] == ["codex-rollout-task-complete"]
        assert h.actions().count("protection-released") == 1
        await rescans(2)
        assert len(h.log_entries("session-started")) == 1  # the finished task never comes back

    run_mock(lambda: with_runtime(Harness(), body))


def aborted(turn: str = TURN) -> str:
    return (f'{{"timestamp":"{stamp(EPOCH)}","ordinal":30,"type":"event_msg","payload":'
            f'{{"type":"turn_aborted","turn_id":"{turn}","reason":"interrupted"}}}}\n')


@pytest.mark.parametrize("ending", ["turn_aborted", "task_complete"])
def test_an_interrupted_task_ends_its_session_without_a_normal_end(codex_home: Path, ending: str) -> None:
    """Issue 32 item 9: an Esc (``turn_aborted``) ends the rollout session like any stop, but never as a
    provider-reported normal end, so no PostSessionEnd "ended normally" goes out; a ``task_complete`` does.
    A record after the abort keeps the transcript monitor (which stops on a last-record ``turn_aborted``) out."""
    path = rollout(codex_home, META + started())
    receiver = WebhookReceiver()
    harness = Harness(settings_with(PostSessionEndWebhookUrl="http://hooks.test/end"), receiver=receiver)

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        assert KEY in sessions(h)
        with open(path, "a") as handle:
            handle.write((aborted() if ending == "turn_aborted" else complete()) + CONTEXT)
        await rescans()
        assert KEY not in sessions(h)
        [stopped] = h.log_entries("session-stopped")
        await anyio.sleep(30)
        if ending == "turn_aborted":
            assert receiver.bodies("PostSessionEnd") == []
            assert stopped["Command"] == "codex-rollout-turn-aborted"
        else:
            assert stopped["Command"] == "codex-rollout-task-complete"
            assert len(receiver.bodies("PostSessionEnd")) == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_hook_session_is_never_doubled_and_not_resurrected_after_its_stop(codex_home: Path) -> None:
    rollout(codex_home, started(at=EPOCH))  # the task began just now: its hook gets the grace first

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(1.0)
        assert KEY not in sessions(h)  # within the grace
        await h.start(SID, "Codex", TurnId=TURN)
        assert sessions(h)[KEY].source == "hook"
        await h.stop(SID, "Codex", TurnId=TURN)  # a quick turn: its hooks came and went within the grace
        await rescans(2)  # the rollout still shows the task running (its task_complete comes later)
        assert KEY not in sessions(h)
        assert len(h.log_entries("session-started")) == 1

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_task_whose_hook_never_comes_starts_after_the_grace(codex_home: Path) -> None:
    rollout(codex_home, started(at=EPOCH))

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(GRACE_SECONDS - 1)
        assert KEY not in sessions(h)
        await anyio.sleep(2)
        assert sessions(h)[KEY].source == "rollout"

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_hook_start_takes_over_a_rollout_session_and_its_own_stop_ends_it(codex_home: Path) -> None:
    rollout(codex_home, started())

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        assert sessions(h)[KEY].source == "rollout"
        await h.start(SID, "Codex", TurnId=TURN2)
        assert sessions(h)[KEY].source == "hook" and len(sessions(h)) == 1
        await h.stop(SID, "Codex", TurnId=TURN2)
        await rescans(2)
        assert KEY not in sessions(h)

    run_mock(lambda: with_runtime(Harness(), body))


def test_a_removed_or_lease_ended_rollout_session_does_not_come_back(codex_home: Path) -> None:
    rollout(codex_home, started())

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        assert KEY in sessions(h)
        await h.send("remove-session", SessionIdentifier=SID)
        await rescans(2)
        assert KEY not in sessions(h)

    run_mock(lambda: with_runtime(Harness(), body))


def test_bounded_newest_files_first_and_nothing_older_than_a_day(codex_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_rollouts, "MAX_FILES", 3)
    ids = [f"01a2328a-{number:04d}-7282-926a-ab41fa4f9bf7" for number in range(6)]
    paths = [rollout(codex_home, started(), session=sid) for sid in ids]
    now = datetime.now().timestamp()
    for number, path in enumerate(paths):
        os.utime(path, (now - number * 60, now - number * 60))
    old = rollout(codex_home, started(), session="01a2328a-9999-7282-926a-ab41fa4f9bf7", day="2026/11/01")
    os.utime(old, (EPOCH.timestamp() - 25 * 3600,) * 2)

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        assert sorted(key.session_identifier for key in sessions(h)) == sorted(ids[:3])

    run_mock(lambda: with_runtime(Harness(), body))


def test_no_codex_folder_and_a_file_where_the_folder_should_be_are_quiet(codex_home: Path) -> None:
    (codex_home / "sessions").write_text("not a folder")

    async def body(h: Harness) -> None:
        found = component(h)
        await rescans(2)
        assert found.scans >= 2 and not sessions(h)

    run_mock(lambda: with_runtime(Harness(), body))


def test_the_source_survives_the_journal() -> None:
    session = Session(KEY, EPOCH, EPOCH, source="rollout")
    assert session.with_journal_extras(session.journal_extras()).source == "rollout"
    assert Session(KEY, EPOCH, EPOCH).with_journal_extras({}).source == "hook"
    with pytest.raises(ValueError):
        session.with_journal_extras({"source": "elsewhere"})


def test_a_full_scan_cut_short_by_its_budget_is_tried_again_within_seconds(codex_home: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine can overrun the walk's 1 s budget: the task must not wait for the next 30 s rescan
    (600 s in a test that relies on the watcher), and a tree that always overruns backs off to the period."""
    rollout(codex_home, META + started())
    real = codex_rollouts.recent_files
    calls: list[float] = []

    def cut_short_twice(root: Path, **budgets: Any) -> tuple[list[tuple[float, Path]], bool]:
        calls.append(anyio.current_time())
        return ([], True) if len(calls) <= 2 else real(root, **budgets)

    monkeypatch.setattr(codex_rollouts, "recent_files", cut_short_twice)
    TRUNCATED = codex_rollouts.TRUNCATED_RESCAN_SECONDS

    async def body(h: Harness) -> None:
        component(h)
        await anyio.sleep(0.5)
        assert KEY not in sessions(h) and len(calls) == 1
        await anyio.sleep(TRUNCATED)  # tried again after 2 s: cut short again
        assert KEY not in sessions(h) and len(calls) == 2
        await anyio.sleep(2 * TRUNCATED)  # then after 4 s: the whole walk
        assert KEY in sessions(h) and len(calls) == 3
        await rescans()  # then the normal period again
        assert len(calls) == 4 and calls[3] - calls[2] == pytest.approx(RESCAN_SECONDS, abs=0.01)

    run_mock(lambda: with_runtime(Harness(), body))


# -- real time: the shared watcher notices rollout changes and new rollouts long before the rescan ---------
@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_the_watcher_notices_a_task_complete_and_a_new_rollout(codex_home: Path, backend: str) -> None:
    path = rollout(codex_home, started())
    # The start-up scan keeps files changed in the 24 h before the runtime's clock, and the harness clock is
    # EPOCH + the loop's clock: trio's starts at a random 10,000-200,000 s (asyncio's at the uptime), so a
    # file stamped with the real time could be "older than 24 h" for it (a trio-only flake, ~7 % of runs).
    future = time.time() + 30 * 86400
    os.utime(path, (future, future))
    other = "01a2328a-2222-7282-926a-ab41fa4f9bf7"
    other_key = SessionKey.create(AgentProvider.CODEX, other)
    harness = Harness()
    found = next(c for c in harness.runtime.components if isinstance(c, CodexRolloutComponent))
    found.rescan_seconds = 600.0  # only the watcher can see the changes within the bound

    async def until(predicate: Any, nudge: Path | None = None) -> None:
        """Until ``predicate``; ``nudge``: a file to append a marker-less line to every second, so a
        change made before the watcher's inotify watch was in place (a loaded machine) is seen anyway
        - by the watcher, never by the 600 s rescan."""
        with anyio.fail_after(15):
            waited = 0
            while not predicate():
                await anyio.sleep(0.05)
                waited += 1
                if nudge is not None and waited % 20 == 0:
                    with open(nudge, "a") as handle:
                        handle.write("\n")

    async def body(h: Harness) -> None:
        await until(lambda: KEY in h.runtime.state.sessions)
        await until(lambda: found.watcher.watches_started >= 1)
        with open(path, "a") as handle:
            handle.write(complete())
        await until(lambda: KEY not in h.runtime.state.sessions, nudge=path)
        new_path = rollout(codex_home, started(), session=other)  # a new file in the watched folder
        await until(lambda: other_key in h.runtime.state.sessions, nudge=new_path)
        assert found.scans >= 3 and found.watcher.watches_started == 1

    anyio.run(lambda: with_runtime(harness, body), backend=backend)


@pytest.mark.parametrize("seed", range(8))
def test_when_a_hook_session_was_last_seen_matches_looking_at_every_session_on_every_change(seed: int) -> None:
    """The component follows only the changed keys; the answer must be what a look at every session on
    every change gives (the hook's turn and the time of the last change it was present at)."""
    import random

    rng = random.Random(seed)
    harness = Harness()
    component = next(c for c in harness.runtime.components if isinstance(c, codex_rollouts.CodexRolloutComponent))
    component.use_watchfiles = False
    reference: dict[str, tuple[str, datetime]] = {}
    real = component.state_changed

    seen: list[object] = [None]

    def both() -> None:  # the whole look, on every registry change
        now, state = harness.runtime.clock.now(), harness.runtime.state
        if state is not seen[0]:
            seen[0] = state
            for key, session in state.sessions.items():
                if key.provider is AgentProvider.CODEX and session.source == "hook":
                    reference[key.session_identifier] = (session.turn_id, now)
        real()

    component.state_changed = both  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        for _ in range(80):
            provider = rng.choice(["Codex", "Codex", "Claude"])
            name = f"s{rng.randrange(4)}"
            action = rng.random()
            if action < 0.4:
                await h.send("start", Provider=provider, SessionIdentifier=name, TurnId=f"t{rng.randrange(3)}")
            elif action < 0.7:
                await h.send("mark-session-active", Provider=provider, SessionIdentifier=name,
                             TurnId=f"t{rng.randrange(3)}")
            else:
                await h.send("stop", Provider=provider, SessionIdentifier=name)
            await anyio.sleep(rng.choice([0, 0.5, 3]))
            for identifier in {f"s{index}" for index in range(4)}:
                assert component.hook_seen(identifier) == reference.get(identifier), identifier

    run_mock(lambda: with_runtime(harness, body))
