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
    BOOL_SETTINGS,
    ENUM_SETTINGS,
    NUMBER_RANGES,
    POWER_REQUEST_BOOL_SETTINGS,
    SETTING_FIELDS,
    SOUND_SETTINGS,
    URL_SETTINGS,
    normalize_bool,
    normalize_enum,
    normalize_number,
    normalize_sound,
    normalize_url,
    setting_default,
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
    for key in POWER_REQUEST_BOOL_SETTINGS:
        if key in value:
            problem = _bool_problem(f"PowerRequest.{key}", value[key], setting_default(f"PowerRequest.{key}"))
            if problem is not None:
                problems.append(problem)
    return problems


def _problem(key: str, data: dict[str, Any]) -> str | None:
    value = data[key]
    used: Any
    reason: str | None
    if key in BOOL_SETTINGS:
        return _bool_problem(key, value, setting_default(key))
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


def find_problems(data: dict[str, Any]) -> list[str]:
    """One line per stored key whose value is out of range, of the wrong type or unknown (model key order)."""
    problems = []
    for key in SETTING_FIELDS:
        if key == "PowerRequest" and "PowerRequest" in data:
            problems += _power_request_problems(data["PowerRequest"])
        elif key in data:
            problem = _problem(key, data)
            if problem is not None:
                problems.append(problem)
    return problems
