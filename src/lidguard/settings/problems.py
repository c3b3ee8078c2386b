"""Stored settings values that were not used as they are, one readable line per JSON key.

``settings``, ``status`` and ``doctor`` print these lines so a hand-edited value never silently
changes meaning: ``SessionTimeoutMinutes: stored value 0 is out of range (1-10080); using 1.``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .model import (
    ENUM_SETTINGS,
    NUMBER_RANGES,
    SOUND_SETTINGS,
    URL_SETTINGS,
    Settings,
    normalize_enum,
    normalize_number,
    normalize_sound,
    normalize_url,
)

__all__ = ["find_problems"]


def _shown(value: Any) -> str:
    """The stored value as it appears in the file (JSON spelling), or "off" for a used None/""."""
    try:
        return json.dumps(value, ensure_ascii=True)[:200]
    except (TypeError, ValueError):
        return repr(value)[:200]


def _used(value: Any) -> str:
    if value is None or value == "":
        return "off"
    return str(getattr(value, "value", value))


def _problem(key: str, data: dict[str, Any]) -> str | None:
    value = data[key]
    used: Any
    reason: str | None
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
    for info in Settings.model_fields.values():
        if info.alias in data:
            problem = _problem(info.alias, data)
            if problem is not None:
                problems.append(problem)
    return problems
