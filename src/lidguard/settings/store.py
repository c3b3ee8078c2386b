"""Reading and writing ``settings.json`` (atomic, 0600; a corrupt file is never overwritten silently)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..fileio import write_atomic
from .model import Settings, headless_defaults
from .problems import find_problems

__all__ = [
    "SettingsFileError",
    "SettingsReport",
    "apply_changes",
    "load_or_create_settings",
    "load_settings",
    "load_settings_report",
    "save_settings",
]


class SettingsFileError(Exception):
    """The settings file exists but cannot be used; the message names the file."""


def _read_raw(path: Path) -> dict[str, Any] | None:
    """The stored JSON object, None when there is no file, or SettingsFileError naming the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SettingsFileError(f"Cannot read the settings file {path}: {error.strerror or error}") from error
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise SettingsFileError(
            f"The settings file {path} is not valid JSON ({error}). Fix it or run "
            "`lidguard settings --reset true` to replace it with defaults."
        ) from error
    if not isinstance(data, dict):
        raise SettingsFileError(f"The settings file {path} must hold a JSON object.")
    return data


def _validate(path: Path, data: dict[str, Any]) -> Settings:
    try:
        return Settings.model_validate(data)
    except (ValidationError, ValueError, TypeError) as error:
        first = error.errors()[0] if isinstance(error, ValidationError) else {"msg": str(error), "loc": ()}
        where = ".".join(str(part) for part in first.get("loc", ())) or "a value"
        raise SettingsFileError(f"The settings file {path} has an invalid {where}: {first['msg']}.") from error


def load_settings(path: Path) -> Settings | None:
    """The stored settings (normalized, see ``model``), None when there is no file, or SettingsFileError."""
    data = _read_raw(path)
    return None if data is None else _validate(path, data)


def save_settings(path: Path, settings: Settings) -> None:
    text = json.dumps(settings.to_file_json(), indent=2) + "\n"
    write_atomic(path, text)


def load_or_create_settings(path: Path) -> Settings:
    """Loads the file, creating it with the headless defaults when missing."""
    settings = load_settings(path)
    if settings is None:
        settings = headless_defaults()
        save_settings(path, settings)
    return settings


def apply_changes(settings: Settings, changes: dict[tuple[str, ...], Any]) -> Settings:
    """Returns a copy with each JSON path set to its new value (validated by the model)."""
    data = settings.model_dump(mode="json", by_alias=True)
    for json_path, value in changes.items():
        target = data
        for key in json_path[:-1]:
            target = target.setdefault(key, {})
        target[json_path[-1]] = value
    return Settings.model_validate(data)


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
