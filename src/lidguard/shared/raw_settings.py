"""settings.json as raw JSON for the hook path (stdlib only; the runtime validates it with the model).

``start`` sends the file's object as ``Settings`` with ``HasSettings: true`` (REFERENCE 1.2). A missing
file is created with the headless defaults; an unreadable or corrupt file is never rewritten: the
caller warns (naming the file, the same words as ``status`` and ``doctor``) and sends
``HasSettings: false`` with ``SettingsProblem``: the session is still kept awake, but the runtime fails
closed (no lid-policy change, no suspend or hibernate) until valid settings arrive.

What is sent is plain JSON whatever the file holds: only the keys the model knows (an unknown key
changes nothing), ``NaN``/``Infinity``/``1e400`` as their text (``fileio_open.NumberText``: the model reads
them as "not an integer", as it reads the float), a nested array or object in place of a setting's
value as a placeholder text the model treats the same way. The file is read non-blocking, must be a
regular file (a FIFO never hangs a hook) and at most ``MAX_SETTINGS_FILE_BYTES``.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "FAIL_CLOSED",
    "MAX_SETTINGS_FILE_BYTES",
    "RawSettings",
    "headless_defaults_json",
    "first_warning_for_runtime",
    "read_settings_for_start",
    "settings_file_problem",
]

# A settings file is a few hundred bytes; a huge one would not fit a request line (1 MiB).
MAX_SETTINGS_FILE_BYTES = 256 * 1024
DEFAULT_POWER_REQUEST_REASON = "LidGuard is keeping the system awake while an agent session is running."
# What lidguard does about an unusable settings file (issue 19 item 3: fail closed), part of the one sentence.
FAIL_CLOSED = ("Until it is fixed, lidguard changes no lid policy and never suspends or hibernates; it only keeps "
               "the computer awake while sessions work.")
FIX_HINT = "Fix it or run `lidguard settings --reset true` to replace it with defaults."
_NOT_A_VALUE = "[not a single value]"  # what the model reads like the array/object it replaces


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
        "SuspendIgnoresOtherBlockers": False,
        "ClosedLidStopFollowUpSound": "",
        "ClosedLidStopFollowUpSoundVolumeOverridePercent": None,
        "PowerPolicy": "AcOrBattery",
        "BatteryFloorPercent": 30,
        "DimDisplayWhenIdleMinutes": None,
        "DimDisplayBrightnessPercent": 20,
        "WebhookPreviews": True,
        "LogFullText": False,
        "UiCulture": "auto",
    }


class RawSettings:
    """The object to send (None: send ``HasSettings: false``) and the one warning to print, if any.

    ``problem`` is the file's problem alone (the line ``status``/``doctor`` print too)."""

    __slots__ = ("problem", "settings", "warning")

    def __init__(self, settings: dict[str, Any] | None, warning: str | None = None,
                 problem: str | None = None) -> None:
        self.settings = settings
        self.warning = warning
        self.problem = problem


def settings_file_problem(path: str | Path, reason: str) -> str:
    """The one sentence every command uses for an unusable settings file (start, status, doctor, MCP)."""
    return f"The settings file {path} cannot be used: {reason}. {FAIL_CLOSED}"


def _create_defaults(path: str | Path) -> RawSettings:
    from pathlib import Path

    from ..fileio import write_atomic

    path = Path(path)
    defaults = headless_defaults_json()
    try:
        write_atomic(path, json.dumps(defaults, indent=2) + "\n", follow_symlinks=True)
    except OSError as error:
        return RawSettings(defaults, f"Cannot create the settings file {path}: {error.strerror or error}; "
                                     "the session is protected with the default settings.")
    return RawSettings(defaults)


def _scalar(value: Any) -> Any:
    return _NOT_A_VALUE if isinstance(value, (dict, list)) else value


def _known_keys_only(value: dict[str, Any]) -> dict[str, Any]:
    """The keys the model reads, each a single JSON value (the model normalizes the rest)."""
    known = headless_defaults_json()
    sent: dict[str, Any] = {}
    for key in known:
        if key not in value:
            continue
        if key == "PowerRequest" and isinstance(value[key], dict):
            power = value[key]
            sent[key] = {name: _scalar(power[name]) for name in (*known[key], "PreventAwayModeSleep")
                         if name in power}
        else:
            sent[key] = _scalar(value[key])
    return sent


def _unusable(path: str | Path, reason: str) -> RawSettings:
    problem = settings_file_problem(path, reason)
    return RawSettings(None, f"{problem} {FIX_HINT}", problem)


def read_settings_for_start(path: str | Path) -> RawSettings:
    """Never raises, never blocks and never rewrites an existing file."""
    from ..fileio_open import UnusableFileError, read_json_object

    try:
        value = read_json_object(path, limit=MAX_SETTINGS_FILE_BYTES)
    except UnusableFileError as error:
        return _unusable(path, error.reason)
    except OSError as error:
        return _unusable(path, str(error.strerror or error).rstrip("."))
    if value is None:
        return _create_defaults(path)
    sent = _known_keys_only(value)
    try:
        json.dumps(sent, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError):
        return _unusable(path, "it holds text that is not valid Unicode")
    return RawSettings(sent)


def _identity(path: Path, *, follow_symlinks: bool = True) -> list[int] | None:
    import os

    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns]


def first_warning_for_runtime(runtime_dir: Path, socket_file: Path, settings_file: Path, problem: str) -> bool:
    """True once per runtime for one unusable settings file (README: ``start`` warns once).

    The runtime is told apart by its socket (each runtime binds a new one); the file by its identity
    and the problem's words. The marker lives in the runtime folder; when it cannot be read or
    written (a full disk), every start warns - never none."""
    import os

    runtime = _identity(socket_file, follow_symlinks=False)
    if runtime is None:
        return True
    seen = {"runtime": runtime, "file": _identity(settings_file), "problem": problem}
    marker = runtime_dir / "settings-warning.json"
    from ..fileio_open import UnusableFileError, read_json_object

    try:
        if read_json_object(marker, limit=64 * 1024) == json.loads(json.dumps(seen)):
            return False
    except (OSError, UnusableFileError):
        pass
    from ..fileio import write_atomic

    try:
        write_atomic(marker, json.dumps(seen), durable=False)
    except OSError:
        try:
            os.unlink(marker)  # a stale marker must not silence the next start
        except OSError:
            pass
    return True
