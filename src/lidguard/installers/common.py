"""What every hook installer shares: the hook command string, managed-command recognition, the Stop
hook timeout, backups, bounded reads of existing config files, and the result/status values.

Rules (REFERENCE 5, ASK_BEFORE_SLEEP.md): the command is the quoted absolute path of the installed
executable and ``<sub>`` (an agent's PATH may not hold ``lidguard``); a config file that existed is copied to
``<file>.lidguard.bak`` (one per file) before it changes; writes are atomic and keep the file's mode
(0600 for a new file); a file that cannot
be parsed is refused with one line and never rewritten.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fileio import write_atomic
from ..ipc import stop_timeout
from ..platform.host import host_os_name

__all__ = [
    "DEFAULT_HOOK_TIMEOUT_SECONDS",
    "MAX_CONFIG_BYTES",
    "HookStatus",
    "InstallError",
    "InstallResult",
    "backup",
    "backup_path",
    "command_parts",
    "home",
    "hook_argv",
    "hook_client",
    "hook_process_argv",
    "hook_runner_line",
    "hook_command",
    "is_managed_command",
    "load_json_object",
    "read_config_text",
    "render_json",
    "stop_hook_timeout_seconds",
    "write_config",
    "write_or_remove",
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


def hook_argv() -> list[str]:
    """The hook executable as absolute argv words, never a bare ``lidguard`` (an agent started from an IDE
    or another shell has its own PATH): this console script, else ``lidguard`` found on PATH, else this
    Python with ``-m lidguard`` (the same preference as ``mcp-install``)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.stem.lower() == "lidguard" and argv0.is_file():
        return [str(argv0.absolute())]
    found = shutil.which("lidguard")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "lidguard"]


_CLIENT: list[Any] = []  # the native hook client's status, checked once per process


def hook_client() -> Any:
    """The native hook client's ``HookClientStatus`` (``platform/hook_client.py``; issue 36), with
    ``LIDGUARD_HOOK_CLIENT=off`` read as not usable."""
    if not _CLIENT:
        from ..platform.hook_client import HookClientStatus, hook_client_status
        from ..switches import hook_client_enabled

        if hook_client_enabled():
            _CLIENT.append(hook_client_status())
        else:
            _CLIENT.append(HookClientStatus(None, False, "LIDGUARD_HOOK_CLIENT is off"))
    return _CLIENT[0]


def hook_command(sub: str, *, shell: str = "sh") -> str:
    """The absolute executable (quoted for ``shell``: ``sh`` or ``powershell``) and ``<sub>``; for ``sh``
    led by the native hook client when it exists and passes its self-check (it runs the Python hook
    words after it whenever it cannot answer)."""
    head = hook_argv()
    client = hook_client() if shell == "sh" else None
    if client is not None and client.usable:
        return " ".join([_quote(client.path, shell), _quote(head[0], shell), *head[1:], sub])
    return " ".join([_quote(head[0], shell), *head[1:], sub])


def hook_process_argv() -> list[str]:
    """The hook as argv words for an agent that spawns it without a shell (the OpenCode plugin): the native
    hook client ahead of :func:`hook_argv` when it runs here."""
    client = hook_client()
    return [client.path, *hook_argv()] if client.usable else hook_argv()


def hook_runner_line(installed: list[list[str]]) -> str:
    """hook-status/doctor: which hook an agent runs, and why."""
    from ..platform.hook_client import CLIENT_NAME

    clients = [argv for argv in installed if argv and os.path.basename(argv[0]) == CLIENT_NAME]
    if clients:
        return f"native client {clients[0][0]} (the Python hook {' '.join(clients[0][1:])} when it cannot answer)"
    client = hook_client()
    if client.usable:
        return "Python hook (installed without the native client; lidguard hook-install writes it)"
    return f"Python hook ({client.reason})"


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
    in ``ipc.stop_timeout`` that the hook's own wait uses), from the raw settings file; a missing,
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


def backup_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.lidguard.bak")


def backup(path: Path) -> Path | None:
    """Copies an existing ``path`` to ``<path>.lidguard.bak`` (0600): one backup per file, the file as it
    was before lidguard's latest change (replaced on each change, not one more per run); None when absent."""
    if not path.is_file():
        return None
    target = backup_path(path)
    try:
        write_atomic(target, path.read_bytes())
    except OSError as error:
        raise InstallError(f"Cannot write the backup {target}: {error.strerror or error}; "
                           f"{path} was left as it is.") from error
    return target


def _mode_of(path: Path) -> int:
    """The existing file's permission bits (kept on rewrite); 0600 for a new file."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o600


def write_config(path: Path, text: str, what: str) -> Path | None:
    """Backs up the old file (if any), then writes ``text`` atomically with the old file's mode (a new
    file: 0600). Returns the backup."""
    mode = _mode_of(path)
    saved = backup(path)
    try:
        write_atomic(path, text, mode=mode)
    except OSError as error:
        raise InstallError(f"Cannot write the {what} {path}: {error.strerror or error}") from error
    return saved


def write_or_remove(path: Path, root: dict[str, Any], original: str | None, what: str,
                    *, ignorable: tuple[str, ...] = ()) -> Path | None:
    """After a removal: the object rewritten, or the file deleted (backup kept) when nothing is left
    but keys in ``ignorable`` (no empty ``{}`` left behind)."""
    if all(key in ignorable for key in root):
        return remove_file(path, what)
    return write_config(path, render_json(root, original), what)


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
