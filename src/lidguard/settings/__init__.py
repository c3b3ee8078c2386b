"""Settings: the model, the settings file, and validation of typed values."""

from .model import Settings, headless_defaults, stop_follow_up_enabled
from .store import (
    SettingsFileError,
    SettingsReport,
    apply_changes,
    load_or_create_settings,
    load_settings,
    load_settings_report,
    save_settings,
)
from .validation import SETTING_OPTIONS, SettingOption, SettingsInputError

__all__ = [
    "SETTING_OPTIONS",
    "SettingOption",
    "Settings",
    "SettingsFileError",
    "SettingsReport",
    "SettingsInputError",
    "apply_changes",
    "headless_defaults",
    "load_or_create_settings",
    "load_settings",
    "load_settings_report",
    "save_settings",
    "stop_follow_up_enabled",
]
