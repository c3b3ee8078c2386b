"""Pre-existing Codex tasks (seed 004, REFERENCE 13 "Runtime task detection", row 57): a Codex task that
started before the hooks were installed, or while lidguard was not running, sends no hook. Its rollout
(``<CODEX_HOME|~/.codex>/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl``) still records each
turn's lifecycle, so the runtime reads it, read-only:

- bounded: the newest rollout files first (``transcript_search.recent_files``: at most
  :data:`MAX_FILES` files changed in the last :data:`MAX_AGE_HOURS` hours, an entry and a time budget,
  never a full-disk walk), and of each only the last :data:`TAIL_BYTES`;
- private: a line is kept only when it holds an exact lifecycle marker (``"type":"task_started"``,
  ``"type":"task_complete"``, ``"type":"turn_aborted"``); every other line is discarded before any
  decoding, and a kept line is never JSON-decoded either: a fixed pattern reads its timestamp, its
  marker and its ``turn_id`` from the line's start, so no prompt or reply text (``last_agent_message``)
  is ever decoded; the session id comes from the file name;
- change-notified: the folders of those files go to the shared ``SharedFolderWatcher``; a changed file
  is read again only when its size or modification time moved; a full rescan every
  :data:`RESCAN_SECONDS` finds new day folders (and is all there is without watchfiles).

A rollout whose last task started and did not complete yields one protected session (``Source``
``rollout``, no watched process, the rollout as its transcript); its ``task_complete`` (or
``turn_aborted``: a stop, never a provider-reported normal end, so no PostSessionEnd) stops it. Hook
sessions win, by session id: a rollout task whose session a hook reported (same turn id, or a hook seen
since the task began) never becomes a second session, a hook start replaces a rollout session (it
becomes ``hook``), and a task is started at most once, so a session removed by hand or ended by its
lease does not come back. A task younger than :data:`GRACE_SECONDS` waits that long for its hook first.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from ...providers import AgentProvider
from .. import policy
from ..sessions import RegistryState, SessionKey
from ..transcript_search import recent_files, search_root
from . import ComponentBase
from .transcript_watcher import SharedFolderWatcher

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["GRACE_SECONDS", "RESCAN_SECONDS", "CodexRolloutComponent", "RolloutTask", "rollout_session_id",
           "running_task"]

MAX_FILES = 64
MAX_AGE_HOURS = 24
MAX_ENTRIES = 5_000
MAX_SECONDS = 1.0
TAIL_BYTES = 4 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024
PREFIX_BYTES = 512  # the marker, the timestamp and the turn id are all in a lifecycle line's start
RESCAN_SECONDS = 30.0
# A full scan cut short by its budget (a loaded machine, a huge tree) is tried again sooner: after 2 s,
# then 4, 8, ... up to the normal period (a tree that always overruns costs no more than before).
TRUNCATED_RESCAN_SECONDS = 2.0
GRACE_SECONDS = 5.0
MEMORY = 4096  # sessions remembered (tasks acted on, hook turns)
STOP_COMMAND = "codex-rollout-task-complete"
ABORT_COMMAND = "codex-rollout-turn-aborted"

_NAME = re.compile(r"rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-([0-9A-Za-z][0-9A-Za-z-]{7,99})\.jsonl")
_MARKERS = (b'"type":"task_started"', b'"type":"task_complete"', b'"type":"turn_aborted"')
_LIFECYCLE = re.compile(rb'\{"timestamp":"([0-9T:.+Z-]{10,40})",(?:"ordinal":\d{1,20},)?"type":"event_msg",'
                        rb'"payload":\{"type":"(task_started|task_complete|turn_aborted)"')
_TURN_ID = re.compile(rb'"turn_id":"([0-9A-Za-z_.:-]{1,128})"')


@dataclass(frozen=True)
class RolloutTask:
    """A Codex task whose rollout shows it started and not (yet) completed."""

    session_identifier: str
    path: Path
    turn_id: str
    started_at: datetime | None


def rollout_session_id(name: str) -> str | None:
    match = _NAME.fullmatch(name)
    return match.group(1) if match else None


def _timestamp(raw: bytes) -> datetime | None:
    try:
        moment = datetime.fromisoformat(raw.decode("ascii").replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def running_task(path: Path, *, limit: int = TAIL_BYTES) -> tuple[str, datetime | None] | None:
    """(turn id, when it started) of the task the rollout's tail shows running, else None.

    Opened through ``fileio_open`` (non-blocking, regular files only): anything else counts as no task;
    ``OSError`` for a symlink (never followed) or a file that is gone."""
    return read_tail(path, limit=limit)[0]


def read_tail(path: Path, *, limit: int = TAIL_BYTES) -> tuple[tuple[str, datetime | None] | None, bool]:
    """``running_task``'s answer, and whether the last task that ended completed (``task_complete``; False
    for a ``turn_aborted`` - an Esc, an interrupt - or no end seen: never a normal end by guess)."""
    from ...fileio_open import UnusableFileError, read_regular_file  # non-blocking, regular files only

    try:
        data = read_regular_file(path, limit=limit + 1, follow_symlinks=False, tail=True)
    except UnusableFileError:
        if os.path.islink(path):  # never followed: the caller forgets the path
            raise
        return None, False  # a FIFO, a device, a folder, an unreadable file: no task
    start = 1 if len(data) > limit else 0
    data = data[-limit:]
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # cut by the tail
    running: dict[str, datetime | None] = {}  # open turns in the order they started
    completed = False  # how the last task that ended ended
    for line in lines:
        if len(line) > MAX_LINE_BYTES or not any(marker in line for marker in _MARKERS):
            continue  # discarded before any decoding
        head = line[:PREFIX_BYTES]
        match = _LIFECYCLE.match(head)
        if match is None:
            continue
        turn = _TURN_ID.search(head)
        turn_id = turn.group(1).decode("ascii") if turn else ""
        if match.group(2) == b"task_started":
            running.pop(turn_id, None)
            running[turn_id] = _timestamp(match.group(1))
        else:
            completed = match.group(2) == b"task_complete"
            if turn_id and turn_id in running:
                del running[turn_id]
            else:
                running.clear()  # an end without a known turn ends whatever ran
    if not running:
        return None, completed
    turn_id = next(reversed(running))
    return (turn_id, running[turn_id]), False


def _bounded_put(memory: dict[str, object], key: str, value: object) -> None:
    memory.pop(key, None)
    memory[key] = value
    while len(memory) > MEMORY:
        del memory[next(iter(memory))]


@dataclass
class _Scan:
    tasks: dict[str, RolloutTask] = field(default_factory=dict)  # session id -> its running task
    # session ids whose rollout shows no running task -> whether its last task completed (not aborted)
    ended: dict[str, bool] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    truncated: bool = False  # a budget ran out before the walk ended


class CodexRolloutComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.use_watchfiles = True  # tests under a mock clock rely on the rescan alone
        self.rescan_seconds = RESCAN_SECONDS
        self.watcher = SharedFolderWatcher(on_failure=self._watch_failed)
        self._scope: anyio.CancelScope | None = None
        self._watcher_scope: anyio.CancelScope | None = None
        self._wake = anyio.Event()
        self._changed: set[Path] = set()  # files the watcher saw change
        self._recheck: set[Path] = set()  # files with a task in its grace period
        self._stats: dict[Path, tuple[int, int]] = {}  # file -> (size, mtime) when last read
        self._known: dict[Path, RolloutTask | bool] = {}  # file -> its task when last read (else: completed)
        self._acted: dict[str, object] = {}  # session id -> the turn id already started or left to a hook
        # session id -> (turn id, when a hook session was last seen) for hook sessions that have left; the ones
        # present now are in ``_hook_present`` (id -> turn id), seen at ``_seen_at`` (the latest change)
        self._hook_turns: dict[str, object] = {}
        self._hook_present: dict[str, str] = {}
        self._seen_state: RegistryState | None = None
        self._seen_at: datetime | None = None
        self.scans = 0
        self._truncated_scans = 0  # full scans in a row that ran out of budget

    # -- questions and state ---------------------------------------------------------------------------
    def state_changed(self) -> None:
        runtime = self._runtime
        state = runtime.state
        if state is not self._seen_state:
            changed = state.changed_since(self._seen_state)
            seen_before, self._seen_state, self._seen_at = self._seen_at, state, runtime.clock.now()
            sessions, present = state.sessions, self._hook_present
            if changed is None:  # not one step from the state seen last: look at every session
                hooks = {key.session_identifier: session.turn_id for key, session in sessions.items()
                         if key.provider is AgentProvider.CODEX and session.source == "hook"}
                for identifier in [identifier for identifier in present if identifier not in hooks]:
                    self._hook_left(identifier, seen_before)
                present.update(hooks)
            else:  # only the changed keys can have come, gone or changed their turn
                for key in changed:
                    if key.provider is not AgentProvider.CODEX:
                        continue
                    session = sessions.get(key)
                    if session is not None and session.source == "hook":
                        present[key.session_identifier] = session.turn_id
                    elif key.session_identifier in present:
                        self._hook_left(key.session_identifier, seen_before)
        if self._scope is None and runtime.running and not runtime.stopping:
            self._scope = runtime.spawn(self._loop)

    def _watch_failed(self, error: BaseException) -> None:
        self._runtime.log("codex-rollout-watch-failed", "codex-rollout",
                          f"Watching the Codex rollout folders failed ({error}); rescanning them every "
                          f"{self.rescan_seconds:g} s instead.", succeeded=False)

    def _noticed(self, path: Path) -> None:
        if rollout_session_id(path.name) is not None:
            self._changed.add(path)
            self._wake.set()

    # -- the loop --------------------------------------------------------------------------------------
    async def _loop(self, scope: anyio.CancelScope) -> None:
        runtime = self._runtime
        next_rescan = 0.0
        while not runtime.stopping:
            full = anyio.current_time() >= next_rescan
            changed, self._changed = self._changed | self._recheck, set()
            self._recheck = set()
            if full:
                next_rescan = anyio.current_time() + self.rescan_seconds
            scan = await runtime.call_platform(self._scan, full, changed, runtime.clock.now().timestamp())
            self.scans += 1
            if full:
                self._truncated_scans = self._truncated_scans + 1 if scan.truncated else 0
                if scan.truncated:
                    retry = TRUNCATED_RESCAN_SECONDS * 2 ** min(self._truncated_scans - 1, 16)
                    next_rescan = min(next_rescan, anyio.current_time() + retry)
                self._watch(scan.files)
            wait = await self._apply(scan)
            timeout = max(0.0, min(next_rescan - anyio.current_time(), wait))
            self._wake = anyio.Event()
            if self._changed:
                continue
            with anyio.move_on_after(timeout):
                await self._wake.wait()

    def _watch(self, files: list[Path]) -> None:
        if not self.use_watchfiles:
            return
        self.watcher.set_folders({path.parent: self._noticed for path in files})
        if self._watcher_scope is None and files:
            self._watcher_scope = self._runtime.spawn(lambda scope: self.watcher.run())

    def _scan(self, full: bool, changed: set[Path], now: float) -> _Scan:
        """Off the gate (a worker thread with real backends): which files to read, then their tails."""
        scan = _Scan()
        root = search_root(AgentProvider.CODEX)
        if full:
            found: list[tuple[float, Path]] = []
            if root is not None:
                found, scan.truncated = recent_files(root, name_ok=lambda name: rollout_session_id(name) is not None,
                                        newer_than=now - MAX_AGE_HOURS * 3600, max_files=MAX_FILES,
                                        max_entries=MAX_ENTRIES, max_seconds=MAX_SECONDS)
            scan.files = [path for _, path in found]
            for gone in set(self._known) - set(scan.files):
                self._known.pop(gone, None)
                self._stats.pop(gone, None)
            paths = scan.files
        else:
            paths = sorted(path for path in changed if root is not None and path.is_relative_to(root))
        deadline = time.monotonic() + MAX_SECONDS
        for path in paths[:MAX_FILES]:
            session_identifier = rollout_session_id(path.name)
            if session_identifier is None or time.monotonic() > deadline:
                continue
            try:
                info = os.stat(path, follow_symlinks=False)
                stat = (info.st_size, info.st_mtime_ns)
                if self._stats.get(path) != stat or path not in self._known:
                    found_task, completed = read_tail(path)
                    self._known[path] = (RolloutTask(session_identifier, path, *found_task)
                                         if found_task is not None else completed)
                    self._stats[path] = stat
            except (OSError, ValueError):
                self._known.pop(path, None)
                self._stats.pop(path, None)
                continue
            task = self._known[path]
            if isinstance(task, RolloutTask):
                scan.tasks[session_identifier] = task
            else:
                scan.ended[session_identifier] = task
        for session_identifier in scan.tasks:
            scan.ended.pop(session_identifier, None)
        return scan

    async def _apply(self, scan: _Scan) -> float:
        """Starts sessions for running tasks, stops rollout sessions whose task ended; returns how long
        until a task still in its grace period should be looked at again."""
        runtime = self._runtime
        wait = self.rescan_seconds
        for session_identifier, task in scan.tasks.items():
            key = SessionKey.create(AgentProvider.CODEX, session_identifier)
            decision = self._decide(key, task)
            if isinstance(decision, float):
                wait = min(wait, decision)
                self._recheck.add(task.path)  # looked at again then, changed or not
                continue
            if not decision:
                continue
            event = policy.Start(key, transcript_path=str(task.path), watch_parent_process=False,
                                 turn_id=task.turn_id, source="rollout")

            def still_wanted(key: SessionKey = key, task: RolloutTask = task) -> bool:
                return self._decide(key, task) is True and self._claim(key, task)

            await runtime.run_event(event, guard=still_wanted)
        for session_identifier, completed in scan.ended.items():
            key = SessionKey.create(AgentProvider.CODEX, session_identifier)

            def still_rollout(key: SessionKey = key) -> bool:
                session = runtime.state.sessions.get(key)
                return session is not None and session.source == "rollout"

            if still_rollout():  # an interrupted task (Esc) is a stop, never a provider-reported normal end
                command = STOP_COMMAND if completed else ABORT_COMMAND
                await runtime.run_event(policy.Stop(key, provider_session_end=completed, end_reason=command,
                                                    command=command), guard=still_rollout)
        return wait

    def _hook_left(self, session_identifier: str, seen_at: datetime | None) -> None:
        """A hook session left the registry (or stopped being a hook's): remembered as seen at the change before."""
        turn = self._hook_present.pop(session_identifier)
        if seen_at is not None:
            _bounded_put(self._hook_turns, session_identifier, (turn, seen_at))

    def hook_seen(self, session_identifier: str) -> tuple[str, datetime] | None:
        """(turn id, when) a Codex hook session with this id was last in the registry, if ever (remembered)."""
        turn = self._hook_present.get(session_identifier)
        if turn is not None and self._seen_at is not None:
            return turn, self._seen_at
        hook = self._hook_turns.get(session_identifier)
        return hook if isinstance(hook, tuple) else None

    def _claim(self, key: SessionKey, task: RolloutTask) -> bool:
        _bounded_put(self._acted, key.session_identifier, task.turn_id)
        return True

    def _decide(self, key: SessionKey, task: RolloutTask) -> bool | float:
        """True: start a rollout session now; False: not (a session exists, a hook has it, done
        before); a number: look again after that many seconds (the grace for the hook)."""
        session_identifier = key.session_identifier
        if key in self._runtime.state.sessions:
            _bounded_put(self._acted, session_identifier, task.turn_id)
            return False
        if self._acted.get(session_identifier) == task.turn_id:
            return False
        hook = self.hook_seen(session_identifier)
        if hook is not None:
            hook_turn, hook_seen = hook
            if hook_turn == task.turn_id or (task.started_at is not None
                                             and hook_seen >= task.started_at - timedelta(seconds=1)):
                _bounded_put(self._acted, session_identifier, task.turn_id)
                return False
        if task.started_at is not None:
            age = (self._runtime.clock.now() - task.started_at).total_seconds()
            if -300 < age < GRACE_SECONDS:  # a clock far off: no grace rather than waiting on it
                return max(0.05, GRACE_SECONDS - age)
        return True
