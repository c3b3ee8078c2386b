"""The session journal on disk: JSON lines, user-only, never followed through a symlink.

Protection never depends on this file. Reading it never blocks (O_NONBLOCK: a FIFO answers at once),
never follows a symlink (O_NOFOLLOW), and takes only a regular file of bounded size; anything else
(a directory, a FIFO, a symlink, a huge or unreadable file, lines that are not records) is set aside
(renamed next to it) and reported, and the runtime starts with what could be read. A torn last line
(a crash in the middle of a write) is ignored silently. Writes append whole batches with one
``write`` each (O_APPEND, no fsync); compaction writes a snapshot to a temporary file and renames it.

Records (one JSON object per line, ``"v": 1``):

* ``{"v":1,"op":"put","session":{...}}`` a session as it is now (``session_to_json``);
* ``{"v":1,"op":"del","key":[provider, provider_name, session_identifier]}`` a session left;
* ``{"v":1,"op":"ids","ids":[...]}`` request ids already applied (replay-safe events);
* ``{"v":1,"op":"suspend","suspend":{...}|null}`` the pending suspend (or none any more); ``"requested": true``
  once the platform is about to be asked (a restarted runtime never asks again).

Bounded (issue 39 item 3): records are UTF-8 (not ``\\u``-escaped: a non-ASCII character costs 2-4 bytes,
not 6-12); a working directory is cut at :data:`MAX_JOURNAL_PATH_BYTES`; a transcript path longer than
that (no system call could open it) is not journaled - the runtime finds the transcript again by session
id; a session record is at most :data:`MAX_SESSION_RECORD_BYTES` (the oldest tools in flight are left out
first). With at most 1,000 sessions a snapshot stays below 18 MiB, and the component compacts before the
file would pass :data:`JOURNAL_BUDGET_BYTES`, well below the :data:`MAX_JOURNAL_BYTES` set-aside bound.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import json
import os
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..fileio import set_aside
from ..shared.log_text import escape_json_text
from .sessions import Session, SessionKey, parse_provider

__all__ = [
    "JOURNAL_BUDGET_BYTES",
    "MAX_JOURNAL_BYTES",
    "MAX_JOURNAL_PATH_BYTES",
    "MAX_SESSION_RECORD_BYTES",
    "MAX_RECOVERABLE_BYTES",
    "JournalRead",
    "JournalUnusable",
    "append_to_journal",
    "key_from_json",
    "key_to_json",
    "read_journal",
    "record_line",
    "session_from_json",
    "session_line",
    "session_to_json",
    "set_aside",
    "write_snapshot",
]

MAX_JOURNAL_BYTES = 32 * 1024 * 1024  # far beyond any real registry (compaction keeps it small)
MAX_RECOVERABLE_BYTES = 16 * MAX_JOURNAL_BYTES  # a larger one is still read (then set aside); past this, not
JOURNAL_BUDGET_BYTES = 24 * 1024 * 1024  # the component compacts before the file would pass this
MAX_JOURNAL_PATH_BYTES = 4096  # PATH_MAX: a working directory is cut here, a longer transcript path dropped
MAX_SESSION_RECORD_BYTES = 18 * 1024  # one session's record (keys, reasons, paths, tools), its line included
_KEPT_IDS = 4096  # request ids kept from one read (the runtime keeps fewer)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class JournalUnusable(OSError):
    """The journal path holds something that is not a journal (directory, FIFO, symlink, ...)."""


def _utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat()


def _time(value: Any, *, optional: bool = False) -> datetime | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError("not a time")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("time without a zone")
    return moment.astimezone(timezone.utc)


def key_to_json(key: SessionKey) -> list[str]:
    return [key.provider.value, key.provider_name, key.session_identifier]


def key_from_json(value: Any) -> SessionKey:
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(part, str) for part in value)):
        raise ValueError("not a session key")
    provider = parse_provider(value[0])
    if provider is None or not value[2].strip():
        raise ValueError("not a session key")
    return SessionKey.create(provider, value[2], value[1])


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, at a character boundary."""
    if len(text) <= limit // 4 or (len(text) <= limit and text.isascii()):
        return text
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def _fits(text: str, limit: int) -> bool:
    return len(text) <= limit // 4 or len(text.encode("utf-8", "surrogatepass")) <= limit


