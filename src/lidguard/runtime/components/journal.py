"""The journaled session registry: no session is lost when the runtime dies.

After every event the component compares the registry with what the journal holds (sessions are
immutable, so an unchanged one is the same object) and notes each changed session. What was noted is
written in batches (a small append on the event loop, snapshots and large batches in a worker thread on
real runtimes), with one record per session for its latest state in the batch (a session that came and
went within one batch and was never written needs none); when the file has grown past a bound it is
compacted to one snapshot.
A reply leaves only once the batch holding its change was written to the kernel (``sync``, issue 39): a
kill -9 loses nothing acknowledged; requests arriving during a write share the next one (group commit).
With no fsync, a power loss or a kernel crash may lose the last changes. Changes made outside a request
(timers, watchers) go out with the next request or after ``BATCH_SECONDS``.
A runtime that starts again replays the journal before it accepts requests (``replay``): sessions
whose watched process is alive are protected again with the same identity, timestamps and pending
work; sessions whose process is gone end as orphans (logged, no webhook); sessions with no watched
process come back and obey their timeout. A clean exit empties the journal.

Protection never depends on the file (``journal_file.py``): a journal that cannot be read is set
aside with a warning, and one that cannot be written (full disk, a directory in its place) makes the
journal *degraded*: counted, logged once, reported in ``status``; sessions are protected all the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ...ipc.limits import SESSION_JOURNAL_FILE_NAME
from .. import policy
from ..clock import WallClock
from ..journal_file import (
    JOURNAL_BUDGET_BYTES,
    JournalUnusable,
    append_to_journal,
    key_from_json,
    key_to_json,
    read_journal,
    record_line,
    session_from_json,
    session_line,
    set_aside,
    write_snapshot,
)
from ..sessions import RegistryState, Session, SessionKey
from . import ComponentBase

if TYPE_CHECKING:
    from pathlib import Path

    from ..app import Runtime

__all__ = ["BATCH_SECONDS", "COMPACT_AFTER_BYTES", "COMPACT_AFTER_LINES", "INLINE_APPEND_BYTES", "JournalComponent"]

COMPACT_AFTER_LINES = 2048  # plus twice the registry: compaction stays rare whatever the count
COMPACT_AFTER_BYTES = 1024 * 1024  # plus twice the last snapshot: long records (4 KiB paths) compact sooner
INLINE_APPEND_BYTES = 64 * 1024  # appends up to this size are written on the loop; snapshots in a thread
BATCH_SECONDS = 0.05  # changes made outside a request wait at most this long for their write

_line = record_line


class JournalComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.path: Path = runtime.paths.data_dir / SESSION_JOURNAL_FILE_NAME
        self._journaled_state: RegistryState | None = None  # the registry the queued records describe
        self._journaled: dict[SessionKey, Session] = {}
        self._journaled_suspend: object | None = None
        self._journaled_requested = False  # the journaled pending suspend is being requested
        # Sessions changed since the last batch was taken -> their latest state (None: ended). Serialized when
        # the batch is written, so a session that changes three times within one batch costs one record.
        self._changed: dict[SessionKey, Session | None] = {}
        self._on_file: set[SessionKey] = set()  # sessions whose latest record in the file is a put
        self._queue: list[bytes] = []  # the other records (request ids, the pending suspend), in order
        self._extra_records: dict[str, dict[str, Any]] = {}  # latest record per kind (ids, suspend)
        self._wake = anyio.Event()
        self._lines = 0
        self._bytes = self._snapshot_bytes = 0  # appended since the last snapshot; its size
        self._compact = True  # the first write is a snapshot (compaction on start)
        self._writer: anyio.CancelScope | None = None
        self._writing = anyio.Lock()  # one batch written at a time, in order
        self.failures = 0
        self.degraded: str | None = None  # the reason writes fail now (reported in status)
        self._offload = runtime.offload or isinstance(runtime.clock, WallClock)

    # -- what other parts of the runtime journal along with the sessions ----------------------------
    def note_request_id(self, request_id: str) -> None:
        """An applied request id (replay-safe events); compaction keeps the runtime's recent ones."""
        self._queue.append(_line({"op": "id", "id": request_id}))
        self._wake.set()
        self._start_writer()

    def record(self, kind: str, record: dict[str, Any]) -> None:
        """Queues a record of its own kind (``suspend``); compaction keeps the latest of each kind."""
        self._extra_records[kind] = record
        self._queue.append(_line(record))
        self._wake.set()
        self._start_writer()

    # -- the registry -> records ------------------------------------------------------------------
    def state_changed(self) -> None:
        self._journal_pending_suspend()
        state = self._runtime.state
        if state is self._journaled_state:
            return
        changed = state.changed_since(self._journaled_state)
        self._journaled_state = state
        sessions = state.sessions
        journaled = self._journaled
        if changed is not None:  # made in one step from the journaled state: only these keys can differ
            self._journal_keys(changed, sessions)
            return
        queued = False
        for key, session in sessions.items():
            if journaled.get(key) is not session:
                self._changed[key] = journaled[key] = session
                queued = True
        if len(journaled) != len(sessions) or queued:
            for key in [key for key in journaled if key not in sessions]:
                del journaled[key]
                self._changed[key] = None
                queued = True
        if queued:
            self._wake.set()
            self._start_writer()

    def _journal_keys(self, keys: tuple[SessionKey, ...], sessions: Mapping[SessionKey, Session]) -> None:
        journaled, noted = self._journaled, self._changed
        queued = False
        for key in keys:
            session = sessions.get(key)
            if session is None:
                if journaled.pop(key, None) is not None:
                    noted[key] = None
                    queued = True
            elif journaled.get(key) is not session:
                noted[key] = journaled[key] = session
                queued = True
        if queued:
            self._wake.set()
            self._start_writer()

    def _journal_pending_suspend(self) -> None:
        """The pending suspend (issue 17): a runtime restarted during its delay or its PreSuspend
        webhook re-evaluates it instead of leaving a closed laptop awake with nothing scheduled."""
        pending = self._runtime.suspend.pending
        requested = pending is not None and pending.stage == "requesting"
        if pending is self._journaled_suspend and requested == self._journaled_requested:
            return
        self._journaled_suspend, self._journaled_requested = pending, requested
        record: dict[str, Any] | None = None
        if pending is not None:
            trigger = pending.trigger
            session = trigger.trigger_session
            record = {"reason": trigger.reason, "command": trigger.command, "cancel_path": trigger.cancel_path,
                      "stop_hook_active": trigger.stop_hook_active, "deadline": pending.deadline.isoformat(),
                      "session": key_to_json(session.key) if session is not None else None,
                      "requested": requested}
        self.record("suspend", {"op": "suspend", "suspend": record})

    async def suspend_requesting(self) -> None:
        """Called right before the platform is asked to suspend: the journal says so first (written to
        the kernel), so a runtime killed right after the request never suspends again once restarted."""
        self._journal_pending_suspend()
        await self.sync()

    def _start_writer(self) -> None:
        if self._writer is None and self._runtime.running:
            self._writer = self._runtime.spawn(self._write_loop)

    def _snapshot(self) -> bytes:
        lines = [session_line(session) for session in self._runtime.state.sessions.values()]
        lines += [_line(record) for record in self._extra_records.values()]
        ids = self._runtime.recent_requests.latest()
        if ids:
            lines.append(_line({"op": "ids", "ids": ids}))
        return b"".join(lines)

    async def _write_loop(self, scope: anyio.CancelScope) -> None:
        while True:
            await self._wake.wait()
            await anyio.sleep(BATCH_SECONDS)
            self._wake = anyio.Event()
            await self.flush()

    def _take_batch(self) -> list[bytes]:
        """The records of what changed since the last batch, the noted sessions' latest states first."""
        lines, on_file = [], self._on_file
        for key, session in self._changed.items():
            if session is not None:
                lines.append(session_line(session))
                on_file.add(key)
            elif key in on_file:  # a session never written (it came and went within the batch) needs no del
                lines.append(_line({"op": "del", "key": key_to_json(key)}))
                on_file.discard(key)
        lines += self._queue
        self._changed, self._queue = {}, []
        return lines

    async def sync(self) -> None:
        """Returns once every change noted so far is in the kernel (a reply waits for it): after a write in
        flight, one batch of all still noted. A degraded journal is retried by the writer, not per request."""
        if self.degraded is not None:
            return
        if self._queue or self._changed or self._compact or self._writing.locked():
            await self.flush()

    async def flush(self) -> None:
        """Writes what is queued (one batch); compacts instead when the file has grown enough."""
        async with self._writing:
            await self._flush()

    async def _flush(self) -> None:
        if not self._queue and not self._changed and not self._compact:
            return
        sessions = self._runtime.state.sessions
        limit = COMPACT_AFTER_LINES + 2 * len(sessions)
        # Taken with nothing awaited since the changes were noted: nothing is lost in between.
        compact = (self._compact or self._lines + len(self._queue) + len(self._changed) > limit
                   or self._bytes > COMPACT_AFTER_BYTES + 2 * self._snapshot_bytes)
        if not compact:
            lines = self._take_batch()
            if not lines:  # every session noted came and went within the batch: nothing to write
                return
            data, count = b"".join(lines), len(lines)
            # the whole file stays within its budget: a batch that would pass it is a snapshot instead
            compact = self._snapshot_bytes + self._bytes + len(data) > JOURNAL_BUDGET_BYTES
        if compact:
            data, count = self._snapshot(), len(sessions)
            self._changed, self._queue, self._on_file = {}, [], set(sessions)
        self._compact = False
        error = await self._write(write_snapshot if compact else append_to_journal, data)
        if error is None:
            self._lines = count if compact else self._lines + count
            if compact:
                self._snapshot_bytes = len(data)
            self._bytes = 0 if compact else self._bytes + len(data)
            if self.degraded is not None:
                self.degraded = None
                self._runtime.log("session-journal-recovered", "session-journal",
                                  "The session journal is written again.")
            return
        self.failures += 1
        self._compact = True  # the file misses these records: the next write is a whole snapshot
        if isinstance(error, JournalUnusable) and set_aside(self.path) is not None:
            written, snapshot = self._runtime.state.sessions, self._snapshot()
            error = await self._write(write_snapshot, snapshot)
            if error is None:
                self._compact, self._lines, self._on_file = False, len(written), set(written)
                self._bytes, self._snapshot_bytes = 0, len(snapshot)
                self._runtime.log("session-journal-set-aside", "session-journal",
                                  "Set aside what was at the session journal's path and wrote a new journal.",
                                  succeeded=False)
                return
        reason = f"{type(error).__name__}: {error}"
        if self.degraded is None:  # reported once until it works again
            self._runtime.log("session-journal-degraded", "session-journal",
                              f"The session journal cannot be written ({reason}); sessions stay protected, "
                              "but a runtime crash would forget them.", succeeded=False)
        self.degraded = reason

    async def _write(self, function: Any, data: bytes) -> Exception | None:
        try:
            # A small append is one write(2) (~20 us): made on the loop. A reply waiting for a worker thread
            # waited for the GIL too (p50 of a sequential request 1.25 -> 7.7 ms when every append was offloaded).
            if self._offload and not (function is append_to_journal and len(data) <= INLINE_APPEND_BYTES):
                await anyio.to_thread.run_sync(function, self.path, data)
            else:
                function(self.path, data)
        except Exception as error:  # noqa: BLE001 - a journal write never costs protection
            return error
        return None

    # -- start and exit ----------------------------------------------------------------------------
    async def replay(self) -> list[dict[str, Any]]:
        """Brings the journaled sessions back (before any request). Returns the non-session records
        (latest per kind) for the parts that journal their own (request ids, the pending suspend)."""
        runtime = self._runtime
        read = await anyio.to_thread.run_sync(read_journal, self.path) if self._offload else read_journal(self.path)
        if read.problem is not None:
            where = f" (moved to {read.set_aside_to})" if read.set_aside_to else " (it could not be moved)"
            runtime.log("session-journal-set-aside", "session-journal",
                        f"Set aside the session journal: {read.problem}{where}; kept what could be read.",
                        succeeded=False)
        sessions, extras, ids = self._fold(read.records)
        runtime.recent_requests.extend(ids)
        restored: list[Session] = []
        effects: list[policy.Effect] = []
        for session in sorted(sessions.values(), key=lambda item: (item.started_at, item.key)):
            pid = session.watched_process_identifier
            alive = await self._alive(pid) if pid else None
            if alive is False:
                runtime.log("journal-session-orphaned", "session-journal",
                            f"Ended {session.key} from the journal because its process {pid} is gone.",
                            session=session)
                continue
            restored.append(session)
            if pid:
                effects.append(policy.WatchProcess(session.key, pid))
        async with runtime.gate:
            state = runtime.state
            for session in restored:
                if session.key not in state.sessions:
                    state = state.with_session(session)
                    runtime.log("session-restored", "session-journal",
                                f"Restored {session.key} from the journal.", session=session)
            runtime.state = state
            runtime.apply_effects(effects)
            self._compact = True  # compaction on start
            runtime.state_changed()
        self._extra_records = {}  # the parts that journal their own records write them afresh
        self._wake.set()
        self._start_writer()
        suspend = extras.get("suspend", {}).get("suspend")
        if isinstance(suspend, dict):
            await self._re_evaluate_suspend(suspend)
        return list(extras.values())

    async def _re_evaluate_suspend(self, record: dict[str, Any]) -> None:
        """A suspend was pending when the runtime died: evaluate it again (afresh: delay, webhook,
        re-check), unless a restored session wants protection now."""
        runtime = self._runtime
        if record.get("requested") is True:  # the platform was (about to be) asked: never a second suspend
            runtime.log("pending-suspend-already-requested", "session-journal",
                        "Dropped the suspend that was pending when the runtime stopped: it had been requested.")
            return
        reason, command = record.get("reason"), record.get("command")
        if reason not in ("Completed", "SoftLocked") or not isinstance(command, str) or len(command) > 64:
            return
        await runtime.machine.fresh()
        async with runtime.gate:
            if runtime.state.protection_wanted or runtime.suspend.pending is not None:
                runtime.log("pending-suspend-dropped", "session-journal",
                            "Dropped the suspend that was pending when the runtime stopped: a session is active.")
                return
            trigger_session = None
            try:
                trigger_session = runtime.state.sessions.get(key_from_json(record.get("session")))
            except ValueError:
                pass
            runtime.log("pending-suspend-restored", "session-journal",
                        "Evaluating again the suspend that was pending when the runtime stopped.")
            runtime.apply_effects([policy.EvaluateSuspend(
                "SoftLocked" if runtime.state.sessions else reason, command, trigger_session,
                len(runtime.state.sessions), cancel_path=record.get("cancel_path") is True,
                stop_hook_active=record.get("stop_hook_active") is True)])
            runtime.state_changed()

    def _fold(self, records: Iterable[dict[str, Any]],
              ) -> tuple[dict[SessionKey, Session], dict[str, dict[str, Any]], list[Any]]:
        sessions: dict[SessionKey, Session] = {}
        extras: dict[str, dict[str, Any]] = {}
        ids: list[Any] = []
        skipped = 0
        for record in records:
            op = record["op"]
            try:
                if op == "put":
                    session = session_from_json(record.get("session"))
                    sessions[session.key] = session
                elif op == "del":
                    sessions.pop(key_from_json(record.get("key")), None)
                elif op == "id":
                    ids.append(record.get("id"))
                elif op == "ids":
                    ids.extend(record["ids"] if isinstance(record.get("ids"), list) else ())
                else:
                    extras[op] = record
            except (ValueError, TypeError, OverflowError):
                skipped += 1
        if skipped:
            self._runtime.log("session-journal-records-skipped", "session-journal",
                              f"Skipped {skipped} journal record(s) that do not describe a session.", succeeded=False)
        return sessions, extras, ids

    async def _alive(self, pid: int) -> bool | None:
        runtime = self._runtime
        try:
            return bool(await runtime.call_platform(runtime.platform.process.is_alive, pid))
        except (ValueError, OverflowError):
            return False
        except Exception:  # noqa: BLE001 - Unsupported and friends: cannot tell, keep the session
            return None

    def closed(self) -> None:
        """A clean exit: nothing is left to bring back (synchronous; the runtime is stopping)."""
        if self._writer is not None:
            self._writer.cancel()
        self._queue, self._changed = [], {}
        try:
            write_snapshot(self.path, b"")
        except Exception:  # noqa: BLE001 - the next start sets a bad journal aside
            self.failures += 1

    def describe(self) -> dict[str, Any]:
        return {"Path": str(self.path), "Degraded": self.degraded, "WriteFailures": self.failures}
