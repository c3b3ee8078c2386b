"""Stored settings values that were not used as they are, one readable line per JSON key.

``settings``, ``status`` and ``doctor`` print these lines so a hand-edited value never silently
changes meaning: ``SessionTimeoutMinutes: stored value 0 is out of range (1-10080); using 1.``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fileio import NumberText
from .model import (
    ENUM_SETTINGS,
    NUMBER_RANGES,
    SOUND_SETTINGS,
    URL_SETTINGS,
    PowerRequestSettings,
    Settings,
    normalize_bool,
    normalize_enum,
    normalize_number,
    normalize_sound,
    normalize_url,
)

__all__ = ["find_problems"]


def _shown(value: Any) -> str:
    """The stored value as it appears in the file (JSON spelling), or "off" for a used None/""."""
    if isinstance(value, NumberText):  # NaN, Infinity, 1e400: unquoted, as in the file
        return str(value)[:200]
    try:
        return json.dumps(value, ensure_ascii=True)[:200]
    except (TypeError, ValueError):
        return repr(value)[:200]


def _used(value: Any) -> str:
    if value is None or value == "":
        return "off"
    return str(getattr(value, "value", value))


def _bool_problem(key: str, value: Any, default: bool) -> str | None:
    used, reason = normalize_bool(value, default)
    return None if reason is None else f"{key}: stored value {_shown(value)} {reason}; using {used}."


def _power_request_problems(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [f"PowerRequest: stored value {_shown(value)} is not an object; using the defaults."]
    problems = []
    for info in PowerRequestSettings.model_fields.values():
        if info.alias in value and info.annotation is bool:
            default = info.get_default(call_default_factory=True)
            problem = _bool_problem(f"PowerRequest.{info.alias}", value[info.alias], default)
            if problem is not None:
                problems.append(problem)
    return problems


def _problem(key: str, data: dict[str, Any]) -> str | None:
    value = data[key]
    used: Any
    reason: str | None
    if Settings.model_fields[_FIELD_NAMES[key]].annotation is bool:
        return _bool_problem(key, value, Settings.model_fields[_FIELD_NAMES[key]].get_default())
    if key in NUMBER_RANGES:
        used, reason = normalize_number(NUMBER_RANGES[key], value)
    elif key in ENUM_SETTINGS:
        used, reason = normalize_enum(key, value)
    elif key in SOUND_SETTINGS:
        sound, reason = normalize_sound(value)
        if reason is None and sound.lower().endswith(".wav") and not Path(sound).expanduser().is_file():
            return f"{key}: stored file {_shown(sound)} does not exist; no sound plays until it does."
        used = sound
    elif key in URL_SETTINGS:
        used, reason = normalize_url(value)
    else:
        return None
    if reason is None:
        return None
    return f"{key}: stored value {_shown(value)} {reason}; using {_used(used)}."


_FIELD_NAMES = {str(info.alias): name for name, info in Settings.model_fields.items()}


def find_problems(data: dict[str, Any]) -> list[str]:
    """One line per stored key whose value is out of range, of the wrong type or unknown (model key order)."""
    problems = []
    for info in Settings.model_fields.values():
        if info.alias == "PowerRequest" and "PowerRequest" in data:
            problems += _power_request_problems(data["PowerRequest"])
        elif info.alias in data:
            problem = _problem(info.alias, data)
            if problem is not None:
                problems.append(problem)
    return problems
