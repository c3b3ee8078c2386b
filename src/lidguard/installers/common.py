"""What every hook installer shares: the hook command string, managed-command recognition, the Stop
hook timeout, backups, bounded reads of existing config files, and the result/status values.

Rules (REFERENCE 5, ASK_BEFORE_SLEEP.md): the command is ``lidguard <sub>`` when ``lidguard`` is on
PATH, else the quoted absolute path of this executable; a config file that existed is copied to
``<file>.<yyyyMMddHHmmss UTC>.bak`` before it changes; writes are atomic and 0600; a file that cannot
be parsed is refused with one line and never rewritten.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..fileio import write_atomic
from ..hooks import stop_timeout
from ..platform.host import host_os_name

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_SECONDS",
    "MAX_CONFIG_BYTES",
    "HookStatus",
    "InstallError",
    "InstallResult",
    "backup",
    "command_parts",
    "home",
    "hook_argv",
    "hook_command",
    "is_managed_command",
    "load_json_object",
    "read_config_text",
    "render_json",
    "stop_hook_timeout_seconds",
    "write_config",
]

DEFAULT_HOOK_TIMEOUT_SECONDS = 30
MAX_CONFIG_BYTES = 4 * 1024 * 1024
_DEFAULT_POST_STOP_DELAY = 10
_DEFAULT_FOLLOW_UP_DELAY = 120


class InstallError(Exception):
    """One readable line: a config file cannot be read, parsed or written."""


class HookStatus:
    INSTALLED = "Installed"
    NEEDS_UPDATE = "NeedsUpdate"
    NOT_INSTALLED = "NotInstalled"
    UNKNOWN = "Unknown"


@dataclass
class InstallResult:
    provider: str
    config: Path
    changed: bool
    message: str
    backups: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = [f"Provider: {self.provider}", f"Config: {self.config}"]
        lines += [f"Backup: {path}" for path in self.backups]
        lines += [f"Changed: {self.changed}", f"Message: {self.message}"]
        lines += [f"Note: {note}" for note in self.notes]
        return lines


def home() -> Path:
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def env_dir(name: str, default: Path) -> Path:
    """``$name`` when it names an absolute folder, else ``default``."""
    value = os.environ.get(name, "").strip()
    return Path(value) if value and os.path.isabs(value) else default


# -- the command ---------------------------------------------------------------------------------------
def _quote(text: str, shell: str) -> str:
    if shell == "powershell":
        return "& '" + text.replace("'", "''") + "'"
    return shlex.quote(text)


def _executable() -> list[str]:
    """This lidguard: the console script that runs now, else ``python -m lidguard``."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.stem.lower() == "lidguard" and argv0.is_file():
        return [str(argv0.absolute())]
    return [sys.executable, "-m", "lidguard"]


def hook_argv() -> list[str]:
    """The hook executable as argv words (for callers that spawn without a shell)."""
    return ["lidguard"] if shutil.which("lidguard") else _executable()


def hook_command(sub: str, *, shell: str = "sh") -> str:
    """``lidguard <sub>`` when ``lidguard`` is on PATH (PATHEXT-aware through shutil.which), else the
    quoted absolute executable and ``<sub>``; ``shell`` is ``sh`` or ``powershell``."""
    if shutil.which("lidguard"):
        return f"lidguard {sub}"
    head = _executable()
    quoted = [_quote(head[0], shell), *head[1:]]
    return " ".join([*quoted, sub])


def command_parts(command: str) -> list[str]:
    """The command's words (PowerShell's ``& '...'`` call form understood); [] when it cannot be split."""
    text = command.strip()
    if text.startswith("& "):
        text = text[2:].lstrip()
        if text.startswith("'"):
            end = text.find("'", 1)
            while end != -1 and text[end + 1:end + 2] == "'":
                end = text.find("'", end + 2)
            if end == -1:
                return []
            first = text[1:end].replace("''", "'")
            try:
                return [first, *shlex.split(text[end + 1:])]
            except ValueError:
                return []
    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return []


def _is_lidguard(word: str) -> bool:
    name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name in ("lidguard", "lidguard.exe", "lidguard.cmd", "lidguard.bat")


