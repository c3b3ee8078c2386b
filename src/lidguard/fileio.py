"""Atomic, user-only file writes (temp + fsync + rename) and JSON-lines helpers (append, trim, read)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "AppendOnlyFile",
    "append_line",
    "count_lines",
    "ensure_private_dir",
    "json_line",
    "keep_latest_lines",
    "open_append",
    "read_json_lines",
    "write_atomic",
]


def ensure_private_dir(path: Path) -> Path:
    """Creates ``path`` (and parents) with mode 0700 for the last component."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    return path


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o600, durable: bool = True) -> None:
    """Writes ``data`` so that readers see the old or the new file, never a torn one.

    ``durable`` (the default) also flushes the file and its folder to the disk before returning, so
    the new content survives a power loss; ``durable=False`` skips the two fsyncs (each can take tens
    of milliseconds on a busy disk) for files that need only survive the process, not the machine."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode) if hasattr(os, "fchmod") else None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
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
    """Every well-formed JSON object line of ``path``; a missing file is empty; bad lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            entries.append(value)
    return entries


def json_line(entry: dict[str, Any]) -> bytes:
    """One compact JSON line as UTF-8; text that UTF-8 cannot hold (a lone surrogate) is escaped."""
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def open_append(path: Path) -> int:
    """A descriptor that appends to ``path`` (created 0600, folder 0700), not inherited by children."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(path, flags, 0o600)


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
                info = os.stat(self.path)
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
    try:
        with open(path, "rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
    except FileNotFoundError:
        return 0


def keep_latest_lines(path: Path, keep: int) -> int:
    """Rewrites ``path`` atomically with its latest ``keep`` non-empty lines; returns how many remain.

    Not flushed to the disk (the lines it keeps were appended without a flush either)."""
    try:
        lines = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    except FileNotFoundError:
        return 0
    lines = lines[-keep:] if keep > 0 else []
    write_atomic(path, b"".join(line + b"\n" for line in lines), durable=False)
    return len(lines)
