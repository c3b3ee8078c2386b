"""The settings model: every setting of the original LidGuard plus the seeds' new ones.

JSON keys are PascalCase and compatible with the original tool's ``settings.json``. "off" is
stored as ``null`` for the nullable integers and as ``""`` for sounds and webhook URLs.

Ranges (``NUMBER_RANGES``; the CLI rejects anything outside them, see ``validation.py``)::

    SessionTimeoutMinutes                            off or 1-10080 (one week)
    SessionLeaseHours                                off or 1-168 (one week; default 8)
    ServerRuntimeCleanupDelayMinutes                 off or 1-10080 (one week)
    PostStopSuspendDelaySeconds                      0-3600 (one hour)
    ClosedLidStopFollowUpDelaySeconds                0-3600 (one hour)
    SuspendHistoryEntryCount                         off or 1-1000
    EmergencyHibernationTemperatureCelsius           70-110
    PostStopSuspendSoundVolumeOverridePercent        off or 1-100
    ClosedLidStopFollowUpSoundVolumeOverridePercent  off or 1-100
    BatteryFloorPercent                              30-100 (PowerPolicy AcOrBattery, seed 004)
    DimDisplayWhenIdleMinutes                        off or 1-1440 (one day; default off, seed 004)
    DimDisplayBrightnessPercent                      1-100 (default 20)

The maxima keep every deadline the runtime computes (now + timeout) far inside the range of dates.
Values read from a file or received by the runtime are normalized, never rejected, and never
silently change meaning: a number outside its range is clamped to the nearest bound (a stored 0
timeout is 1 minute, not "off"; only ``null`` is off); a value of the wrong type (text or true/false
for a number, a fraction, anything but JSON true/false for a switch, a non-object PowerRequest) uses
the class default; an unknown enum name uses the default; a sound that is neither a system sound
name nor a ``.wav`` path and a webhook URL that is not absolute http(s) are off.
``problems.find_problems`` names each such key for ``settings``/``status``/``doctor``.
"""

from __future__ import annotations

import enum
import functools
import json
import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

from ..platform.api import SuspendMode, TemperatureMode
from ..platform.host import away_mode_supported

__all__ = [
    "BOOL_SETTINGS",
    "DEFAULT_POWER_REQUEST_REASON",
    "DELAY_SECONDS_MAX",
    "EMERGENCY_TEMPERATURE_MAX",
    "EMERGENCY_TEMPERATURE_MIN",
    "ENUM_SETTINGS",
    "LEASE_HOURS_MAX",
    "MINUTES_MAX",
    "NUMBER_RANGES",
    "NumberRange",
    "POWER_REQUEST_BOOL_SETTINGS",
    "POWER_REQUEST_FIELDS",
    "PermissionRequestDecision",
    "PowerPolicy",
    "PowerRequestSettings",
    "SETTING_FIELDS",
    "SOUND_SETTINGS",
    "SUSPEND_HISTORY_COUNT_MAX",
    "SYSTEM_SOUND_NAMES",
    "Settings",
    "SettingsShapeError",
    "SuspendModeSetting",
    "TemperatureModeSetting",
    "UiCulture",
    "URL_SETTINGS",
    "headless_defaults",
    "is_absolute_http_url",
    "normalize_bool",
    "normalize_enum",
    "normalize_number",
    "normalize_sound",
    "normalize_url",
    "setting_default",
    "stop_follow_up_enabled",
    "validate_raw_settings",
]

DEFAULT_POWER_REQUEST_REASON = "LidGuard is keeping the system awake while an agent session is running."
EMERGENCY_TEMPERATURE_MIN = 70
EMERGENCY_TEMPERATURE_MAX = 110
MINUTES_MAX = 7 * 24 * 60  # one week
LEASE_HOURS_MAX = 7 * 24  # one week
DELAY_SECONDS_MAX = 60 * 60  # one hour
SUSPEND_HISTORY_COUNT_MAX = 1000
DIM_IDLE_MINUTES_MAX = 24 * 60  # one day
SYSTEM_SOUND_NAMES = ("Asterisk", "Beep", "Exclamation", "Hand", "Question")


# The settings use the platform's own value types (one definition of each enum).
SuspendModeSetting = SuspendMode
TemperatureModeSetting = TemperatureMode


class PermissionRequestDecision(enum.StrEnum):
    DENY = "Deny"
    ALLOW = "Allow"
    ASK = "Ask"


