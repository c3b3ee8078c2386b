"""The settings model: every setting of the original LidGuard plus the seeds' new ones.

JSON keys are PascalCase and compatible with the original tool's ``settings.json``. "off" is
stored as ``null`` for the nullable integers and as ``""`` for sounds and webhook URLs. Values read
from a file are normalized (clamped) rather than rejected; the CLI rejects out-of-range input.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..platform.api import SuspendMode, TemperatureMode
from ..platform.host import away_mode_supported

__all__ = [
    "DEFAULT_POWER_REQUEST_REASON",
    "EMERGENCY_TEMPERATURE_MAX",
    "EMERGENCY_TEMPERATURE_MIN",
    "PermissionRequestDecision",
    "PowerRequestSettings",
    "Settings",
    "SuspendModeSetting",
    "SYSTEM_SOUND_NAMES",
    "TemperatureModeSetting",
    "headless_defaults",
    "stop_follow_up_enabled",
]

DEFAULT_POWER_REQUEST_REASON = "LidGuard is keeping the system awake while an agent session is running."
EMERGENCY_TEMPERATURE_MIN = 70
EMERGENCY_TEMPERATURE_MAX = 110
SYSTEM_SOUND_NAMES = ("Asterisk", "Beep", "Exclamation", "Hand", "Question")


# The settings use the platform's own value types (one definition of each enum).
SuspendModeSetting = SuspendMode
TemperatureModeSetting = TemperatureMode


class PermissionRequestDecision(enum.StrEnum):
    DENY = "Deny"
    ALLOW = "Allow"
    ASK = "Ask"


def _enum_lenient(enum_type: type[enum.StrEnum], value: Any, fallback: enum.StrEnum) -> enum.StrEnum:
    if isinstance(value, enum_type):
        return value
    text = str(value or "").strip().lower()
    for member in enum_type:
        if member.value.lower() == text:
            return member
    return fallback


def _clamp_optional_minimum(value: Any, minimum: int) -> int | None:
    if value is None or value == "":
        return None
    number = int(value)
    return number if number >= minimum else None


class PowerRequestSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    prevent_system_sleep: bool = Field(True, alias="PreventSystemSleep")
    prevent_away_mode_sleep: bool = Field(default_factory=away_mode_supported, alias="PreventAwayModeSleep")
    prevent_display_sleep: bool = Field(False, alias="PreventDisplaySleep")
    reason: str = Field(DEFAULT_POWER_REQUEST_REASON, alias="Reason")

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

    # -- normalization of stored values (clamping, never rejecting) ------------------------------
    @field_validator("suspend_mode", mode="before")
    @classmethod
    def _suspend_mode(cls, value: Any) -> SuspendModeSetting:
        return _enum_lenient(SuspendModeSetting, value, SuspendModeSetting.SLEEP)  # type: ignore[return-value]

    @field_validator("emergency_hibernation_temperature_mode", mode="before")
    @classmethod
    def _temperature_mode(cls, value: Any) -> TemperatureModeSetting:
        return _enum_lenient(TemperatureModeSetting, value, TemperatureModeSetting.AVERAGE)  # type: ignore[return-value]

    @field_validator("closed_lid_permission_request_decision", mode="before")
    @classmethod
    def _decision(cls, value: Any) -> PermissionRequestDecision:
        return _enum_lenient(PermissionRequestDecision, value, PermissionRequestDecision.DENY)  # type: ignore[return-value]

    @field_validator("emergency_hibernation_temperature_celsius", mode="before")
    @classmethod
    def _clamp_temperature(cls, value: Any) -> int:
        number = 93 if value is None else int(value)
        return max(EMERGENCY_TEMPERATURE_MIN, min(EMERGENCY_TEMPERATURE_MAX, number))

    @field_validator("post_stop_suspend_delay_seconds", "closed_lid_stop_follow_up_delay_seconds", mode="before")
    @classmethod
    def _non_negative(cls, value: Any) -> int:
        return max(0, int(value or 0))

    @field_validator(
        "session_timeout_minutes", "server_runtime_cleanup_delay_minutes", "suspend_history_entry_count",
        mode="before",
    )
    @classmethod
    def _optional_at_least_one(cls, value: Any) -> int | None:
        return _clamp_optional_minimum(value, 1)

    @field_validator(
        "post_stop_suspend_sound_volume_override_percent",
        "closed_lid_stop_follow_up_sound_volume_override_percent",
        mode="before",
    )
    @classmethod
    def _volume(cls, value: Any) -> int | None:
        number = _clamp_optional_minimum(value, 1)
        return None if number is None else min(100, number)

    @field_validator(
        "post_stop_suspend_sound", "closed_lid_stop_follow_up_sound", "pre_suspend_webhook_url",
        "post_session_end_webhook_url", "closed_lid_stop_follow_up_webhook_url",
        mode="before",
    )
    @classmethod
    def _off_is_empty(cls, value: Any) -> str:
        text = str(value or "").strip()
        return "" if text.lower() == "off" else text

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


def headless_defaults() -> Settings:
    """What a freshly created settings file holds (ChangeLidAction on, unlike the class default)."""
    return Settings(ChangeLidAction=True)


def stop_follow_up_enabled(settings: Settings) -> bool:
    """Ask-before-sleep runs only with a valid URL, a reply window >= 20 s and a delay >= 10 s."""
    from .validation import is_absolute_http_url

    return (
        is_absolute_http_url(settings.closed_lid_stop_follow_up_webhook_url)
        and settings.closed_lid_stop_follow_up_delay_seconds >= 20
        and settings.post_stop_suspend_delay_seconds >= 10
    )