def session_to_json(session: Session) -> dict[str, Any]:
    transcript = session.transcript_path
    return {
        "key": key_to_json(session.key),
        "started_at": _utc(session.started_at),
        "last_activity_at": _utc(session.last_activity_at),
        "soft_lock_reason": session.soft_lock_reason,
        "soft_locked_at": _utc(session.soft_locked_at),
        "watched_process_identifier": session.watched_process_identifier,
        "working_directory": _cut(session.working_directory, MAX_JOURNAL_PATH_BYTES),
        "transcript_path": transcript if _fits(transcript, MAX_JOURNAL_PATH_BYTES) else "",
        "pending_provider_work": session.pending_provider_work,
        **session.journal_extras(),
    }


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps builds one per call


def record_line(record: dict[str, Any]) -> bytes:
    """One journal line: ``{"v":1, ...}`` as UTF-8 JSON (a lone surrogate as its ``\\u`` escape)."""
    return (escape_json_text(_ENCODER.encode({"v": 1, **record})) + "\n").encode("utf-8", "backslashreplace")


def session_line(session: Session) -> bytes:
    """The ``put`` line of a session, at most ``MAX_SESSION_RECORD_BYTES``: the oldest tools in flight are
    left out first (a tool whose end arrives after a restart is then unknown: ignored), then the oldest
    background work, then the texts
    that are not paths are cut."""
    record = session_to_json(session)
    line = record_line({"op": "put", "session": record})
    if len(line) <= MAX_SESSION_RECORD_BYTES:
        return line
    for name in ("tools_in_flight", "background_work"):  # background work: after the tools
        items = list(record.get(name, []))
        while items and len(line) > MAX_SESSION_RECORD_BYTES:
            del items[: max(1, len(items) // 4)]
            record[name] = items
            line = record_line({"op": "put", "session": record})
    if len(line) > MAX_SESSION_RECORD_BYTES:  # not reached within the request bounds; kept as a guarantee
        for name in ("soft_lock_reason", "turn_id", "working_directory"):
            if isinstance(record.get(name), str):
                record[name] = _cut(record[name], 256)
        line = record_line({"op": "put", "session": record})
    return line


def _text(value: Any, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError("not text")
    return value


def session_from_json(value: Any) -> Session:
    """A session from its record; ``ValueError`` for anything that is not exactly one."""
    if not isinstance(value, dict):
        raise ValueError("not a session")
    pid = value.get("watched_process_identifier")
    if pid is not None and (type(pid) is not int or not 0 < pid <= 2**31 - 1):
        raise ValueError("not a process identifier")
    pending = value.get("pending_provider_work", False)
    if type(pending) is not bool:
        raise ValueError("not a flag")
    started = _time(value.get("started_at"))
    activity = _time(value.get("last_activity_at"))
    assert started is not None and activity is not None
    session = Session(
        key=key_from_json(value.get("key")), started_at=started, last_activity_at=activity,
        soft_lock_reason=_text(value.get("soft_lock_reason"), optional=True),
        soft_locked_at=_time(value.get("soft_locked_at"), optional=True),
        watched_process_identifier=pid, working_directory=_text(value.get("working_directory", "")),
        transcript_path=_text(value.get("transcript_path", "")), pending_provider_work=pending,
    )
    return session.with_journal_extras(value)


@dataclass
class JournalRead:
    """What a journal held: the records that could be read and what was wrong with the file."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None  # set: the file was set aside (or could not be)
    set_aside_to: Path | None = None
    torn_tail: bool = False


def _open_regular(path: Path, flags: int) -> int:
    """A descriptor of ``path`` only when it is a regular file; ``JournalUnusable`` otherwise."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW on a symlink (EMLINK: FreeBSD)
            raise JournalUnusable(error.errno, "the journal path is a symlink") from error
        if error.errno == errno.EISDIR:
            raise JournalUnusable(error.errno, "the journal path is a directory") from error
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise JournalUnusable(errno.EINVAL, "the journal path is not a regular file")
    return fd


def read_journal(path: Path) -> JournalRead:
    """Reads the journal; never raises. A file that cannot be used is set aside (``problem``); one past
    ``MAX_JOURNAL_BYTES`` (up to ``MAX_RECOVERABLE_BYTES``) or with damaged lines is set aside too, after
    every readable record was kept (issue 39: an oversized journal no longer drops every session)."""
    result = JournalRead()
    try:
        fd = _open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return result
    except OSError as error:
        return _give_up(path, result, f"the journal cannot be opened ({error.strerror or error})")
    fold = _Fold()
    try:
        size = os.fstat(fd).st_size
        if size > MAX_RECOVERABLE_BYTES:
            return _give_up(path, result, f"the journal is larger than {MAX_RECOVERABLE_BYTES} bytes")
        oversized = size > MAX_JOURNAL_BYTES
        pending, read = b"", 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            read += len(chunk)
            if read > size + MAX_JOURNAL_BYTES:  # grew while being read
                return _give_up(path, result, "the journal grows while it is read")
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                fold.add(line)
    except OSError as error:
        return _give_up(path, result, f"the journal cannot be read ({error.strerror or error})")
    finally:
        os.close(fd)
    result.torn_tail = bool(pending.strip())  # a torn last line (a crash in the middle of a write)
    result.records = fold.records()
    if oversized:
        return _give_up(path, result, f"the journal is larger than {MAX_JOURNAL_BYTES} bytes"
                        + (f" and {fold.bad} line(s) are not records" if fold.bad else ""))
    if fold.bad:
        return _give_up(path, result, f"{fold.bad} journal line(s) are not records")
    return result


class _Fold:
    """The records read, only the latest per session and per other kind kept (the replay folds them so:
    memory stays the registry's size whatever the file's); request ids in order, the newest kept."""

    def __init__(self) -> None:
        self._latest: dict[str, dict[str, Any]] = {}
        self._ids: collections.deque[dict[str, Any]] = collections.deque(maxlen=_KEPT_IDS)
        self.bad = 0

    def add(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            record = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError, RecursionError):
            self.bad += 1
            return
        if not isinstance(record, dict) or record.get("v") != 1 or not isinstance(record.get("op"), str):
            self.bad += 1
            return
        op = record["op"]
        if op in ("id", "ids"):
            self._ids.append(record)
            return
        if op in ("put", "del"):
            key = record.get("session") if op == "put" else record
            key = key.get("key") if isinstance(key, dict) else None
            slot = "session:" + json.dumps(key) if isinstance(key, list) else f"bad:{len(self._latest)}"
        else:
            slot = "kind:" + op
        self._latest.pop(slot, None)  # re-inserted: the dict keeps the order of the latest records
        self._latest[slot] = record

    def records(self) -> list[dict[str, Any]]:
        return [*self._latest.values(), *self._ids]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _give_up(path: Path, result: JournalRead, problem: str) -> JournalRead:
    result.problem = problem
    result.set_aside_to = set_aside(path)
    return result


def append_to_journal(path: Path, data: bytes) -> None:
    """Appends ``data`` (whole lines) with one write; raises ``OSError`` (ENOSPC, ...) to the caller."""
    fd = _open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


def write_snapshot(path: Path, data: bytes) -> None:
    """Replaces the journal with ``data``: a new 0600 file renamed over it (readers never see half)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)
        if os.path.isdir(path) and not os.path.islink(path):
            raise JournalUnusable(errno.EISDIR, "the journal path is a directory")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
