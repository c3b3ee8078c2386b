"""Atomic, user-only file writes (temp + fsync + rename) and small JSON-lines helpers."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["append_json_line_keep_latest", "ensure_private_dir", "read_json_lines", "write_atomic"]


def ensure_private_dir(path: Path) -> Path:
    """Creates ``path`` (and parents) with mode 0700 for the last component."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    return path


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    """Writes ``data`` so that readers see the old or the new file, never a torn one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode) if hasattr(os, "fchmod") else None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """Every well-formed JSON object line of ``path``; a missing file is empty; bad lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            entries.append(value)
    return entries


def append_json_line_keep_latest(path: Path, entry: dict[str, Any], *, keep: int) -> None:
    """Appends one JSON line and keeps only the latest ``keep`` lines, rewriting atomically."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    lines = [line for line in lines if line.strip()]
    lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    if keep > 0:
        lines = lines[-keep:]
    write_atomic(path, "\n".join(lines) + "\n")
