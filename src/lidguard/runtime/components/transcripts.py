"""Transcript monitors (REFERENCE 6): what the agent writes to its transcript tells us what hooks miss.

One monitor per Codex / Claude / Copilot session with a transcript (the start's ``TranscriptPath``;
Copilot falls back to ``<COPILOT_HOME|~/.copilot>/session-state/<id>/events.jsonl``, Codex and Claude
to a bounded search by session id off the gate, ``runtime.transcript_search``). A change is
noticed through one watchfiles watcher shared by every monitor (``transcript_watcher.py``: the
folders, not recursive; one inotify instance whatever the session count) with a slow poll as the fallback; it counts
only when the file grew or its modification time advanced (a shrink just takes a new baseline). Then
only the file's tail is read and, in this order:
- stop: Codex ``event_msg`` ``turn_aborted`` as the last record, Claude's "[Request interrupted by
  user...]" as the last user record, Copilot's top-level ``abort`` (not a provider session end; a turn end,
  so deferred while background work runs - the deferred session is then monitored again from its size);
- soft-lock: a Codex ``request_user_input`` call without its output in the last 1024 lines / 1 MiB;
- else activity, with the REFERENCE 4.3 reason strings.
Any activity or soft-lock from elsewhere takes a new baseline, so growth already seen is not reported.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ...providers import AgentProvider
from .. import policy
from ..sessions import RegistryState, Session, SessionKey
from ..transcript_search import SEARCHED_PROVIDERS, SearchResult, find_transcript, search_root
from . import ComponentBase
from .transcript_watcher import SharedFolderWatcher

if TYPE_CHECKING:
    from ..app import Runtime

__all__ = ["POLL_SECONDS", "TranscriptComponent", "TranscriptSignal", "detect", "read_tail"]

POLL_SECONDS = 1.0  # the fallback poll (REFERENCE 6: 1 s); with watchfiles it is only a safety net
WATCHED_POLL_SECONDS = 5.0
TAIL_BYTES = 1024 * 1024
TAIL_LINES = 1024
CLAUDE_INTERRUPTS = frozenset({"[Request interrupted by user]", "[Request interrupted by user for tool use]"})
CODEX_PENDING_REASON = "codex_transcript_request_user_input_pending"


@dataclass(frozen=True)
class _Kind:
    prefix: str  # log event prefix
    stop_command: str
    activity_reason: str


KINDS: dict[AgentProvider, _Kind] = {
    AgentProvider.CODEX: _Kind("codex", "codex-transcript-turn-aborted", "codex_transcript_activity_detected"),
    AgentProvider.CLAUDE: _Kind("claude", "claude-transcript-interrupted", "claude_transcript_activity_detected"),
    AgentProvider.GITHUB_COPILOT: _Kind("github-copilot", "github-copilot-transcript-abort",
                                        "github_copilot_session_event_activity_detected"),
}


@dataclass(frozen=True)
class TranscriptSignal:
    kind: str  # "stop" | "soft-lock" | "activity"
    reason: str


# -- pure detection -------------------------------------------------------------------------------------
def read_tail(path: Path, limit: int = TAIL_BYTES) -> list[dict[str, Any]]:
    """The JSON object records among the last ``limit`` bytes (a cut first line is dropped).

    Opened non-blocking, regular files only (issue 39.5: a FIFO blocked open() and froze the runtime);
    ``OSError`` (``UnusableFileError``) for anything else."""
    from ...fileio_open import read_regular_file

    data = read_regular_file(path, limit=limit + 1, tail=True)
    cut = len(data) > limit
    lines = data[-limit:].split(b"\n")
    if cut:
        lines = lines[1:]
    records = []
    for line in lines[-TAIL_LINES:]:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def _text_of(record: dict[str, Any]) -> list[str]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None:
        content = record.get("content", record.get("text"))
    if isinstance(content, str):
        return [content]
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return texts


def _codex_pending(records: list[dict[str, Any]]) -> bool:
    pending: set[Any] = set()
    for record in records:
        payload = record.get("payload")
        if record.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        call_id = payload.get("call_id")
        if payload.get("type") == "function_call" and payload.get("name") == "request_user_input":
            pending.add(call_id)
        elif payload.get("type") == "function_call_output":
            pending.discard(call_id)
    return bool(pending)


def detect(provider: AgentProvider, records: list[dict[str, Any]]) -> TranscriptSignal:
    kind = KINDS[provider]
    last = records[-1] if records else {}
    if provider is AgentProvider.CODEX:
        payload = last.get("payload")
        if last.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "turn_aborted":
            return TranscriptSignal("stop", kind.stop_command)
        if _codex_pending(records):
            return TranscriptSignal("soft-lock", CODEX_PENDING_REASON)
    elif provider is AgentProvider.CLAUDE:
        users = [record for record in records if record.get("type") == "user"]
        if users and users[-1] is last and any(text.strip() in CLAUDE_INTERRUPTS for text in _text_of(last)):
            return TranscriptSignal("stop", kind.stop_command)
    elif last.get("type") == "abort":
        return TranscriptSignal("stop", kind.stop_command)
    return TranscriptSignal("activity", kind.activity_reason)


def copilot_fallback(session_identifier: str) -> str:
    """``<COPILOT_HOME|~/.copilot>/session-state/<id>/events.jsonl`` when the id is a plain file name."""
    if not session_identifier or session_identifier in (".", "..") or any(c in session_identifier for c in "/\\\0"):
        return ""
    root = os.environ.get("COPILOT_HOME", "").strip()
    base = Path(root) if root and os.path.isabs(root) else Path(os.path.expanduser("~")) / ".copilot"
    return str(base / "session-state" / session_identifier / "events.jsonl")


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size, info.st_mtime_ns


# -- the component --------------------------------------------------------------------------------------
@dataclass
class _Monitor:
    key: SessionKey
    path: Path
    baseline: tuple[int, int] | None
    seen: tuple[Any, Any]  # (last_activity_at, soft_lock_reason) of the session when last looked at
    scope: anyio.CancelScope | None = None
    changed: anyio.Event = field(default_factory=anyio.Event)
    stop_watch: anyio.Event = field(default_factory=anyio.Event)


class TranscriptComponent(ComponentBase):
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._monitors: dict[SessionKey, _Monitor] = {}
        self._searched: dict[SessionKey, Path | None] = {}  # fallback search results (None: running/none)
        # sessions (the very objects) a pass found nothing to do for, whose next pass would again do nothing
        # as long as the object is the same (no transcript path to re-check on disk; any change to their
        # monitor or search result forgets them): a state change looks only at the other sessions
        self._settled: dict[SessionKey, Session] = {}
        self._unsettled: dict[SessionKey, None] = {}  # the others (in KINDS): looked at on every change
        self._seen_state: RegistryState | None = None  # the registry the last state change saw
        self.use_watchfiles = True  # tests drive the poll alone (no watcher thread under a mock clock)
        self.poll_seconds = POLL_SECONDS
        self.watcher = SharedFolderWatcher(on_failure=self._watch_failed)
        self._watcher_scope: anyio.CancelScope | None = None
        self._search_queue: dict[SessionKey, str] = {}  # sessions waiting for a search -> the path they gave
        self._search_scope: anyio.CancelScope | None = None  # the task working through the queue (it stays)
        self._search_wake: anyio.Event | None = None  # set when the task waits for the queue to fill
        # the path each session's missing folder was last logged for: it is looked at again on every change
        # (the folder may appear), and logged again only once its monitor ran or its path changed
        self._skip_logged: dict[SessionKey, Path] = {}

    def _watch_failed(self, error: BaseException) -> None:
        self._runtime.log("transcript-watch-failed", "transcript-monitor",
                          f"Watching the transcript folders failed ({error}); polling them instead.", succeeded=False)

    @property
    def monitored(self) -> dict[SessionKey, Path]:
        return {key: monitor.path for key, monitor in self._monitors.items()}

    def state_changed(self) -> None:
        state = self._runtime.state
        changed = state.changed_since(self._seen_state)
        self._seen_state = state
        sessions = state.sessions
        settled, unsettled = self._settled, self._unsettled
        keys: Iterable[SessionKey]
        if changed is None:  # not one step from the state seen last: look at everything
            for key in [key for key in self._monitors if key not in sessions]:
                self._cancel(key)
            for key in [key for key in self._searched if key not in sessions]:
                del self._searched[key]
            for key in [key for key in settled if key not in sessions]:
                del settled[key]
            for key in [key for key in self._skip_logged if key not in sessions]:
                del self._skip_logged[key]
            unsettled.clear()
            keys = list(sessions)
        else:  # only the changed keys can have left or changed; the unsettled ones are looked at again
            for key in changed:
                if key not in sessions:
                    self._cancel(key)
                    self._searched.pop(key, None)
                    settled.pop(key, None)
                    unsettled.pop(key, None)
            keys = [*changed, *(key for key in unsettled if key not in changed)]
        for key in keys:
            session = sessions.get(key)
            if session is None:
                unsettled.pop(key, None)
                continue
            if settled.get(key) is session or key.provider not in KINDS:
                continue
            self._look_at(key, session)
            if self._is_settled(key, session):
                settled[key] = session
                unsettled.pop(key, None)
            else:
                unsettled[key] = None

    def _unsettle(self, key: SessionKey) -> None:
        """Its monitor or search result changed: the next state change looks at the session again."""
        if self._settled.pop(key, None) is not None:
            self._unsettled[key] = None

    def _look_at(self, key: SessionKey, session: Session) -> None:
        path = self._path_of(session)
        if not path and key not in self._searched and key.provider in SEARCHED_PROVIDERS:
            self._search(session)
            return
        monitor = self._monitors.get(key)
        if monitor is not None and (not path or Path(path) != monitor.path):
            self._cancel(key)
            monitor = None
        if monitor is None:
            if path:
                self._start(session, Path(path))
        elif monitor.seen != (session.last_activity_at, session.soft_lock_reason):
            monitor.seen = (session.last_activity_at, session.soft_lock_reason)
            monitor.baseline = _stat(monitor.path)  # growth so far belongs to that signal

    def _is_settled(self, key: SessionKey, session: Session) -> bool:
        """True when ``_look_at`` would do nothing for this session object again: it has no transcript path
        (whose folder could come or go), its search result is known and its monitor (if any) follows it."""
        if session.transcript_path or key.provider is AgentProvider.GITHUB_COPILOT or key not in self._searched:
            return False
        found, monitor = self._searched[key], self._monitors.get(key)
        if monitor is None:
            return found is None
        return found is not None and monitor.path == found and \
            monitor.seen == (session.last_activity_at, session.soft_lock_reason)

    def _path_of(self, session: Session) -> str:
        given = session.transcript_path
        if session.key.provider is AgentProvider.GITHUB_COPILOT:
            return given or copilot_fallback(session.key.session_identifier)
        if given and os.path.isabs(given) and os.path.isdir(os.path.dirname(given)):
            return given
        found = self._searched.get(session.key)
        return str(found) if found is not None else ""

    def _search(self, session: Session) -> None:
        """Queues the bounded fallback search (off the gate); its result starts the monitor (gate held).
        One task works through the queue and then waits for more (started with the first search, it stays),
        so neither a crowd of starts nor a start after a quiet spell costs a task."""
        runtime, key = self._runtime, session.key
        if not runtime.running:
            return
        self._searched[key] = None
        self._search_queue[key] = session.transcript_path
        if self._search_scope is None:
            self._search_scope = runtime.spawn(self._run_searches)
        elif self._search_wake is not None:
            self._search_wake.set()

    async def _run_searches(self, scope: anyio.CancelScope) -> None:
        runtime, queue = self._runtime, self._search_queue
        try:
            while True:
                if not queue:
                    self._search_wake = wake = anyio.Event()
                    await wake.wait()
                    self._search_wake = None
                    continue
                key = next(iter(queue))
                given = queue.pop(key)
                if key not in self._searched:  # the session ended while it waited
                    continue
                root = search_root(key.provider)
                if root is None:  # not a searched provider (only those are queued)
                    continue
                try:
                    # a worker thread with real backends (inline with the fake platform: tests stay deterministic)
                    result = await runtime.call_platform(find_transcript, root, key.session_identifier)
                except Exception as error:  # one failed search never holds up the others in the queue
                    runtime.exception_log.record("transcript-search-failed", error)
                    continue
                async with runtime.gate:
                    self._found(key, given, result)
        finally:
            self._search_scope = self._search_wake = None

    def _found(self, key: SessionKey, given: str, result: SearchResult) -> None:
        """A search's result (gate held): the monitor starts, or the log says why not."""
        runtime = self._runtime
        current = runtime.state.sessions.get(key)
        if current is None or key not in self._searched or key in self._monitors:
            return
        kind = KINDS[key.provider]
        stale = f" (the given path {given} is gone)" if given else ""
        if result.path is None:
            runtime.log(f"{kind.prefix}-transcript-monitor-skipped", "start",
                        f"Skipped transcript monitoring for {key}{stale}: {result.message}.", session=current)
            return
        self._searched[key] = result.path
        self._unsettle(key)
        runtime.log(f"{kind.prefix}-transcript-found", "start",
                    f"Found the transcript of {key} by its session id{stale}: {result.path}.", session=current)
        self._start(current, result.path)
        if self._is_settled(key, current):  # its monitor follows it now: the next change need not look again
            self._settled[key] = current
            self._unsettled.pop(key, None)

    def _cancel(self, key: SessionKey) -> None:
        monitor = self._monitors.pop(key, None)
        if key not in self._runtime.state.sessions:
            self._skip_logged.pop(key, None)
        self._unsettle(key)
        if monitor is not None:
            monitor.stop_watch.set()
            self.watcher.discard(monitor.path, monitor.changed)
            if monitor.scope is not None:
                monitor.scope.cancel()

    def _start(self, session: Session, path: Path) -> None:
        runtime = self._runtime
        if not runtime.running:
            return
        kind = KINDS[session.key.provider]
        if not path.is_absolute() or not path.parent.is_dir():
            if self._skip_logged.get(session.key) != path:  # once per path, not once per registry change
                self._skip_logged[session.key] = path
                runtime.log(f"{kind.prefix}-transcript-monitor-skipped", "start",
                            f"Skipped transcript monitoring for {session.key}: the folder of {path} does not exist.",
                            session=session)
            return
        self._skip_logged.pop(session.key, None)
        monitor = _Monitor(session.key, path, _stat(path), (session.last_activity_at, session.soft_lock_reason))
        self._monitors[session.key] = monitor
        self._unsettle(session.key)
        runtime.log(f"{kind.prefix}-transcript-monitor-configured", "start",
                    f"Monitoring the transcript {path} of {session.key}.", session=session)
        if self.use_watchfiles:
            self.watcher.add(path, monitor.changed)
            if self._watcher_scope is None:
                self._watcher_scope = runtime.spawn(lambda scope: self.watcher.run())
        monitor.scope = runtime.spawn(lambda scope: self._run(monitor))

    async def _run(self, monitor: _Monitor) -> None:
        poll = max(self.poll_seconds, WATCHED_POLL_SECONDS) if self.use_watchfiles else self.poll_seconds
        while self._monitors.get(monitor.key) is monitor:
            with anyio.move_on_after(poll):
                await monitor.changed.wait()
            fresh = anyio.Event()
            self.watcher.replace_event(monitor.path, monitor.changed, fresh)
            monitor.changed = fresh
            await self.check(monitor.key)

    async def check(self, key: SessionKey) -> TranscriptSignal | None:
        """Looks at the transcript once; returns the signal it sent, if any."""
        runtime = self._runtime
        monitor = self._monitors.get(key)
        if monitor is None:
            return None
        current = _stat(monitor.path)
        base = monitor.baseline or (0, 0)
        if current is None:
            return None
        if current[0] < base[0]:
            monitor.baseline = current
            return None
        if current[0] == base[0] and current[1] <= base[1]:
            return None
        monitor.baseline = current
        try:
            records = await runtime.call_platform(read_tail, monitor.path)
        except OSError:
            return None
        signal = detect(key.provider, records)

        def still_monitored() -> bool:
            if self._monitors.get(key) is not monitor or key not in runtime.state.sessions:
                return False
            if signal.kind == "stop":  # after a stop signal the session ignores further changes; popped
                del self._monitors[key]  # first so the stop's state change does not cancel this very task
                self._unsettle(key)
                monitor.stop_watch.set()
                self.watcher.discard(monitor.path, monitor.changed)
            return True

        event: policy.Event
        if signal.kind == "stop":
            # the turn ends (Esc, an abort): deferred while its subagents/tasks run, then followed on
            event = policy.Stop(key, end_reason=signal.reason, command=signal.reason, turn_end=True)
        elif signal.kind == "soft-lock":
            event = policy.MarkSoftLocked(key, signal.reason)
        else:
            event = policy.MarkActive(key, signal.reason)
        outcome = await runtime.run_event(event, guard=still_monitored)
        if outcome is None:
            return None
        if signal.kind == "soft-lock" and outcome.message.startswith("Marked"):
            runtime.log("codex-transcript-softlock-recorded", "codex-transcript-request-user-input-pending",
                        outcome.message, key=key)
        return signal
