"""Parsing and validating setting values typed by a person (CLI options, interactive prompts).

Each parser takes the raw text and returns the value to store, or raises ``SettingsInputError``
with the one-line message shown to the user.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..l10n import N_, _
from ..platform.host import away_mode_supported
from .model import NUMBER_RANGES, SYSTEM_SOUND_NAMES, is_absolute_http_url

__all__ = [
    "MAX_POWER_REQUEST_REASON_CHARS",
    "MAX_URL_CHARS",
    "SETTING_OPTIONS",
    "SettingOption",
    "SettingsInputError",
    "is_absolute_http_url",
    "normalize_webhook_url",
    "parse_bool",
    "range_text",
]

_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}


class SettingsInputError(ValueError):
    """A value a person typed is not acceptable; the message is shown as is."""


def parse_bool(text: str, option: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsInputError(_("The {option} option must be true or false.").format(option=option))


# Texts sent to the runtime with every settings update stay far below the request size limit.
MAX_POWER_REQUEST_REASON_CHARS = 512
MAX_URL_CHARS = 2048
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,30}")


def _parse_int(text: str) -> int | None:
    """ASCII digits with an optional sign, nothing else (no "1_000", "1e3" or other scripts' digits)."""
    value = text.strip()
    return int(value) if _INTEGER_TEXT.fullmatch(value) else None


def _bounded(option: str, json_key: str) -> Callable[[str], int | None]:
    """An integer within ``NUMBER_RANGES[json_key]``, or ``off`` (None) where the setting allows it."""
    spec = NUMBER_RANGES[json_key]

    def parse(text: str) -> int | None:
        if spec.off_allowed and text.strip().lower() == "off":
            return None
        number = _parse_int(text)
        if number is None or not spec.minimum <= number <= spec.maximum:
            message = _("The {option} option must be off or an integer from {minimum} to {maximum}.") \
                if spec.off_allowed else _("The {option} option must be an integer from {minimum} to {maximum}.")
            raise SettingsInputError(message.format(option=option, minimum=spec.minimum, maximum=spec.maximum))
        return number

    return parse


def range_text(json_key: str) -> str:
    """``off|1-10080`` / ``0-3600``: the accepted values, for help text and prompts."""
    spec = NUMBER_RANGES[json_key]
    return f"{'off|' if spec.off_allowed else ''}{spec.text}"


def _choice(option: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        for choice in choices:
            if choice.lower() == value:
                return choice
        if len(choices) == 2:
            message = _("The {option} option must be {first} or {last}.")
        else:
            message = _("The {option} option must be {first}, or {last}.")
        first = ", ".join(choice.lower() for choice in choices[:-1])
        raise SettingsInputError(message.format(option=option, first=first, last=choices[-1].lower()))

    return parse


def parse_sound(option: str) -> Callable[[str], str]:
    """off/empty, a system sound name (canonical case), or an existing .wav file (full path)."""

    def parse(text: str) -> str:
        value = text.strip()
        if value == "" or value.lower() == "off":
            return ""
        for name in SYSTEM_SOUND_NAMES:
            if name.lower() == value.lower():
                return name
        path = Path(os.path.expanduser(value))
        if path.suffix.lower() != ".wav":
            raise SettingsInputError(_("The {option} option must be off, one of {names}, or a .wav file path.").format(
                option=option, names=", ".join(SYSTEM_SOUND_NAMES)))
        path = path.resolve()
        if not path.parent.is_dir():
            raise SettingsInputError(_("The folder of the {option} file does not exist: {path}").format(
                option=option, path=path.parent))
        if path.is_dir():
            raise SettingsInputError(_("The {option} path is a folder, not a .wav file: {path}").format(
                option=option, path=path))
        if not path.is_file():
            raise SettingsInputError(_("The {option} file does not exist: {path}").format(option=option, path=path))
        return str(path)

    return parse


def normalize_webhook_url(text: str) -> str:
    """Stores the absolute form (scheme and host lower-cased, "/" added to a bare host)."""
    parts = urlsplit(text.strip())
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, parts.fragment))


