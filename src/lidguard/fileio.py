"""Atomic, user-only file writes (temp + fsync + rename), bounded reads and JSON-lines helpers.

Stdlib only. The readers and the appending open live in ``fileio_open`` (small: the hook path
imports it) and are re-exported here: every file lidguard reads is opened non-blocking, must be a
regular file and is read up to a bound; appended logs and journals never follow a symlink.
``write_atomic`` replaces a symlink itself unless ``follow_symlinks`` asks to write through it (a
user's symlinked settings.json).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from .fileio_open import (
    _NOFOLLOW,
    LOG_READ_LIMIT_BYTES,
    NumberText,
    UnusableFileError,
    _open_regular,
    append_problem,
    loads_json_leniently,
    open_append,
    read_json_object,
    read_regular_file,
)
from .shared.log_text import escape_json_text

__all__ = [
    "LOG_READ_LIMIT_BYTES",
    "AppendOnlyFile",
    "NumberText",
    "UnusableFileError",
    "append_line",
    "append_problem",
    "count_lines",
    "ensure_private_dir",
    "json_line",
    "keep_latest_lines",
    "loads_json_leniently",
    "open_append",
    "read_json_lines",
    "read_json_object",
    "read_regular_file",
    "set_aside",
    "write_atomic",
]

def ensure_private_dir(path: Path) -> Path:
    """Creates ``path`` (and parents) with mode 0700 for the last component."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    return path


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o600, durable: bool = True,
                 follow_symlinks: bool = False) -> None:
    """Writes ``data`` so that readers see the old or the new file, never a torn one.

    ``durable`` (the default) also flushes the file and its folder to the disk before returning, so
    the new content survives a power loss; ``durable=False`` skips the two fsyncs (each can take tens
    of milliseconds on a busy disk) for files that need only survive the process, not the machine.
    A symlink at ``path`` is replaced by the new file, unless ``follow_symlinks``: then the file it
    points to is replaced atomically (temp file next to the target) and the link stays."""
    import tempfile  # not free to import: only writers pay for it

    if isinstance(data, str):
        data = data.encode("utf-8")
    if follow_symlinks and os.path.islink(path):
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, mode) if hasattr(os, "fchmod") else None
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    if durable and hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every well-formed JSON object line of ``path`` (its last ``LOG_READ_LIMIT_BYTES``); a missing or
    unusable file (a symlink, a FIFO, a directory) is empty; bad lines are skipped."""
    try:
        data = read_regular_file(path, limit=LOG_READ_LIMIT_BYTES, follow_symlinks=False, tail=True)
    except (FileNotFoundError, UnusableFileError):
        return []
    text = data.decode("utf-8", errors="replace")
    entries = []
    for line in text.split("\n"):  # not splitlines(): U+2028, NEL, VT, FF, FS/GS/RS would cut a record
        line = line.strip()
        if not line:
            continue
        try:
            value = loads_json_leniently(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            entries.append(value)
    return entries


# json.dumps with these options builds a new encoder per call (~30 % of a log line's encoding)
_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def json_line(entry: dict[str, Any]) -> bytes:
    """One compact JSON line as UTF-8; control and separator characters (C1, U+2028, bidi: ``cat`` of a
    log runs none) and text that UTF-8 cannot hold (a lone surrogate) are ``\\u`` escapes."""
    text = escape_json_text(_LINE_ENCODER.encode(entry))
    return text.encode("utf-8", "backslashreplace") + b"\n"


def append_line(path: Path, line: bytes) -> None:
    """Appends ``line`` with one ``write`` (O_APPEND: concurrent appends never interleave), file 0600.

    No fsync: a log line lost in a power cut is acceptable; a log that slows every event is not.
    """
    fd = open_append(path)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


class AppendOnlyFile:
    """``append_line`` with the descriptor kept open between lines; reopened when the file was replaced
    or removed behind our back (one ``stat`` per line) and after ``close``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None

    def write(self, line: bytes) -> None:
        if self._fd is not None:
            try:
                info = os.lstat(self.path)
                if (info.st_dev, info.st_ino) != self._identity:
                    self.close()
            except OSError:
                self.close()
        if self._fd is None:
            self._fd = open_append(self.path)
            info = os.fstat(self._fd)
            self._identity = (info.st_dev, info.st_ino)
        try:
            os.write(self._fd, line)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        fd, self._fd, self._identity = self._fd, None, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def count_lines(path: Path) -> int:
    """Lines of a log (a log past ``LOG_READ_LIMIT_BYTES`` counts as "very many": it gets trimmed)."""
    try:
        fd = _open_regular(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return 0
    try:
        if os.fstat(fd).st_size > LOG_READ_LIMIT_BYTES:
            return 1 << 40
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
    finally:
        os.close(fd)


def keep_latest_lines(path: Path, keep: int) -> int:
    """Rewrites ``path`` atomically with its latest ``keep`` non-empty lines; returns how many remain.

    Reads at most the last ``LOG_READ_LIMIT_BYTES``. Not flushed to the disk (the lines it keeps
    were appended without a flush either)."""
    try:
        data = read_regular_file(path, limit=LOG_READ_LIMIT_BYTES, follow_symlinks=False, tail=True)
    except FileNotFoundError:
        return 0
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(data) >= LOG_READ_LIMIT_BYTES and lines:
        lines = lines[1:]  # the first line of a tail may be cut
    lines = lines[-keep:] if keep > 0 else []
    write_atomic(path, b"".join(line + b"\n" for line in lines), durable=False)
    return len(lines)


def set_aside(path: Path) -> Path | None:
    """Renames whatever is at ``path`` (never following it) to a free ``<name>.bad-N``; None if it can't."""
    for number in range(1, 100):
        target = path.with_name(f"{path.name}.bad-{number}")
        if os.path.lexists(target):
            continue
        try:
            os.rename(path, target)
        except OSError:
            return None
        return target
    return None
