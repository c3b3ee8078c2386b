"""settings.json as raw JSON for the hook path (stdlib only; the runtime validates it with the model).

``start`` sends the file's object as ``Settings`` with ``HasSettings: true`` (REFERENCE 1.2). A missing
file is created with the headless defaults; an unreadable or corrupt file is never rewritten: the
caller warns once (naming the file) and sends ``HasSettings: false`` so the session is still protected
with the runtime's current settings.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MAX_SETTINGS_FILE_BYTES", "RawSettings", "headless_defaults_json", "read_settings_for_start"]

# A settings file is a few hundred bytes; a huge one would not fit a request line (1 MiB).
MAX_SETTINGS_FILE_BYTES = 256 * 1024
DEFAULT_POWER_REQUEST_REASON = "LidGuard is keeping the system awake while an agent session is running."
_KEEPS_CURRENT = "the session is protected with the runtime's current settings"


def headless_defaults_json() -> dict[str, Any]:
    """What ``Settings.to_file_json()`` of ``headless_defaults()`` holds (a test keeps the two equal)."""
    power: dict[str, Any] = {"PreventSystemSleep": True}
    from ..platform.host import away_mode_supported

    if away_mode_supported():
        power["PreventAwayModeSleep"] = True
    power["PreventDisplaySleep"] = False
    power["Reason"] = DEFAULT_POWER_REQUEST_REASON
    return {
        "PowerRequest": power,
        "ChangeLidAction": True,
        "SuspendMode": "Sleep",
        "PostStopSuspendDelaySeconds": 10,
        "PostStopSuspendSound": "",
        "PostStopSuspendSoundVolumeOverridePercent": None,
        "SuspendHistoryEntryCount": 10,
        "PreSuspendWebhookUrl": "",
        "PostSessionEndWebhookUrl": "",
        "ClosedLidPermissionRequestDecision": "Deny",
        "WatchParentProcess": True,
        "SessionTimeoutMinutes": 12,
        "SessionLeaseHours": 8,
        "ServerRuntimeCleanupDelayMinutes": 10,
        "EmergencyHibernationOnHighTemperature": True,
        "EmergencyHibernationTemperatureMode": "Average",
        "EmergencyHibernationTemperatureCelsius": 93,
        "ClosedLidStopFollowUpWebhookUrl": "",
        "ClosedLidStopFollowUpDelaySeconds": 120,
        "RepeatClosedLidStopFollowUp": True,
        "ClosedLidStopFollowUpSound": "",
        "ClosedLidStopFollowUpSoundVolumeOverridePercent": None,
    }


class RawSettings:
    """The object to send (None: send ``HasSettings: false``) and the one warning to print, if any."""

    __slots__ = ("settings", "warning")

    def __init__(self, settings: dict[str, Any] | None, warning: str | None = None) -> None:
        self.settings = settings
        self.warning = warning


def _read_bounded(path: Path) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read(MAX_SETTINGS_FILE_BYTES + 1)
    if len(data) > MAX_SETTINGS_FILE_BYTES:
        raise ValueError(f"it is larger than {MAX_SETTINGS_FILE_BYTES} bytes")
    return data


def _create_defaults(path: Path) -> RawSettings:
    from ..fileio import write_atomic  # tempfile is not free: only when the file is first created

    defaults = headless_defaults_json()
    try:
        write_atomic(path, json.dumps(defaults, indent=2) + "\n")
    except OSError as error:
        return RawSettings(defaults, f"Cannot create the settings file {path}: {error.strerror or error}; "
                                     "the session is protected with the default settings.")
    return RawSettings(defaults)


def read_settings_for_start(path: Path) -> RawSettings:
    """Never raises and never rewrites an existing file."""
    try:
        data = _read_bounded(path)
    except FileNotFoundError:
        return _create_defaults(path)
    except IsADirectoryError:
        return RawSettings(None, f"Cannot read the settings file {path}: it is a directory; {_KEEPS_CURRENT}.")
    except OSError as error:
        return RawSettings(None, f"Cannot read the settings file {path}: {error.strerror or error}; "
                                 f"{_KEEPS_CURRENT}.")
    except ValueError as error:
        return RawSettings(None, f"The settings file {path} cannot be used ({error}); {_KEEPS_CURRENT}.")
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        return RawSettings(None, f"The settings file {path} is not valid JSON ({detail}); {_KEEPS_CURRENT}. "
                                 "Fix it or run `lidguard settings --reset true`.")
    if not isinstance(value, dict):
        return RawSettings(None, f"The settings file {path} must hold a JSON object; {_KEEPS_CURRENT}.")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError):
        return RawSettings(None, f"The settings file {path} holds text that is not valid Unicode; "
                                 f"{_KEEPS_CURRENT}.")
    return RawSettings(value)