class UiCulture(enum.StrEnum):
    """The language of what lidguard shows a person (issue 38.2; the original's key and values)."""

    AUTO = "auto"  # LIDGUARD_UI_CULTURE, else the locale
    EN = "en"
    KO = "ko"
    JA = "ja"
    ZH_HANS = "zh-Hans"
    ZH_HANT = "zh-Hant"


class PowerPolicy(enum.StrEnum):
    """Seed 004: protect on AC or on battery above the floor (default), or on AC only."""

    AC_OR_BATTERY = "AcOrBattery"
    AC_ONLY = "AcOnly"


@dataclass(frozen=True, slots=True)
class NumberRange:
    """An integer setting's bounds; ``off_allowed`` means JSON ``null`` (CLI ``off``) disables it."""

    minimum: int
    maximum: int
    default: int | None
    off_allowed: bool

    @property
    def text(self) -> str:
        return f"{self.minimum}-{self.maximum}"


NUMBER_RANGES: dict[str, NumberRange] = {
    "SessionTimeoutMinutes": NumberRange(1, MINUTES_MAX, 12, True),
    "ServerRuntimeCleanupDelayMinutes": NumberRange(1, MINUTES_MAX, 10, True),
    "SessionLeaseHours": NumberRange(1, LEASE_HOURS_MAX, 8, True),
    "PostStopSuspendDelaySeconds": NumberRange(0, DELAY_SECONDS_MAX, 10, False),
    "ClosedLidStopFollowUpDelaySeconds": NumberRange(0, DELAY_SECONDS_MAX, 120, False),
    "SuspendHistoryEntryCount": NumberRange(1, SUSPEND_HISTORY_COUNT_MAX, 10, True),
    "EmergencyHibernationTemperatureCelsius": NumberRange(EMERGENCY_TEMPERATURE_MIN, EMERGENCY_TEMPERATURE_MAX,
                                                          93, False),
    "PostStopSuspendSoundVolumeOverridePercent": NumberRange(1, 100, None, True),
    "ClosedLidStopFollowUpSoundVolumeOverridePercent": NumberRange(1, 100, None, True),
    "BatteryFloorPercent": NumberRange(30, 100, 30, False),
    "DimDisplayWhenIdleMinutes": NumberRange(1, DIM_IDLE_MINUTES_MAX, None, True),
    "DimDisplayBrightnessPercent": NumberRange(1, 100, 20, False),
}
ENUM_SETTINGS: dict[str, tuple[type[enum.StrEnum], enum.StrEnum]] = {
    "SuspendMode": (SuspendModeSetting, SuspendModeSetting.SLEEP),
    "ClosedLidPermissionRequestDecision": (PermissionRequestDecision, PermissionRequestDecision.DENY),
    "EmergencyHibernationTemperatureMode": (TemperatureModeSetting, TemperatureModeSetting.AVERAGE),
    "PowerPolicy": (PowerPolicy, PowerPolicy.AC_OR_BATTERY),
    "UiCulture": (UiCulture, UiCulture.AUTO),
}
SOUND_SETTINGS = ("PostStopSuspendSound", "ClosedLidStopFollowUpSound")
URL_SETTINGS = ("PreSuspendWebhookUrl", "PostSessionEndWebhookUrl", "ClosedLidStopFollowUpWebhookUrl")


def normalize_number(spec: NumberRange, value: Any) -> tuple[int | None, str | None]:
    """(value used, why the stored value was not used as is - None when it was)."""
    if value is None:
        return (None, None) if spec.off_allowed else (spec.default, "is not an integer")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return spec.default, "is not an integer"
    if value < spec.minimum:
        return spec.minimum, f"is out of range ({spec.text})"
    if value > spec.maximum:
        return spec.maximum, f"is out of range ({spec.text})"
    return value, None


def normalize_enum(key: str, value: Any) -> tuple[enum.StrEnum, str | None]:
    enum_type, default = ENUM_SETTINGS[key]
    if isinstance(value, enum_type):
        return value, None
    if isinstance(value, str):
        for member in enum_type:
            if member.value.lower() == value.strip().lower():
                return member, None
    return default, f"is not one of {', '.join(member.value for member in enum_type)}"


