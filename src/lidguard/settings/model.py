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
import json
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..platform.api import SuspendMode, TemperatureMode
from ..platform.host import away_mode_supported

__all__ = [
    "DEFAULT_POWER_REQUEST_REASON",
    "DELAY_SECONDS_MAX",
    "EMERGENCY_TEMPERATURE_MAX",
    "EMERGENCY_TEMPERATURE_MIN",
    "ENUM_SETTINGS",
    "LEASE_HOURS_MAX",
    "MINUTES_MAX",
    "NUMBER_RANGES",
    "NumberRange",
    "PermissionRequestDecision",
    "PowerPolicy",
    "PowerRequestSettings",
    "SOUND_SETTINGS",
    "SUSPEND_HISTORY_COUNT_MAX",
    "SYSTEM_SOUND_NAMES",
    "Settings",
    "SuspendModeSetting",
    "TemperatureModeSetting",
    "URL_SETTINGS",
    "headless_defaults",
    "is_absolute_http_url",
    "normalize_bool",
    "normalize_enum",
    "normalize_number",
    "normalize_sound",
    "normalize_url",
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


class PowerRequestSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    prevent_system_sleep: bool = Field(True, alias="PreventSystemSleep")
    prevent_away_mode_sleep: bool = Field(default_factory=away_mode_supported, alias="PreventAwayModeSleep")
    prevent_display_sleep: bool = Field(False, alias="PreventDisplaySleep")
    reason: str = Field(DEFAULT_POWER_REQUEST_REASON, alias="Reason")

    @field_validator("prevent_system_sleep", "prevent_away_mode_sleep", "prevent_display_sleep", mode="before")
    @classmethod
    def _bool(cls, value: Any, info: ValidationInfo) -> bool:
        return normalize_bool(value, _field_default(cls, info.field_name))[0]

    @field_validator("reason", mode="before")
    @classmethod
    def _blank_reason_is_default(cls, value: Any) -> str:
        text = str(value or "").strip()
        return text or DEFAULT_POWER_REQUEST_REASON

    @field_validator("prevent_away_mode_sleep", mode="after")
    @classmethod
    def _away_mode_is_windows_only(cls, value: bool) -> bool:
        return value and away_mode_supported()


class Settings(BaseModel):
    """Field defaults are the class defaults (a key missing from an existing file gets these)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    power_request: PowerRequestSettings = Field(default_factory=PowerRequestSettings, alias="PowerRequest")
    change_lid_action: bool = Field(False, alias="ChangeLidAction")
    suspend_mode: SuspendModeSetting = Field(SuspendModeSetting.SLEEP, alias="SuspendMode")
    post_stop_suspend_delay_seconds: int = Field(10, alias="PostStopSuspendDelaySeconds")
    post_stop_suspend_sound: str = Field("", alias="PostStopSuspendSound")
    post_stop_suspend_sound_volume_override_percent: int | None = Field(
        None, alias="PostStopSuspendSoundVolumeOverridePercent"
    )
    suspend_history_entry_count: int | None = Field(10, alias="SuspendHistoryEntryCount")
    pre_suspend_webhook_url: str = Field("", alias="PreSuspendWebhookUrl")
    post_session_end_webhook_url: str = Field("", alias="PostSessionEndWebhookUrl")
    closed_lid_permission_request_decision: PermissionRequestDecision = Field(
        PermissionRequestDecision.DENY, alias="ClosedLidPermissionRequestDecision"
    )
    watch_parent_process: bool = Field(True, alias="WatchParentProcess")
    session_timeout_minutes: int | None = Field(12, alias="SessionTimeoutMinutes")
    # A session's hard lease from its latest start: past it the session ends (reason session-lease-expired).
    session_lease_hours: int | None = Field(8, alias="SessionLeaseHours")
    server_runtime_cleanup_delay_minutes: int | None = Field(10, alias="ServerRuntimeCleanupDelayMinutes")
    emergency_hibernation_on_high_temperature: bool = Field(True, alias="EmergencyHibernationOnHighTemperature")
    emergency_hibernation_temperature_mode: TemperatureModeSetting = Field(
        TemperatureModeSetting.AVERAGE, alias="EmergencyHibernationTemperatureMode"
    )
    emergency_hibernation_temperature_celsius: int = Field(93, alias="EmergencyHibernationTemperatureCelsius")
    closed_lid_stop_follow_up_webhook_url: str = Field("", alias="ClosedLidStopFollowUpWebhookUrl")
    closed_lid_stop_follow_up_delay_seconds: int = Field(120, alias="ClosedLidStopFollowUpDelaySeconds")
    repeat_closed_lid_stop_follow_up: bool = Field(True, alias="RepeatClosedLidStopFollowUp")
    closed_lid_stop_follow_up_sound: str = Field("", alias="ClosedLidStopFollowUpSound")
    closed_lid_stop_follow_up_sound_volume_override_percent: int | None = Field(
        None, alias="ClosedLidStopFollowUpSoundVolumeOverridePercent"
    )
    power_policy: PowerPolicy = Field(PowerPolicy.AC_OR_BATTERY, alias="PowerPolicy")
    battery_floor_percent: int = Field(30, alias="BatteryFloorPercent")
    # Seed 004: dim the built-in display while sessions are protected, the lid is open and the user has
    # been idle this long (off: never); restored on activity (runtime/components/dimming.py).
    dim_display_when_idle_minutes: int | None = Field(None, alias="DimDisplayWhenIdleMinutes")
    dim_display_brightness_percent: int = Field(20, alias="DimDisplayBrightnessPercent")
    webhook_previews: bool = Field(True, alias="WebhookPreviews")  # prompt/answer text in webhook bodies
    log_full_text: bool = Field(False, alias="LogFullText")  # prompt/reply text in hook event logs (debugging)

    # -- normalization of stored and received values (clamping, never rejecting) -------------------
    @field_validator("power_request", mode="before")
    @classmethod
    def _power_request(cls, value: Any) -> Any:
        return value if isinstance(value, dict | PowerRequestSettings) else PowerRequestSettings()

    @field_validator(
        "change_lid_action", "watch_parent_process", "emergency_hibernation_on_high_temperature",
        "repeat_closed_lid_stop_follow_up", "webhook_previews", "log_full_text",
        mode="before",
    )
    @classmethod
    def _bool(cls, value: Any, info: ValidationInfo) -> bool:
        return normalize_bool(value, _field_default(cls, info.field_name))[0]

    @field_validator(
        "suspend_mode", "closed_lid_permission_request_decision", "emergency_hibernation_temperature_mode",
        "power_policy",
        mode="before",
    )
    @classmethod
    def _enum(cls, value: Any, info: ValidationInfo) -> enum.StrEnum:
        return normalize_enum(_alias(info.field_name), value)[0]

    @field_validator(
        "session_timeout_minutes", "session_lease_hours", "server_runtime_cleanup_delay_minutes",
        "post_stop_suspend_delay_seconds",
        "closed_lid_stop_follow_up_delay_seconds", "suspend_history_entry_count",
        "emergency_hibernation_temperature_celsius", "post_stop_suspend_sound_volume_override_percent",
        "closed_lid_stop_follow_up_sound_volume_override_percent", "battery_floor_percent",
        "dim_display_when_idle_minutes", "dim_display_brightness_percent",
        mode="before",
    )
    @classmethod
    def _number(cls, value: Any, info: ValidationInfo) -> int | None:
        return normalize_number(NUMBER_RANGES[_alias(info.field_name)], value)[0]

    @field_validator("post_stop_suspend_sound", "closed_lid_stop_follow_up_sound", mode="before")
    @classmethod
    def _sound(cls, value: Any) -> str:
        return normalize_sound(value)[0]

    @field_validator(
        "pre_suspend_webhook_url", "post_session_end_webhook_url", "closed_lid_stop_follow_up_webhook_url",
        mode="before",
    )
    @classmethod
    def _url(cls, value: Any) -> str:
        return normalize_url(value)[0]

    # -- serialization --------------------------------------------------------------------------
    def to_file_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        if not away_mode_supported():
            data["PowerRequest"].pop("PreventAwayModeSleep", None)
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


def _field_default(model: type[BaseModel], field_name: str | None) -> Any:
    """A field's class default (what a missing key gets), also for ``default_factory`` fields."""
    return model.model_fields[str(field_name)].get_default(call_default_factory=True)


def _alias(field_name: str | None) -> str:
    alias = Settings.model_fields[str(field_name)].alias
    assert alias is not None
    return alias


def headless_defaults() -> Settings:
    """What a freshly created settings file holds (ChangeLidAction on, unlike the class default)."""
    return Settings(ChangeLidAction=True)


_last_validated: tuple[tuple[str, bool], Settings] | None = None


def validate_raw_settings(raw: Any) -> Settings:
    """``Settings.model_validate(raw)``, answered from memory when ``raw`` is exactly the raw object
    validated last (same JSON text, so ``1`` and ``true`` differ; same host answer for away mode).

    Hooks send the whole settings file with every ``start``; it rarely changes. Validation errors
    are never remembered (they raise every time)."""
    global _last_validated
    try:
        key = (json.dumps(raw, separators=(",", ":")), away_mode_supported())
    except Exception:  # noqa: BLE001 - not plain JSON: no memory, the model says what is wrong
        return Settings.model_validate(raw)
    remembered = _last_validated
    if remembered is not None and remembered[0] == key:
        return remembered[1]
    settings = Settings.model_validate(raw)
    _last_validated = (key, settings)
    return settings


def stop_follow_up_enabled(settings: Settings) -> bool:
    """Ask-before-sleep runs only with a valid URL, a reply window >= 20 s and a delay >= 10 s."""
    return (
        is_absolute_http_url(settings.closed_lid_stop_follow_up_webhook_url)
        and settings.closed_lid_stop_follow_up_delay_seconds >= 20
        and settings.post_stop_suspend_delay_seconds >= 10
    )
