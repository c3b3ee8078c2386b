"""Reading and writing ``settings.json`` (atomic, 0600; a corrupt file is never overwritten silently)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fileio import UnusableFileError, read_json_object, write_atomic
from .model import SETTING_FIELDS, Settings, headless_defaults
from .problems import find_problems

__all__ = [
    "MAX_SETTINGS_FILE_BYTES",
    "SettingsFileError",
    "SettingsReport",
    "apply_changes",
    "load_or_create_settings",
    "load_settings",
    "load_settings_report",
    "save_settings",
]


# settings.json is a few hundred bytes; anything past this bound is not a settings file.
MAX_SETTINGS_FILE_BYTES = 256 * 1024
FIX_HINT = "Fix it or run `lidguard settings --reset true` to replace it with defaults."


class SettingsFileError(Exception):
    """The settings file exists but cannot be used; the message names the file.

    ``problem`` is the sentence every command prints for it (``start``'s warning, ``status``,
    ``doctor``: the same words, see ``shared.raw_settings.settings_file_problem``)."""

    def __init__(self, problem: str, *, hint: str = FIX_HINT) -> None:
        super().__init__(f"{problem} {hint}" if hint else problem)
        self.problem = problem


def _problem(path: Path, reason: str) -> str:
    from ..shared.raw_settings import settings_file_problem

    return settings_file_problem(path, reason)


_KEYS = tuple(SETTING_FIELDS)


def _read_raw(path: Path) -> dict[str, Any] | None:
    """The stored JSON object, None when there is no file, or SettingsFileError naming the file.

    Read like the hook path reads it (``fileio.read_json_object``: non-blocking, regular file,
    bounded, ``NaN``/``1e400`` kept as ``NumberText``), so both agree on what is unusable."""
    try:
        data = read_json_object(path, limit=MAX_SETTINGS_FILE_BYTES)
    except UnusableFileError as error:
        raise SettingsFileError(_problem(path, error.reason)) from error
    except OSError as error:
        raise SettingsFileError(_problem(path, str(error.strerror or error).rstrip("."))) from error
    if data is None:
        return None
    try:
        json.dumps({key: data[key] for key in _KEYS if key in data}, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError) as error:
        raise SettingsFileError(_problem(path, "it holds text that is not valid Unicode")) from error
    return data


def _validate(path: Path, data: dict[str, Any]) -> Settings:
    try:
        return Settings.from_raw(data)
    except (ValueError, TypeError) as error:
        raise SettingsFileError(_problem(path, f"a value is invalid ({error})")) from error


def load_settings(path: Path) -> Settings | None:
    """The stored settings (normalized, see ``model``), None when there is no file, or SettingsFileError."""
    data = _read_raw(path)
    return None if data is None else _validate(path, data)


def save_settings(path: Path, settings: Settings) -> None:
    """Atomic, 0600; a symlinked settings.json (a user's dotfiles) is written through, the link kept."""
    text = json.dumps(settings.to_file_json(), indent=2) + "\n"
    write_atomic(path, text, follow_symlinks=True)


def load_or_create_settings(path: Path) -> Settings:
    """Loads the file, creating it with the headless defaults when missing. A file that cannot be
    created (a full disk, a read-only folder) is not an error: the defaults are used in memory and
    the next ``start`` tries again."""
    settings = load_settings(path)
    if settings is None:
        settings = headless_defaults()
        with contextlib.suppress(OSError):
            save_settings(path, settings)
    return settings


def apply_changes(settings: Settings, changes: dict[tuple[str, ...], Any]) -> Settings:
    """Returns a copy with each JSON path set to its new value (validated by the model)."""
    data = settings.to_file_json()
    for json_path, value in changes.items():
        target = data
        for key in json_path[:-1]:
            target = target.setdefault(key, {})
        target[json_path[-1]] = value
    return Settings.from_raw(data)


@dataclass(frozen=True, slots=True)
class SettingsReport:
    """What a reader that must carry on (status, doctor, the runtime) knows about the settings file.

    ``settings`` is usable in every case: the stored values, or the headless defaults when the file
    is missing or unusable. ``error`` names the file when it is unusable (the file is left as it
    is); ``problems`` lists stored values that were out of range or unknown, each naming its key.
    """

    settings: Settings
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    exists: bool = True


def load_settings_report(path: Path) -> SettingsReport:
    """Never raises for a bad file and never writes it."""
    try:
        data = _read_raw(path)
        if data is None:
            return SettingsReport(headless_defaults(), exists=False)
        settings = _validate(path, data)
    except SettingsFileError as error:
        return SettingsReport(headless_defaults(), str(error))
    return SettingsReport(settings, problems=find_problems(data))