def _webhook_url(option: str, remove_command: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip()
        if value == "" or value.lower() == "off":
            raise SettingsInputError(_("The {option} option needs a URL. To turn the webhook off, run: lidguard "
                                       "{command}").format(option=option, command=remove_command))
        if not is_absolute_http_url(value):
            raise SettingsInputError(_("The {option} option must be an absolute http or https URL.").format(
                option=option))
        if len(value) > MAX_URL_CHARS:
            raise SettingsInputError(_("The {option} option must be a URL of at most {count} characters.").format(
                option=option, count=MAX_URL_CHARS))
        return normalize_webhook_url(value)

    return parse


def _away_mode(text: str) -> bool:
    if not away_mode_supported():
        raise SettingsInputError(_(
            "The prevent-away-mode-sleep option is only supported on Windows. "
            "Use prevent-system-sleep on this platform."
        ))
    return parse_bool(text, "prevent-away-mode-sleep")


def _reason(text: str) -> str:
    value = text.strip()
    if len(value) > MAX_POWER_REQUEST_REASON_CHARS:
        raise SettingsInputError(_("The power-request-reason option must be at most {count} characters.").format(
            count=MAX_POWER_REQUEST_REASON_CHARS))
    return value


@dataclass(frozen=True, slots=True)
class SettingOption:
    """One CLI option: its flags, the JSON path it sets and the parser of its text."""

    flags: tuple[str, ...]
    json_path: tuple[str, ...]
    parse: Callable[[str], Any]
    metavar: str
    help: str

    @property
    def name(self) -> str:
        return self.flags[0]


def _bool_option(flags: tuple[str, ...], path: tuple[str, ...], help_text: str) -> SettingOption:
    return SettingOption(flags, path, lambda text: parse_bool(text, flags[0]), "true|false", help_text)


def _number_option(flags: tuple[str, ...], json_key: str, help_text: str) -> SettingOption:
    return SettingOption(flags, (json_key,), _bounded(flags[0], json_key), range_text(json_key), help_text)


SETTING_OPTIONS: tuple[SettingOption, ...] = (
    _bool_option(("prevent-system-sleep", "system-required"), ("PowerRequest", "PreventSystemSleep"),
                 N_("Block idle system sleep while a session works.")),
    SettingOption(("prevent-away-mode-sleep", "away-mode-required"), ("PowerRequest", "PreventAwayModeSleep"),
                  _away_mode, "true|false", N_("Windows only: request away mode.")),
    _bool_option(("prevent-display-sleep", "display-required"), ("PowerRequest", "PreventDisplaySleep"),
                 N_("Also keep the display awake.")),
    SettingOption(("power-request-reason", "reason"), ("PowerRequest", "Reason"), _reason, "TEXT",
                  N_("Reason shown to the OS for the keep-awake request (empty = default).")),
    _bool_option(("change-lid-action", "lid-action"), ("ChangeLidAction",),
                 N_("Block lid-close sleep while a session works.")),
    _bool_option(("watch-parent-process", "watch-parent"), ("WatchParentProcess",),
                 N_("End a session when its agent process exits.")),
    _number_option(("session-timeout-minutes",), "SessionTimeoutMinutes",
                   N_("Soft-lock a session after N minutes without activity (at most one week).")),
    _number_option(("session-lease-hours",), "SessionLeaseHours",
                   N_("End a session N hours after its latest start, whatever happens (off = never; at most one "
                      "week).")),
    _number_option(("server-runtime-cleanup-delay-minutes",), "ServerRuntimeCleanupDelayMinutes",
                   N_("Stop the idle runtime after N minutes (off = at once; at most one week).")),
    _bool_option(("emergency-hibernation-on-high-temperature",), ("EmergencyHibernationOnHighTemperature",),
                 N_("Hibernate at once when the closed laptop overheats.")),
    SettingOption(("emergency-hibernation-temperature-mode",), ("EmergencyHibernationTemperatureMode",),
                  _choice("emergency-hibernation-temperature-mode", ("Low", "Average", "High")),
                  "low|average|high", N_("How thermal zones are combined.")),
    _number_option(("emergency-hibernation-temperature-celsius",), "EmergencyHibernationTemperatureCelsius",
                   N_("Emergency hibernation threshold in Celsius.")),
    SettingOption(("suspend-mode",), ("SuspendMode",), _choice("suspend-mode", ("Sleep", "Hibernate")),
                  "sleep|hibernate", N_("What to do once the last session is done.")),
    _number_option(("post-stop-suspend-delay-seconds",), "PostStopSuspendDelaySeconds",
                   N_("Delay before suspending in seconds (0 = at once; at most one hour).")),
    SettingOption(("post-stop-suspend-sound",), ("PostStopSuspendSound",), parse_sound("post-stop-suspend-sound"),
                  "off|NAME|WAV", N_("Sound played before suspending.")),
    _number_option(("post-stop-suspend-sound-volume-override-percent",),
                   "PostStopSuspendSoundVolumeOverridePercent", N_("Master volume in percent while the sound plays.")),
    _bool_option(("suspend-ignores-other-blockers",), ("SuspendIgnoresOtherBlockers",),
                 N_("Suspend even while another program blocks sleep (logind suspend-ignore-inhibit; "
                 "default: wait for it and name it in status).")),
    _number_option(("suspend-history-count", "suspend-history-entry-count"), "SuspendHistoryEntryCount",
                   N_("Suspend history entries kept (off = no history).")),
    SettingOption(("pre-suspend-webhook-url", "suspend-webhook-url"), ("PreSuspendWebhookUrl",),
                  _webhook_url("pre-suspend-webhook-url", "remove-pre-suspend-webhook"), "URL",
                  N_("POSTed right before suspending.")),
    SettingOption(("post-session-end-webhook-url",), ("PostSessionEndWebhookUrl",),
                  _webhook_url("post-session-end-webhook-url", "remove-post-session-end-webhook"), "URL",
                  N_("POSTed when a session ends without a suspend.")),
    SettingOption(("closed-lid-permission-request-decision", "permission-request-decision-when-lid-closed"),
                  ("ClosedLidPermissionRequestDecision",),
                  _choice("closed-lid-permission-request-decision", ("Deny", "Allow", "Ask")),
                  "deny|allow|ask", N_("Answer to permission requests while the lid is closed.")),
    SettingOption(("closed-lid-stop-follow-up-webhook-url",), ("ClosedLidStopFollowUpWebhookUrl",),
                  _webhook_url("closed-lid-stop-follow-up-webhook-url", "remove-closed-lid-stop-follow-up-webhook"),
                  "URL", N_("Ask-before-sleep notification endpoint.")),
    _number_option(("closed-lid-stop-follow-up-delay-seconds",), "ClosedLidStopFollowUpDelaySeconds",
                   N_("Reply window for ask-before-sleep in seconds (>= 20 to enable; at most one hour).")),
    _bool_option(("repeat-closed-lid-stop-follow-up",), ("RepeatClosedLidStopFollowUp",),
                 N_("Ask again on the next stop of a continued turn.")),
    SettingOption(("closed-lid-stop-follow-up-sound",), ("ClosedLidStopFollowUpSound",),
                  parse_sound("closed-lid-stop-follow-up-sound"), "off|NAME|WAV",
                  N_("Sound played when the ask-before-sleep notification goes out.")),
    _number_option(("closed-lid-stop-follow-up-sound-volume-override-percent",),
                   "ClosedLidStopFollowUpSoundVolumeOverridePercent",
                   N_("Master volume in percent while the ask-before-sleep sound plays.")),
    _bool_option(("webhook-previews",), ("WebhookPreviews",),
                 N_("Send the prompt preview and the last assistant message with webhooks.")),
    _bool_option(("log-full-text",), ("LogFullText",),
                 N_("Write prompt and reply text into the hook event logs (debugging; default: length and hash).")),
    SettingOption(("power-policy",), ("PowerPolicy",), _choice("power-policy", ("AcOrBattery", "AcOnly")),
                  "acorbattery|aconly", N_("Protect on AC or on battery above the floor, or on AC only.")),
    _number_option(("battery-floor-percent",), "BatteryFloorPercent",
                   N_("On battery below this charge protection is held back (sessions stay).")),
    _number_option(("dim-display-when-idle-minutes",), "DimDisplayWhenIdleMinutes",
                   N_("Dim the built-in display after N idle minutes while sessions are protected and the lid is "
                   "open (off = never; restored on activity).")),
    _number_option(("dim-display-brightness-percent",), "DimDisplayBrightnessPercent",
                   N_("Brightness in percent of the maximum that the idle display is dimmed to.")),
    SettingOption(("ui-culture",), ("UiCulture",),
                  _choice("ui-culture", ("auto", "en", "ko", "ja", "zh-Hans", "zh-Hant")),
                  "auto|en|ko|ja|zh-Hans|zh-Hant",
                  N_("Language of what lidguard shows (auto = LIDGUARD_UI_CULTURE, else the locale).")),
)