def normalize_sound(value: Any) -> tuple[str, str | None]:
    """off (""), a system sound name (canonical case) or a ``.wav`` path; anything else is off."""
    text = value.strip() if isinstance(value, str) else None
    if text is not None and text.lower() in ("", "off"):
        return "", None
    if text is not None:
        for name in SYSTEM_SOUND_NAMES:
            if name.lower() == text.lower():
                return name, None
        if text.lower().endswith(".wav"):
            return text, None
    return "", (f"is not off, a system sound name ({', '.join(SYSTEM_SOUND_NAMES)}) or a .wav file path")


def normalize_bool(value: Any, default: bool) -> tuple[bool, str | None]:
    """Only JSON true/false; "yes", 0 or null are not silently read as a boolean."""
    if isinstance(value, bool):
        return value, None
    return default, "is not true or false"


def is_absolute_http_url(text: str) -> bool:
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def normalize_url(value: Any) -> tuple[str, str | None]:
    text = value.strip() if isinstance(value, str) else None
    if text is not None and text.lower() in ("", "off"):
        return "", None
    if text is not None and is_absolute_http_url(text):
        return text, None
    return "", "is not an absolute http or https URL"


def _stored(key: str, default: Any = MISSING, *, factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field stored under the JSON ``key`` (PascalCase, as in the original settings file)."""
    if factory is not None:
        return field(default_factory=factory, metadata={"key": key})
    return field(default=default, metadata={"key": key})


class SettingsShapeError(ValueError):
    """The settings are not a JSON object (a file or a ``start`` request holding a list, text, null)."""


def _bool_field(default: bool) -> Callable[[Any], bool]:
    return lambda value: normalize_bool(value, default)[0]


def _power_reason(value: Any) -> str:
    text = str(value or "").strip()
    return text or DEFAULT_POWER_REQUEST_REASON


@dataclass(frozen=True, slots=True)
class PowerRequestSettings:
    prevent_system_sleep: bool = _stored("PreventSystemSleep", True)
    # Away mode exists on Windows only; elsewhere it is always False (and not written to the file).
    prevent_away_mode_sleep: bool = _stored("PreventAwayModeSleep", factory=away_mode_supported)
    prevent_display_sleep: bool = _stored("PreventDisplaySleep", False)
    reason: str = _stored("Reason", DEFAULT_POWER_REQUEST_REASON)

    @classmethod
    def from_raw(cls, raw: Any) -> PowerRequestSettings:
        """``raw`` (the ``PowerRequest`` object) normalized like the top-level settings; not an object
        -> the defaults."""
        if isinstance(raw, PowerRequestSettings):
            return raw
        if not isinstance(raw, dict):
            return cls()
        power = cls(**_normalized(cls, raw, _POWER_REQUEST_NORMALIZERS))
        if power.prevent_away_mode_sleep and not away_mode_supported():
            power = replace(power, prevent_away_mode_sleep=False)
        return power

    def to_json(self) -> dict[str, Any]:
        return {item.metadata["key"]: getattr(self, item.name) for item in fields(self)}


@dataclass(frozen=True, slots=True)
class Settings:
    """Field defaults are the class defaults (a key missing from an existing file gets these).

    A frozen dataclass built by ``from_raw`` (stored or received JSON): every value goes through the
    normalizers above, which clamp or fall back and never reject, so there is nothing left for a
    validation library to decide (issue 22: pydantic was most of every CLI command's start)."""

    power_request: PowerRequestSettings = _stored("PowerRequest", factory=PowerRequestSettings)
    change_lid_action: bool = _stored("ChangeLidAction", False)
    suspend_mode: SuspendModeSetting = _stored("SuspendMode", SuspendModeSetting.SLEEP)
    post_stop_suspend_delay_seconds: int = _stored("PostStopSuspendDelaySeconds", 10)
    post_stop_suspend_sound: str = _stored("PostStopSuspendSound", "")
    post_stop_suspend_sound_volume_override_percent: int | None = _stored(
        "PostStopSuspendSoundVolumeOverridePercent", None)
    suspend_history_entry_count: int | None = _stored("SuspendHistoryEntryCount", 10)
    pre_suspend_webhook_url: str = _stored("PreSuspendWebhookUrl", "")
    post_session_end_webhook_url: str = _stored("PostSessionEndWebhookUrl", "")
    closed_lid_permission_request_decision: PermissionRequestDecision = _stored(
        "ClosedLidPermissionRequestDecision", PermissionRequestDecision.DENY)
    watch_parent_process: bool = _stored("WatchParentProcess", True)
    session_timeout_minutes: int | None = _stored("SessionTimeoutMinutes", 12)
    # A session's hard lease from its latest start: past it the session ends (reason session-lease-expired).
    session_lease_hours: int | None = _stored("SessionLeaseHours", 8)
    server_runtime_cleanup_delay_minutes: int | None = _stored("ServerRuntimeCleanupDelayMinutes", 10)
    emergency_hibernation_on_high_temperature: bool = _stored("EmergencyHibernationOnHighTemperature", True)
    emergency_hibernation_temperature_mode: TemperatureModeSetting = _stored(
        "EmergencyHibernationTemperatureMode", TemperatureModeSetting.AVERAGE)
    emergency_hibernation_temperature_celsius: int = _stored("EmergencyHibernationTemperatureCelsius", 93)
    closed_lid_stop_follow_up_webhook_url: str = _stored("ClosedLidStopFollowUpWebhookUrl", "")
    closed_lid_stop_follow_up_delay_seconds: int = _stored("ClosedLidStopFollowUpDelaySeconds", 120)
    repeat_closed_lid_stop_follow_up: bool = _stored("RepeatClosedLidStopFollowUp", True)
    # Issue 34.3: true = a suspend asks the OS to ignore other programs' sleep blockers (logind's
    # suspend-ignore-inhibit); false = they are honoured, named in status, and waited for.
    suspend_ignores_other_blockers: bool = _stored("SuspendIgnoresOtherBlockers", False)
    closed_lid_stop_follow_up_sound: str = _stored("ClosedLidStopFollowUpSound", "")
    closed_lid_stop_follow_up_sound_volume_override_percent: int | None = _stored(
        "ClosedLidStopFollowUpSoundVolumeOverridePercent", None)
    power_policy: PowerPolicy = _stored("PowerPolicy", PowerPolicy.AC_OR_BATTERY)
    battery_floor_percent: int = _stored("BatteryFloorPercent", 30)
    # Seed 004: dim the built-in display while sessions are protected, the lid is open and the user has
    # been idle this long (off: never); restored on activity (runtime/components/dimming.py).
    dim_display_when_idle_minutes: int | None = _stored("DimDisplayWhenIdleMinutes", None)
    dim_display_brightness_percent: int = _stored("DimDisplayBrightnessPercent", 20)
    webhook_previews: bool = _stored("WebhookPreviews", True)  # prompt/answer text in webhook bodies
    log_full_text: bool = _stored("LogFullText", False)  # prompt/reply text in hook event logs (debugging)
    ui_culture: UiCulture = _stored("UiCulture", UiCulture.AUTO)  # lidguard.l10n: auto, en, ko, ja, zh-Hans, zh-Hant

    @classmethod
    def from_raw(cls, raw: Any) -> Settings:
        """Stored or received JSON (an object keyed like the file) -> settings, every value normalized
        (clamped, or the class default for a wrong type). Keys not in the file format are ignored; a
        missing key gets the class default. Not an object -> ``SettingsShapeError``."""
        if not isinstance(raw, dict):
            raise SettingsShapeError(f"the settings must be a JSON object, not {_json_kind(raw)}")
        return cls(**_normalized(cls, raw, _SETTINGS_NORMALIZERS))

    def replace(self, **changes: Any) -> Settings:
        """A copy with the given fields (by field name) changed; the values are used as given."""
        return replace(self, **changes)

    # -- serialization --------------------------------------------------------------------------
    def to_file_json(self) -> dict[str, Any]:
        """The settings file's object (PascalCase keys, enums as their names, declaration order)."""
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, PowerRequestSettings):
                value = value.to_json()
                if not away_mode_supported():
                    value.pop("PreventAwayModeSleep", None)
            elif isinstance(value, enum.StrEnum):
                value = value.value
            data[item.metadata["key"]] = value
        return data

    def to_camel_json(self) -> dict[str, Any]:
        """camelCase view (status --json, MCP snapshot)."""
        data = self.to_file_json()

        def camel(key: str) -> str:
            return key[:1].lower() + key[1:]

        power = {camel(key): value for key, value in data.pop("PowerRequest").items()}
        result = {camel(key): value for key, value in data.items()}
        result["powerRequest"] = power
        return result


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "true/false"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _normalized(model: type[Any], raw: dict[str, Any], normalizers: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """Field name -> normalized value for each stored key present in ``raw`` (the JSON key, or else
    the field name itself); absent keys are left to the class defaults."""
    values: dict[str, Any] = {}
    for item in fields(model):
        key = item.metadata["key"]
        if key in raw:
            values[item.name] = normalizers[key](raw[key])
        elif item.name in raw:
            values[item.name] = normalizers[key](raw[item.name])
    return values


def _settings_normalizers() -> dict[str, Callable[[Any], Any]]:
    normalizers: dict[str, Callable[[Any], Any]] = {"PowerRequest": PowerRequestSettings.from_raw}
    for item in fields(Settings):
        key = item.metadata["key"]
        if key in NUMBER_RANGES:
            normalizers[key] = functools.partial(_first, normalize_number, NUMBER_RANGES[key])
        elif key in ENUM_SETTINGS:
            normalizers[key] = functools.partial(_first, normalize_enum, key)
        elif key in SOUND_SETTINGS:
            normalizers[key] = functools.partial(_first, normalize_sound)
        elif key in URL_SETTINGS:
            normalizers[key] = functools.partial(_first, normalize_url)
        elif key in BOOL_SETTINGS:
            normalizers[key] = _bool_field(bool(item.default))
    missing = {item.metadata["key"] for item in fields(Settings)} - normalizers.keys()
    assert not missing, f"settings without a normalizer: {sorted(missing)}"
    return normalizers


def _first(normalize: Callable[..., tuple[Any, str | None]], *arguments: Any) -> Any:
    return normalize(*arguments)[0]


BOOL_SETTINGS = ("ChangeLidAction", "WatchParentProcess", "EmergencyHibernationOnHighTemperature",
                 "RepeatClosedLidStopFollowUp", "WebhookPreviews", "LogFullText", "SuspendIgnoresOtherBlockers")
_POWER_REQUEST_NORMALIZERS: dict[str, Callable[[Any], Any]] = {
    "PreventSystemSleep": _bool_field(True),
    "PreventAwayModeSleep": lambda value: normalize_bool(value, away_mode_supported())[0],
    "PreventDisplaySleep": _bool_field(False),
    "Reason": _power_reason,
}
POWER_REQUEST_BOOL_SETTINGS = tuple(key for key in _POWER_REQUEST_NORMALIZERS if key != "Reason")
_SETTINGS_NORMALIZERS = _settings_normalizers()
# JSON key -> field name, in declaration (file) order.
SETTING_FIELDS: dict[str, str] = {item.metadata["key"]: item.name for item in fields(Settings)}
POWER_REQUEST_FIELDS: dict[str, str] = {item.metadata["key"]: item.name for item in fields(PowerRequestSettings)}


def setting_default(key: str) -> Any:
    """A stored key's class default (what a missing key gets); ``PowerRequest.<Key>`` for the nested ones."""
    if key.startswith("PowerRequest."):
        return getattr(PowerRequestSettings(), POWER_REQUEST_FIELDS[key.removeprefix("PowerRequest.")])
    return getattr(Settings(), SETTING_FIELDS[key])


def headless_defaults() -> Settings:
    """What a freshly created settings file holds (ChangeLidAction on, unlike the class default)."""
    return Settings(change_lid_action=True)


_last_validated: tuple[tuple[str, bool], Settings] | None = None


def validate_raw_settings(raw: Any) -> Settings:
    """``Settings.from_raw(raw)``, answered from memory when ``raw`` is exactly the raw object
    validated last (same JSON text, so ``1`` and ``true`` differ; same host answer for away mode).

    Hooks send the whole settings file with every ``start``; it rarely changes. Validation errors
    are never remembered (they raise every time)."""
    global _last_validated
    try:
        key = (json.dumps(raw, separators=(",", ":")), away_mode_supported())
    except Exception:  # noqa: BLE001 - not plain JSON: no memory, the model says what is wrong
        return Settings.from_raw(raw)
    remembered = _last_validated
    if remembered is not None and remembered[0] == key:
        return remembered[1]
    settings = Settings.from_raw(raw)
    _last_validated = (key, settings)
    return settings


def stop_follow_up_enabled(settings: Settings) -> bool:
    """Ask-before-sleep runs only with a valid URL, a reply window >= 20 s and a delay >= 10 s."""
    return (
        is_absolute_http_url(settings.closed_lid_stop_follow_up_webhook_url)
        and settings.closed_lid_stop_follow_up_delay_seconds >= 20
        and settings.post_stop_suspend_delay_seconds >= 10
    )