def is_managed_command(command: Any, sub: str, event: str | None = None) -> bool:
    """Ours: lidguard (a ``lidguard`` executable or ``python -m lidguard``) followed by exactly ``sub``
    (and ``--event <event>`` when given; ``"*"``: any event). Anything else is the user's and is never touched."""
    if not isinstance(command, str):
        return False
    words = command_parts(command)
    for index, word in enumerate(words):
        if _is_lidguard(word):
            rest = words[index + 1:]
            break
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "lidguard":
            rest = words[index + 2:]
            break
    else:
        return False
    if not rest or rest[0].lower() != sub:
        return False
    options = rest[1:]
    if event is None:
        return not options
    if len(options) == 2 and options[0].lower() == "--event":
        value: str | None = options[1]
    elif len(options) == 1 and options[0].lower().startswith("--event="):
        value = options[0][8:]
    else:
        value = None
    return value is not None and (event == "*" or value == event)


# -- the Stop hook timeout -----------------------------------------------------------------------------
def _bounded(value: Any, default: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return default
    return value


def stop_hook_timeout_seconds(settings_file: Path) -> int:
    """PostStopSuspendDelaySeconds + ClosedLidStopFollowUpDelaySeconds + 5 minutes (seed 000, the formula
    in ``hooks.stop_timeout`` that the hook's own wait uses), from the raw settings file; a missing,
    unreadable or odd file counts as the defaults."""
    raw: Any = {}
    try:
        with open(settings_file, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) <= MAX_CONFIG_BYTES:
            raw = json.loads(data.decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    delay = _bounded(raw.get("PostStopSuspendDelaySeconds"), _DEFAULT_POST_STOP_DELAY, 0, 86_400)
    follow_up = _bounded(raw.get("ClosedLidStopFollowUpDelaySeconds"), _DEFAULT_FOLLOW_UP_DELAY, 0, 86_400)
    return stop_timeout.stop_hook_timeout_seconds(delay, follow_up)


def default_shell() -> str:
    return "powershell" if host_os_name() == "windows" else "sh"


# -- files ---------------------------------------------------------------------------------------------
def read_config_text(path: Path, what: str) -> str | None:
    """The file's text, or None when it does not exist; refuses folders, huge and non-UTF-8 files."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError as error:
        raise InstallError(f"The {what} path is a folder, not a file: {path}") from error
    except OSError as error:
        raise InstallError(f"Cannot read the {what} {path}: {error.strerror or error}") from error
    if len(data) > MAX_CONFIG_BYTES:
        raise InstallError(f"The {what} {path} is larger than {MAX_CONFIG_BYTES} bytes; it was left as it is.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InstallError(f"The {what} {path} is not UTF-8 text; it was left as it is.") from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def load_json_object(path: Path, what: str) -> tuple[dict[str, Any], str | None]:
    """(object, original text or None when absent); garbage is refused, never rewritten."""
    text = read_config_text(path, what)
    if text is None or not text.strip():
        return {}, text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InstallError(f"The {what} {path} is not valid JSON ({_first_line(error)}); "
                           "it was left as it is.") from error
    if not isinstance(value, dict):
        raise InstallError(f"The {what} {path} must hold a JSON object; it was left as it is.")
    return value, text


def _indent_of(text: str | None) -> int | str:
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            unit = line[: len(line) - len(stripped)]
            return unit if "\t" in unit else len(unit)
    return 2


def render_json(data: dict[str, Any], original: str | None) -> str:
    """Indented like the original (2 spaces for a new file), with a final newline."""
    return json.dumps(data, indent=_indent_of(original), ensure_ascii=False) + "\n"


def backup(path: Path, *, now: datetime | None = None) -> Path | None:
    """Copies an existing ``path`` to ``<path>.<yyyyMMddHHmmss UTC>.bak`` (0600); None when absent."""
    if not path.is_file():
        return None
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d%H%M%S")
    target = path.with_name(f"{path.name}.{stamp}.bak")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.{stamp}-{counter}.bak")
    try:
        write_atomic(target, path.read_bytes())
    except OSError as error:
        raise InstallError(f"Cannot write the backup {target}: {error.strerror or error}; "
                           f"{path} was left as it is.") from error
    return target


def write_config(path: Path, text: str, what: str) -> Path | None:
    """Backs up the old file (if any), then writes ``text`` atomically (0600). Returns the backup."""
    saved = backup(path)
    try:
        write_atomic(path, text)
    except OSError as error:
        raise InstallError(f"Cannot write the {what} {path}: {error.strerror or error}") from error
    return saved


def remove_file(path: Path, what: str) -> Path | None:
    """Backs up and deletes a managed file; returns the backup."""
    saved = backup(path)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        raise InstallError(f"Cannot remove the {what} {path}: {error.strerror or error}") from error
    return saved
