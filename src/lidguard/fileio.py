"""Atomic, user-only file writes (temp + fsync + rename), bounded reads and JSON-lines helpers.

Stdlib only and cheap to import (the hook path reads settings.json through ``read_json_object``).
Every file lidguard reads is opened non-blocking, must be a regular file and is read up to a bound:
a FIFO, a device or a directory at a file's name is refused at once, never waited on. Appended
logs and journals never follow a symlink (``O_NOFOLLOW``); ``write_atomic`` replaces a symlink
itself unless ``follow_symlinks`` asks to write through it (a user's symlinked settings.json).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
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
    "write_atomic",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Logs are read from their tail: a huge log costs one bounded read, never the whole file.
LOG_READ_LIMIT_BYTES = 8 * 1024 * 1024


class UnusableFileError(OSError):
    """A file exists but cannot be used; ``reason`` is a short phrase ("it is a directory")."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "it is a directory"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO (named pipe), not a regular file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a regular file"
    return "it is not a regular file"


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "it is a symbolic link (not followed)"
    if error.errno == errno.EISDIR:
        return "it is a directory"
    if error.errno == errno.ENXIO:
        return "it is a FIFO (named pipe) or a device, not a regular file"
    return str(error.strerror or error).rstrip(".")


def _open_regular(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` non-blocking; anything but a regular file raises UnusableFileError (fd closed)."""
    try:
        fd = os.open(path, flags | _NONBLOCK | _CLOEXEC, mode)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise UnusableFileError(path, _reason(error)) from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnusableFileError(path, _kind(info.st_mode))
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_file(path: Path, *, limit: int, follow_symlinks: bool = True, tail: bool = False) -> bytes:
    """At most ``limit`` bytes of a regular file; FileNotFoundError when missing, UnusableFileError
    for a directory, FIFO, device, unreadable or (``follow_symlinks=False``) symlinked file, and one
    larger than ``limit`` (``tail=True``: its last ``limit`` bytes instead)."""
    fd = _open_regular(path, os.O_RDONLY | (0 if follow_symlinks else _NOFOLLOW))
    try:
        if tail:
            size = os.fstat(fd).st_size
            if size > limit:
                os.lseek(fd, size - limit, os.SEEK_SET)
        chunks: list[bytes] = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        raise UnusableFileError(path, _reason(error)) from error
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if tail:
            return data[-limit:]
        raise UnusableFileError(path, f"it is larger than {limit} bytes")
    return data


class NumberText(str):
    """A JSON number Python cannot hold as it is (``NaN``, ``Infinity``, ``1e400``, a 5,000-digit
    integer), kept as its text: it stays plain JSON on the wire and a setting reads it as "not an
    integer", never as a float that breaks every JSON encoder downstream."""


def _parse_float(text: str) -> float | NumberText:
    value = float(text)
    return value if math.isfinite(value) else NumberText(text)


def _parse_int(text: str) -> int | NumberText:
    try:
        return int(text)
    except ValueError:  # more digits than int() accepts from text
        return NumberText(text)


def loads_json_leniently(text: str) -> Any:
    """``json.loads`` where every non-finite or oversized number becomes a ``NumberText``."""
    return json.loads(text, parse_constant=NumberText, parse_float=_parse_float, parse_int=_parse_int)


def read_json_object(path: Path, *, limit: int, follow_symlinks: bool = True) -> dict[str, Any] | None:
    """The JSON object a small file holds (None when it is missing); UnusableFileError otherwise."""
    try:
        data = read_regular_file(path, limit=limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        return None
    try:
        value = loads_json_leniently(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise UnusableFileError(path, "it is not valid UTF-8") from error
    except RecursionError as error:
        raise UnusableFileError(path, "it is not valid JSON (nested too deeply)") from error
    except ValueError as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UnusableFileError(path, f"it is not valid JSON ({detail})") from error
    if not isinstance(value, dict):
        raise UnusableFileError(path, "it does not hold a JSON object")
    return value


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
    for line in text.splitlines():
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


def json_line(entry: dict[str, Any]) -> bytes:
    """One compact JSON line as UTF-8; text that UTF-8 cannot hold (a lone surrogate) is escaped."""
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def open_append(path: Path) -> int:
    """A descriptor that appends to ``path`` (created 0600, folder 0700), not inherited by children.

    Never follows a symlink and never waits: a symlink, FIFO or directory at ``path`` raises
    UnusableFileError (an ``OSError``; callers that must not raise count it as a lost line)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW
    try:
        return _open_regular(path, flags)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return _open_regular(path, flags)


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


def append_problem(path: Path) -> str | None:
    """Why ``open_append`` would refuse ``path`` (a symlink, a FIFO, a directory), None when it would not."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # missing (created on the first line) or an unreadable folder (reported elsewhere)
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link (logs never follow one)"
    if not stat.S_ISREG(info.st_mode):
        return _kind(info.st_mode)
    return None
