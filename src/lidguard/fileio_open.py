"""Opening files without waiting, following or reading without a bound (stdlib, the hook path).

Every file lidguard reads is opened non-blocking, must be a regular file and is read up to a bound:
a FIFO, a device or a directory at a file's name is refused at once (``UnusableFileError``), never
waited on. Appended logs and journals never follow a symlink (``O_NOFOLLOW``). JSON read from a file
keeps ``NaN``, ``Infinity`` and numbers Python cannot hold as their text (``NumberText``). Small on
purpose: hooks import it on every run; ``fileio`` re-exports it next to the writers.
"""

from __future__ import annotations

import errno
import json
import os
import stat

TYPE_CHECKING = False  # typing costs the hook path ~2 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "LOG_READ_LIMIT_BYTES",
    "NumberText",
    "UnusableFileError",
    "append_problem",
    "loads_json_leniently",
    "open_append",
    "read_json_object",
    "read_regular_file",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Logs are read from their tail: a huge log costs one bounded read, never the whole file.
LOG_READ_LIMIT_BYTES = 8 * 1024 * 1024


class UnusableFileError(OSError):
    """A file exists but cannot be used; ``reason`` is a short phrase ("it is a directory")."""

    def __init__(self, path: str | Path, reason: str) -> None:
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


def _open_regular(path: str | Path, flags: int, mode: int = 0o600) -> int:
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


def read_regular_file(path: str | Path, *, limit: int, follow_symlinks: bool = True, tail: bool = False) -> bytes:
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
    return value if value - value == 0.0 else NumberText(text)  # inf - inf and nan - nan are nan


def _parse_int(text: str) -> int | NumberText:
    try:
        return int(text)
    except ValueError:  # more digits than int() accepts from text
        return NumberText(text)


def loads_json_leniently(text: str) -> Any:
    """``json.loads`` where every non-finite or oversized number becomes a ``NumberText``."""
    return json.loads(text, parse_constant=NumberText, parse_float=_parse_float, parse_int=_parse_int)


def read_json_object(path: str | Path, *, limit: int, follow_symlinks: bool = True) -> dict[str, Any] | None:
    """The JSON object a small file holds (None when it is missing); UnusableFileError otherwise."""
    try:
        data = read_regular_file(path, limit=limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        return None
    try:
        # One leading byte-order mark allowed (what "utf-8-sig" does, without importing that codec).
        value = loads_json_leniently((data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8"))
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


def open_append(path: str | Path) -> int:
    """A descriptor that appends to ``path`` (created 0600, folder 0700), not inherited by children.

    Never follows a symlink and never waits: a symlink, FIFO or directory at ``path`` raises
    UnusableFileError (an ``OSError``; callers that must not raise count it as a lost line)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW
    try:
        return _open_regular(path, flags)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", 0o700, exist_ok=True)
        return _open_regular(path, flags)


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
