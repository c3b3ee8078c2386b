"""Every numeric setting has a documented range: the CLI rejects values outside it, the model clamps
stored/runtime values into it, and ``load_settings_report`` names each stored value it did not use."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from lidguard.settings import load_settings_report
from lidguard.settings.model import NUMBER_RANGES, SETTING_FIELDS, Settings, headless_defaults
from lidguard.settings.validation import SETTING_OPTIONS, SettingsInputError

# (JSON key, CLI option, minimum, maximum, "off" allowed)
RANGES = [
    ("SessionTimeoutMinutes", "session-timeout-minutes", 1, 10080, True),
    ("SessionLeaseHours", "session-lease-hours", 1, 168, True),
    ("ServerRuntimeCleanupDelayMinutes", "server-runtime-cleanup-delay-minutes", 1, 10080, True),
    ("PostStopSuspendDelaySeconds", "post-stop-suspend-delay-seconds", 0, 3600, False),
    ("ClosedLidStopFollowUpDelaySeconds", "closed-lid-stop-follow-up-delay-seconds", 0, 3600, False),
    ("SuspendHistoryEntryCount", "suspend-history-count", 1, 1000, True),
    ("EmergencyHibernationTemperatureCelsius", "emergency-hibernation-temperature-celsius", 70, 110, False),
    ("PostStopSuspendSoundVolumeOverridePercent", "post-stop-suspend-sound-volume-override-percent", 1, 100, True),
    ("ClosedLidStopFollowUpSoundVolumeOverridePercent",
     "closed-lid-stop-follow-up-sound-volume-override-percent", 1, 100, True),
    ("BatteryFloorPercent", "battery-floor-percent", 30, 100, False),
    ("DimDisplayWhenIdleMinutes", "dim-display-when-idle-minutes", 1, 1440, True),
    ("DimDisplayBrightnessPercent", "dim-display-brightness-percent", 1, 100, False),
]
OPTIONS = {option.name: option for option in SETTING_OPTIONS}


def test_every_numeric_setting_has_a_documented_range():
    assert {key: (spec.minimum, spec.maximum, spec.off_allowed) for key, spec in NUMBER_RANGES.items()} == {
        key: (minimum, maximum, off) for key, _, minimum, maximum, off in RANGES}
    defaults = Settings()
    for key, spec in NUMBER_RANGES.items():  # one default per setting, in the table and the model
        assert getattr(defaults, _field(key)) == spec.default, key


@pytest.mark.parametrize("key, option, minimum, maximum, off", RANGES)
def test_cli_parsers_accept_the_range_and_reject_outside_it(key, option, minimum, maximum, off):
    parse = OPTIONS[option].parse
    assert parse(str(minimum)) == minimum
    assert parse(f" {maximum} ") == maximum
    expected = (f"The {option} option must be {'off or ' if off else ''}an integer from {minimum} to {maximum}.")
    for bad in (str(minimum - 1), str(maximum + 1), "9999999999", "99999999999999999999999", "1e3", "x", "",
                "1_000", "١٢"):
        with pytest.raises(SettingsInputError) as caught:
            parse(bad)
        assert str(caught.value) == expected, bad
    if off:
        assert parse("OFF") is None
    else:
        with pytest.raises(SettingsInputError):
            parse("off")


@pytest.mark.parametrize("key, option, minimum, maximum, off", RANGES)
def test_stored_values_are_clamped_into_the_range(key, option, minimum, maximum, off):
    assert getattr(Settings.from_raw({key: 10**30}), _field(key)) == maximum
    assert getattr(Settings.from_raw({key: minimum - 1}), _field(key)) == minimum
    assert getattr(Settings.from_raw({key: float(maximum)}), _field(key)) == maximum


def _field(key: str) -> str:
    return SETTING_FIELDS[key]


def test_a_stored_zero_timeout_is_not_off():
    settings = Settings.from_raw({"SessionTimeoutMinutes": 0, "SuspendHistoryEntryCount": 0,
                                        "ServerRuntimeCleanupDelayMinutes": -3,
                                        "PostStopSuspendSoundVolumeOverridePercent": 0})
    assert settings.session_timeout_minutes == 1
    assert settings.suspend_history_entry_count == 1
    assert settings.server_runtime_cleanup_delay_minutes == 1
    assert settings.post_stop_suspend_sound_volume_override_percent == 1
    assert Settings.from_raw({"SessionTimeoutMinutes": None}).session_timeout_minutes is None


def test_the_largest_values_keep_every_date_calculation_valid():
    largest = Settings.from_raw({key: 10**30 for key in NUMBER_RANGES})
    now = datetime.now(UTC)
    assert now + timedelta(minutes=largest.session_timeout_minutes or 0) < datetime.max.replace(tzinfo=UTC)
    assert now + timedelta(minutes=largest.server_runtime_cleanup_delay_minutes or 0) > now
    assert now + timedelta(seconds=largest.post_stop_suspend_delay_seconds) > now


def test_values_of_the_wrong_type_use_the_default():
    settings = Settings.from_raw({"SessionTimeoutMinutes": "abc", "PostStopSuspendDelaySeconds": True,
                                        "SuspendHistoryEntryCount": 2.5,
                                        "EmergencyHibernationTemperatureCelsius": None})
    assert settings.session_timeout_minutes == 12
    assert settings.post_stop_suspend_delay_seconds == 10
    assert settings.suspend_history_entry_count == 10
    assert settings.emergency_hibernation_temperature_celsius == 93


def write(tmp_path, data) -> object:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data))
    return path


def test_report_names_each_key_the_stored_value_and_what_is_used(tmp_path):
    data = {**headless_defaults().to_file_json(), "SessionTimeoutMinutes": 0, "SuspendHistoryEntryCount": 5000,
            "PostStopSuspendDelaySeconds": "soon", "EmergencyHibernationTemperatureMode": "Hot",
            "SuspendMode": "nap", "ClosedLidPermissionRequestDecision": 3, "PostStopSuspendSound": "Trumpet",
            "ClosedLidStopFollowUpSound": "question", "PreSuspendWebhookUrl": "ftp://example.com/x"}
    path = write(tmp_path, data)
    before = path.read_text()
    report = load_settings_report(path)
    assert report.error is None and report.exists
    assert report.problems == [
        "SuspendMode: stored value \"nap\" is not one of Sleep, Hibernate; using Sleep.",
        "PostStopSuspendDelaySeconds: stored value \"soon\" is not an integer; using 10.",
        "PostStopSuspendSound: stored value \"Trumpet\" is not off, a system sound name (Asterisk, Beep, "
        "Exclamation, Hand, Question) or a .wav file path; using off.",
        "SuspendHistoryEntryCount: stored value 5000 is out of range (1-1000); using 1000.",
        "PreSuspendWebhookUrl: stored value \"ftp://example.com/x\" is not an absolute http or https URL; "
        "using off.",
        "ClosedLidPermissionRequestDecision: stored value 3 is not one of Deny, Allow, Ask; using Deny.",
        "SessionTimeoutMinutes: stored value 0 is out of range (1-10080); using 1.",
        "EmergencyHibernationTemperatureMode: stored value \"Hot\" is not one of Low, Average, High; "
        "using Average.",
    ]
    settings = report.settings
    assert settings.session_timeout_minutes == 1 and settings.suspend_history_entry_count == 1000
    assert settings.post_stop_suspend_sound == "" and settings.closed_lid_stop_follow_up_sound == "Question"
    assert settings.pre_suspend_webhook_url == ""
    assert path.read_text() == before  # a reader never rewrites the file


def test_report_says_when_a_stored_wav_file_is_missing(tmp_path):
    wav = tmp_path / "gone.wav"
    path = write(tmp_path, {"PostStopSuspendSound": str(wav)})
    assert load_settings_report(path).problems == [
        f"PostStopSuspendSound: stored file \"{wav}\" does not exist; no sound plays until it does."]
    wav.write_bytes(b"RIFF")
    assert load_settings_report(path).problems == []


def test_good_files_missing_files_and_corrupt_files(tmp_path):
    path = write(tmp_path, headless_defaults().to_file_json())
    assert load_settings_report(path).problems == []
    missing = load_settings_report(tmp_path / "none.json")
    assert not missing.exists and missing.problems == [] and missing.settings == headless_defaults()
    path.write_text("{ nope")
    corrupt = load_settings_report(path)
    assert corrupt.error and str(path) in corrupt.error and corrupt.settings == headless_defaults()
    assert path.read_text() == "{ nope"


def test_texts_sent_with_every_settings_update_are_bounded():
    reason, url = OPTIONS["power-request-reason"].parse, OPTIONS["pre-suspend-webhook-url"].parse
    assert reason(" " + "r" * 512 + " ") == "r" * 512
    with pytest.raises(SettingsInputError, match="The power-request-reason option must be at most 512 characters."):
        reason("r" * 513)
    assert url("https://example.com/" + "p" * 2028) == "https://example.com/" + "p" * 2028
    with pytest.raises(SettingsInputError, match="must be a URL of at most 2048 characters"):
        url("https://example.com/" + "p" * 2029)


def test_true_false_settings_take_only_json_booleans(tmp_path):
    path = write(tmp_path, {"ChangeLidAction": "maybe", "WatchParentProcess": 0, "RepeatClosedLidStopFollowUp": False,
                            "PowerRequest": {"PreventSystemSleep": "no", "PreventDisplaySleep": True}})
    report = load_settings_report(path)
    assert report.error is None
    assert report.problems == [
        "PowerRequest.PreventSystemSleep: stored value \"no\" is not true or false; using True.",
        "ChangeLidAction: stored value \"maybe\" is not true or false; using False.",
        "WatchParentProcess: stored value 0 is not true or false; using True.",
    ]
    settings = report.settings
    assert settings.power_request.prevent_system_sleep is True and settings.power_request.prevent_display_sleep
    assert settings.change_lid_action is False and settings.watch_parent_process is True
    assert settings.repeat_closed_lid_stop_follow_up is False
    broken = load_settings_report(write(tmp_path, {"PowerRequest": [1, 2], "SuspendMode": "Hibernate"}))
    assert broken.error is None
    assert broken.problems == ["PowerRequest: stored value [1, 2] is not an object; using the defaults."]
    assert broken.settings.power_request == headless_defaults().power_request
    assert broken.settings.suspend_mode.value == "Hibernate"
