"""``update_settings``: camelCase tool fields -> the CLI's own option parsers (one validation, one set of ranges).

Every field of the tool is one option of ``settings.validation.SETTING_OPTIONS``, named after its JSON
key in camelCase (``SessionTimeoutMinutes`` -> ``sessionTimeoutMinutes``; the power request's
``Reason`` is ``powerRequestReason``). A value the model sends is turned into the text a person would
type and parsed by the option's own parser, so the MCP tool accepts and refuses exactly what
``lidguard settings`` does, with the same messages. Two MCP conveniences (REFERENCE 12.1): ``""``
turns an "off"-able number off, and ``""`` or ``"off"`` clears a webhook URL (the CLI has a remove
command for that instead).

User-only settings (issue 39): where data leaves the machine - every webhook URL, the ask-before-sleep one
among them, whose replies come back to the agent as its next prompt - and what leaves with it (the prompt
and reply previews in webhook bodies) - and ``SuspendIgnoresOtherBlockers``, which overrides other programs'
sleep protection. A model that could set them could send the session's text anywhere,
or feed itself text from anywhere; the tool refuses them with the command the user runs instead, and a
reset to defaults keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..settings import SETTING_OPTIONS, Settings, SettingsInputError
from ..settings.model import NUMBER_RANGES, URL_SETTINGS

__all__ = ["UPDATE_FIELDS", "USER_ONLY_SETTINGS", "UpdateField", "changed_fields", "kept_user_only",
           "parse_updates", "user_only_note"]

# SuspendIgnoresOtherBlockers overrides other programs' sleep protection (a backup, an update): the user's call.
USER_ONLY_SETTINGS: tuple[str, ...] = (*URL_SETTINGS, "WebhookPreviews", "SuspendIgnoresOtherBlockers")


def _camel(key: str) -> str:
    return key[:1].lower() + key[1:]


@dataclass(frozen=True, slots=True)
class UpdateField:
    name: str  # camelCase tool argument
    option: Any  # settings.validation.SettingOption

    @property
    def json_path(self) -> tuple[str, ...]:
        return tuple(self.option.json_path)

    @property
    def user_only(self) -> bool:
        return self.json_path[-1] in USER_ONLY_SETTINGS


def _field_name(json_path: tuple[str, ...]) -> str:
    if json_path == ("PowerRequest", "Reason"):
        return "powerRequestReason"
    return _camel(json_path[-1])


UPDATE_FIELDS: dict[str, UpdateField] = {
    _field_name(tuple(option.json_path)): UpdateField(_field_name(tuple(option.json_path)), option)
    for option in SETTING_OPTIONS
}


def user_only_note(field: UpdateField) -> str:
    """How the user changes a user-only setting: the ``lidguard settings`` option (and the remove command)."""
    option = field.option
    note = f"lidguard settings --{option.name} {option.metavar}"
    if field.json_path[-1] in URL_SETTINGS:
        note += f" (off: lidguard remove-{option.name.removesuffix('-url')})"
    return note


def _refuse_user_only(names: list[str]) -> None:
    fields = [UPDATE_FIELDS[name] for name in names]
    commands = "; ".join(user_only_note(field) for field in fields)
    raise SettingsInputError(
        f"{', '.join(names)}: user-only setting{'s' if len(names) > 1 else ''} (where LidGuard sends data, or "
        f"what it sends), which MCP tools never change; nothing was saved. The user runs: {commands}")


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
    user_only = [name for name, value in given.items()
                 if value is not None and name in UPDATE_FIELDS and UPDATE_FIELDS[name].user_only]
    if user_only:
        _refuse_user_only(user_only)
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


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def changed_fields(before: Settings, after: Settings) -> list[str]:
    """The camelCase names of the settings whose stored value differs, in tool-field order."""
    old, new = before.to_file_json(), after.to_file_json()
    return [name for name, field in UPDATE_FIELDS.items() if _at(old, field.json_path) != _at(new, field.json_path)]


def kept_user_only(previous: Settings) -> dict[tuple[str, ...], Any]:
    """The stored user-only values, as changes a reset to defaults applies again."""
    stored = previous.to_file_json()
    return {field.json_path: _at(stored, field.json_path) for field in UPDATE_FIELDS.values() if field.user_only}
