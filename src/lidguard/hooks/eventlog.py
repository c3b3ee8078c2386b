"""Hook event logs: ``<provider>-hook-events.log`` in the data folder (REFERENCE 3.3; stdlib only).

One text line per record::

    <UTC time> kind=<received|runtime-result|message> event=<name> session=<id> workingDirectory=<cwd> <k=v ...>

Empty values are written ``<empty>``, every control and separator character is escaped
(``shared.log_text.escape_text``: a payload can neither end a record - U+2028, NEL, VT, FF, FS/GS/RS
included - nor put ESC/BEL/C1 bytes into the file) and ``=`` in a value is ``\\x3d`` (a value never
looks like a ``key=``), every value is bounded; readers split at ``\n`` only. A line is appended
with one ``write`` on an ``O_APPEND`` descriptor (concurrent hooks never interleave), file
0600. Unlike the original tool the file is bounded: once it grows past :data:`TRIM_AT_BYTES` it is
rewritten atomically with its latest :data:`KEEP_LINES` lines (the session log's keep-and-trim rule,
by size because a hook process cannot afford to count lines). Writing never raises.
"""

from __future__ import annotations

import os
import time

from ..shared.log_text import escape_text

TYPE_CHECKING = False  # the hook path imports neither typing nor pathlib (~5 ms)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "KEEP_LINES",
    "MAX_VALUE_CHARS",
    "TRIM_AT_BYTES",
    "HookEventLog",
    "format_line",
    "hook_log_file",
    "hook_log_file_beside_refused_runtime",
    "hook_log_path",
    "latest_lines",
]

KEEP_LINES = 1000
TRIM_AT_BYTES = 1024 * 1024
MAX_VALUE_CHARS = 500
EMPTY = "<empty>"


def hook_log_path(data_dir: Path, provider: str) -> Path:
    return data_dir / f"{provider}-hook-events.log"


def hook_log_file(data_dir: str, provider: str) -> str:
    """``hook_log_path`` as text, for the hook process (no ``pathlib``)."""
    return os.path.join(data_dir, f"{provider}-hook-events.log")


def hook_log_file_beside_refused_runtime(provider: str) -> str | None:
    """The hook log in the data folder when only the runtime (socket) folder was refused (issue 39.7: the
    hook says why it protects nothing), else None (the data folder itself is not safe: no log at all)."""
    try:
        from ..platform.paths import checked_data_dir

        return hook_log_file(checked_data_dir(), provider)
    except Exception:  # noqa: BLE001
        return None


def _value(value: str) -> str:
    if not value:
        return EMPTY
    if len(value) > MAX_VALUE_CHARS:
        value = value[:MAX_VALUE_CHARS] + "..."
    if "=" in value:  # every "=" of a line then ends a key: a value cannot pose as a later key
        value = value.replace("=", "\\x3d")
    return escape_text(value)


def _utc_now() -> str:
    now = time.time()
    whole = int(now)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((now - whole) * 1e6):06d}Z"


def format_line(kind: str, event: str, session: str, working_directory: str,
                details: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (), *, when: str | None = None) -> str:
    parts = [when or _utc_now(), f"kind={kind}", f"event={_value(event)}", f"session={_value(session)}",
             f"workingDirectory={_value(working_directory)}"]
    parts += [f"{key}={_value(value)}" for key, value in details]
    return " ".join(parts) + "\n"


class HookEventLog:
    """One provider's hook event log; ``event``/``session``/``folder`` are set once they are known."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = path
        self.event = ""
        self.session = ""
        self.folder = ""
        self.failures = 0

    def write(self, kind: str, details: list[tuple[str, str]] | tuple[tuple[str, str], ...] = ()) -> None:
        if self.path is None:
            return
        try:
            from .. import switches

            if switches.fake_platform_reason() is not None:  # the fake platform protects nothing: say so
                details = (("platform", "fake"), *details)
            line = format_line(kind, self.event, self.session, self.folder, details)
            self._append(line.encode("utf-8", "backslashreplace"))
        except Exception:  # noqa: BLE001 - a log line is never worth a failed hook
            self.failures += 1

    def message(self, text: str) -> None:
        self.write("message", (("message", text),))

    def _append(self, data: bytes) -> None:
        assert self.path is not None
        from ..fileio_open import open_append  # never through a symlink, never waiting on a FIFO

        fd = open_append(self.path)
        try:
            os.write(fd, data)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > TRIM_AT_BYTES:
            self._trim()

    def _trim(self) -> None:
        from pathlib import Path

        from ..fileio import write_atomic  # tempfile: only when the file is trimmed
        from ..fileio_open import read_regular_file  # a FIFO swapped in meanwhile never blocks the hook

        assert self.path is not None
        tail = read_regular_file(self.path, limit=TRIM_AT_BYTES // 2, follow_symlinks=False, tail=True)
        lines = [line for line in tail.split(b"\n")[1:] if line.strip()]  # the first may be cut
        write_atomic(Path(self.path), b"".join(line + b"\n" for line in lines[-KEEP_LINES:]))


def latest_lines(path: str | Path, count: int) -> list[str]:
    """The last ``count`` lines of a hook event log ([] when it does not exist)."""
    from ..fileio_open import UnusableFileError, read_regular_file  # a FIFO or symlink here never hangs or leads away

    try:
        data = read_regular_file(path, limit=TRIM_AT_BYTES * 2, follow_symlinks=False, tail=True)
    except (FileNotFoundError, UnusableFileError):
        return []
    # At "\n" only: str.splitlines() also splits at U+2028, NEL, VT, FF, FS/GS/RS - a forged record each.
    lines = [line for line in data.decode("utf-8", "replace").split("\n") if line.strip()]
    return lines[-count:] if count > 0 else []
