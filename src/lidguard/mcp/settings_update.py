"""``update_settings``: camelCase tool fields -> the CLI's own option parsers (one validation, one set of ranges).

Every field of the tool is one option of ``settings.validation.SETTING_OPTIONS``, named after its JSON
key in camelCase (``SessionTimeoutMinutes`` -> ``sessionTimeoutMinutes``; the power request's
``Reason`` is ``powerRequestReason``). A value the model sends is turned into the text a person would
type and parsed by the option's own parser, so the MCP tool accepts and refuses exactly what
``lidguard settings`` does, with the same messages. Two MCP conveniences (REFERENCE 12.1): ``""``
turns an "off"-able number off, and ``""`` or ``"off"`` clears a webhook URL (the CLI has a remove
command for that instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..settings import SETTING_OPTIONS, Settings, SettingsInputError
from ..settings.model import NUMBER_RANGES, URL_SETTINGS

__all__ = ["UPDATE_FIELDS", "UpdateField", "changed_fields", "parse_updates"]


def _camel(key: str) -> str:
    return key[:1].lower() + key[1:]


@dataclass(frozen=True, slots=True)
class UpdateField:
    name: str  # camelCase tool argument
    option: Any  # settings.validation.SettingOption

    @property
    def json_path(self) -> tuple[str, ...]:
        return tuple(self.option.json_path)


def _field_name(json_path: tuple[str, ...]) -> str:
    if json_path == ("PowerRequest", "Reason"):
        return "powerRequestReason"
    return _camel(json_path[-1])


UPDATE_FIELDS: dict[str, UpdateField] = {
    _field_name(tuple(option.json_path)): UpdateField(_field_name(tuple(option.json_path)), option)
    for option in SETTING_OPTIONS
}


def _as_text(field: UpdateField, value: Any) -> str:
    """The text a person would type for ``value`` (booleans as true/false, numbers as digits)."""
    key = field.json_path[-1]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        if value.strip() == "" and key in NUMBER_RANGES and NUMBER_RANGES[key].off_allowed:
            return "off"
        return value
    raise SettingsInputError(f"The {field.name} value must be a string, a number or true/false.")


def parse_updates(given: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """``{json_path: stored value}`` for every field given (None = keep); SettingsInputError on the first bad one."""
    changes: dict[tuple[str, ...], Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        field = UPDATE_FIELDS.get(name)
        if field is None:
            raise SettingsInputError(f"Unknown setting: {name}.")
        text = _as_text(field, value)
        if field.json_path[-1] in URL_SETTINGS and text.strip().lower() in ("", "off"):
            changes[field.json_path] = ""
            continue
        try:
            changes[field.json_path] = field.option.parse(text)
        except SettingsInputError as error:
            raise SettingsInputError(f"{name}: {error}") from error
    return changes


def changed_fields(before: Settings, after: Settings) -> list[str]:
    """The camelCase names of the settings whose stored value differs, in tool-field order."""
    old, new = before.to_file_json(), after.to_file_json()

    def value(data: dict[str, Any], path: tuple[str, ...]) -> Any:
        for key in path:
            data = data.get(key) if isinstance(data, dict) else None  # type: ignore[assignment]
        return data

    return [name for name, field in UPDATE_FIELDS.items() if value(old, field.json_path) != value(new, field.json_path)]
