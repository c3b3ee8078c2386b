"""Settings: model defaults and clamping, the file, CLI validation, interactive mode, runtime sync."""

from __future__ import annotations

import json
import stat

import pytest

from lidguard.settings import SettingsFileError, headless_defaults, load_settings, save_settings
from lidguard.settings.model import Settings, stop_follow_up_enabled


def test_headless_defaults_match_the_reference():
    data = headless_defaults().to_file_json()
    assert data["PowerRequest"] == {
        "PreventSystemSleep": True, "PreventDisplaySleep": False,
        "Reason": "LidGuard is keeping the system awake while an agent session is running."}
    expected = {
        "ChangeLidAction": True, "SuspendMode": "Sleep", "PostStopSuspendDelaySeconds": 10,
        "PostStopSuspendSound": "", "PostStopSuspendSoundVolumeOverridePercent": None,
        "SuspendHistoryEntryCount": 10, "PreSuspendWebhookUrl": "", "PostSessionEndWebhookUrl": "",
        "ClosedLidPermissionRequestDecision": "Deny", "WatchParentProcess": True, "SessionTimeoutMinutes": 12,
        "ServerRuntimeCleanupDelayMinutes": 10, "EmergencyHibernationOnHighTemperature": True,
        "EmergencyHibernationTemperatureMode": "Average", "EmergencyHibernationTemperatureCelsius": 93,
        "ClosedLidStopFollowUpWebhookUrl": "", "ClosedLidStopFollowUpDelaySeconds": 120,
        "RepeatClosedLidStopFollowUp": True, "ClosedLidStopFollowUpSound": "",
        "ClosedLidStopFollowUpSoundVolumeOverridePercent": None,
    }
    for key, value in expected.items():
        assert data[key] == value, key
    assert "PreventAwayModeSleep" not in data["PowerRequest"]  # Windows only


def test_missing_keys_in_an_existing_file_use_the_class_defaults():
    settings = Settings.from_raw({"SuspendMode": "Hibernate"})
    assert settings.change_lid_action is False  # class default, as the original tool
    assert settings.suspend_mode.value == "Hibernate"


def test_stored_values_are_normalized_not_rejected():  # the full rules: tests/settings
    settings = Settings.from_raw({
        "EmergencyHibernationTemperatureCelsius": 200, "PostStopSuspendDelaySeconds": -5,
        "EmergencyHibernationTemperatureMode": "weird", "PostStopSuspendSoundVolumeOverridePercent": 150,
        "SessionTimeoutMinutes": None, "PostStopSuspendSound": "off", "PowerRequest": {"Reason": "  "},
        "ClosedLidPermissionRequestDecision": "ask",
    })
    assert settings.emergency_hibernation_temperature_celsius == 110
    low = Settings.from_raw({"EmergencyHibernationTemperatureCelsius": 1})
    assert low.emergency_hibernation_temperature_celsius == 70
    assert settings.post_stop_suspend_delay_seconds == 0
    assert settings.emergency_hibernation_temperature_mode.value == "Average"
    assert settings.post_stop_suspend_sound_volume_override_percent == 100
    assert settings.session_timeout_minutes is None
    assert settings.post_stop_suspend_sound == ""
    assert settings.power_request.reason.startswith("LidGuard is keeping")
    assert settings.closed_lid_permission_request_decision.value == "Ask"


def test_stop_follow_up_needs_url_window_and_delay():
    base = headless_defaults().to_file_json()
    enabled = Settings.from_raw({**base, "ClosedLidStopFollowUpWebhookUrl": "http://127.0.0.1:1/x"})
    assert stop_follow_up_enabled(enabled)
    assert not stop_follow_up_enabled(Settings.from_raw(
        {**base, "ClosedLidStopFollowUpWebhookUrl": "http://127.0.0.1:1/x", "ClosedLidStopFollowUpDelaySeconds": 19}))
    assert not stop_follow_up_enabled(Settings.from_raw(
        {**base, "ClosedLidStopFollowUpWebhookUrl": "http://127.0.0.1:1/x", "PostStopSuspendDelaySeconds": 9}))
    assert not stop_follow_up_enabled(headless_defaults())


def test_settings_file_is_written_atomically_with_user_only_permissions(tmp_path):
    path = tmp_path / "LidGuard" / "settings.json"
    save_settings(path, headless_defaults())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_settings(path) == headless_defaults()
    assert not [p for p in path.parent.iterdir() if p.name != "settings.json"]  # no temp files left


def test_corrupt_settings_file_is_a_clear_error_and_is_not_overwritten(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ this is not json")
    with pytest.raises(SettingsFileError, match=str(path)):
        load_settings(path)
    for args in (["settings", "--suspend-mode", "hibernate"], ["remove-pre-suspend-webhook"]):
        result = lidguard.run(*args)
        assert result.returncode == 1, args
        assert len(result.stderr.strip().splitlines()) == 1
        assert str(path) in result.stderr
    interactive = lidguard.run("settings", input_text="\n" * 20)
    assert interactive.returncode == 1 and str(path) in interactive.stderr
    # How start/status carry on is tested with the hook path (tests/cli/test_hook_path.py); here: no
    # reader ever rewrites the file.
    for args in (["start", "--provider", "claude", "--session", "x"], ["status"], ["doctor"]):
        lidguard.run(*args)
    assert path.read_text() == "{ this is not json"
    reset = lidguard.run("settings", "--reset", "true", check=True)
    assert "Settings file:" in reset.stdout
    assert json.loads(path.read_text())["ChangeLidAction"] is True


@pytest.mark.parametrize("args, message", [
    (["--session-timeout-minutes", "0"],
     "The session-timeout-minutes option must be off or an integer from 1 to 10080."),
    (["--session-timeout-minutes", "9999999999"],
     "The session-timeout-minutes option must be off or an integer from 1 to 10080."),
    (["--server-runtime-cleanup-delay-minutes", "x"],
     "The server-runtime-cleanup-delay-minutes option must be off or an integer from 1 to 10080."),
    (["--suspend-history-count", "1001"], "The suspend-history-count option must be off or an integer from 1 to 1000."),
    (["--closed-lid-stop-follow-up-delay-seconds", "3601"],
     "The closed-lid-stop-follow-up-delay-seconds option must be an integer from 0 to 3600."),
    (["--emergency-hibernation-temperature-celsius", "69"],
     "The emergency-hibernation-temperature-celsius option must be an integer from 70 to 110."),
    (["--post-stop-suspend-delay-seconds", "-1"],
     "The post-stop-suspend-delay-seconds option must be an integer from 0 to 3600."),
    (["--post-stop-suspend-sound-volume-override-percent", "101"],
     "The post-stop-suspend-sound-volume-override-percent option must be off or an integer from 1 to 100."),
    (["--prevent-system-sleep", "maybe"], "The prevent-system-sleep option must be true or false."),
    (["--prevent-away-mode-sleep", "true"], "The prevent-away-mode-sleep option is only supported on Windows."),
    (["--suspend-mode", "nap"], "The suspend-mode option must be sleep or hibernate."),
    (["--closed-lid-permission-request-decision", "maybe"],
     "The closed-lid-permission-request-decision option must be deny, allow, or ask."),
    (["--pre-suspend-webhook-url", "off"], "lidguard remove-pre-suspend-webhook"),
    (["--post-session-end-webhook-url", "ftp://x"], "must be an absolute http or https URL"),
    (["--post-stop-suspend-sound", "/nonexistent-folder/x.wav"], "does not exist"),
    (["--post-stop-suspend-sound", "Trumpet"], "must be off, one of Asterisk, Beep, Exclamation, Hand, Question"),
])
def test_invalid_values_are_one_line_errors(lidguard, args, message):
    result = lidguard.run("settings", *args)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr


def test_valid_options_are_saved_normalized(lidguard, tmp_path):
    wav = tmp_path / "ding.wav"
    wav.write_bytes(b"RIFF")
    result = lidguard.run(
        "settings", "--session-timeout-minutes", "off", "--suspend-mode", "HIBERNATE",
        "--pre-suspend-webhook-url", "HTTP://Example.COM", "--post-stop-suspend-sound", str(wav),
        "--closed-lid-stop-follow-up-sound", "question", "--emergency-hibernation-temperature-mode=high",
        "--closed-lid-permission-request-decision", "ask", check=True)
    assert "Runtime is not running; saved settings will be used on the next start." in result.stdout
    assert "  Session timeout: 12 minutes -> off" in result.stdout  # only what changed is printed
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert stored["SessionTimeoutMinutes"] is None
    assert stored["SuspendMode"] == "Hibernate"
    assert stored["PreSuspendWebhookUrl"] == "http://example.com/"
    assert stored["PostStopSuspendSound"] == str(wav)
    assert stored["ClosedLidStopFollowUpSound"] == "Question"
    assert stored["EmergencyHibernationTemperatureMode"] == "High"
    assert stored["ClosedLidPermissionRequestDecision"] == "Ask"
    assert stat.S_IMODE((lidguard.data_dir / "settings.json").stat().st_mode) == 0o600


def test_running_runtime_receives_the_update(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    result = lidguard.run("settings", "--session-timeout-minutes", "30", check=True)
    assert "Runtime settings updated." in result.stdout
    assert lidguard.json("status")["settings"]["sessionTimeoutMinutes"] == 30


def test_remove_webhook_commands(lidguard):
    for command, option, missing, removed in (
        ("remove-pre-suspend-webhook", "--pre-suspend-webhook-url", "No pre-suspend webhook URL is configured.",
         "Pre-suspend webhook URL removed."),
        ("remove-post-session-end-webhook", "--post-session-end-webhook-url",
         "No post-session-end webhook URL is configured.", "Post-session-end webhook URL removed."),
        ("remove-closed-lid-stop-follow-up-webhook", "--closed-lid-stop-follow-up-webhook-url",
         "No closed lid stop follow-up webhook URL is configured.", "Closed lid stop follow-up webhook URL removed."),
    ):
        assert lidguard.run(command, check=True).stdout.strip() == missing
        lidguard.run("settings", option, "https://hooks.example/x", check=True)
        output = lidguard.run(command, check=True).stdout
        assert removed in output
        assert lidguard.run(command, check=True).stdout.strip() == missing


def test_interactive_mode_keeps_on_enter_validates_and_reports_eof(lidguard):
    answers = "\n".join(["false", "", "", "", "maybe", "99999", "25"]) + "\n" + "\n" * 40
    result = lidguard.run("settings", input_text=answers, check=True)
    assert "Prevent system sleep (stored: true, default: true, press Enter to keep stored): " in result.stdout
    assert "Session timeout minutes (stored: 12" in result.stdout
    assert "Session timeout minutes (stored: 12, default: 12, off|1-10080, press Enter to keep stored): " \
        in result.stdout
    assert "The session-timeout-minutes option must be off or an integer from 1 to 10080." in result.stdout
    assert "To remove the pre-suspend webhook run: lidguard remove-pre-suspend-webhook" in result.stdout
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert stored["PowerRequest"]["PreventSystemSleep"] is False
    assert stored["SessionTimeoutMinutes"] == 25
    ended = lidguard.run("settings", input_text="")
    assert ended.returncode == 1
    assert ended.stderr.strip() == "lidguard: Input ended before Prevent system sleep was entered."


def test_help_is_categorized_and_per_command(lidguard):
    summary = lidguard.run("help", check=True).stdout
    for title in ("Session Control:", "Settings & Suspend:", "Diagnostics:", "Managed / Internal Commands:",
                  "Paths & Notes:"):
        assert title in summary
    assert "--post-stop-suspend-delay-seconds" in lidguard.run("help", "settings", check=True).stdout
    assert "--post-stop-suspend-delay-seconds" in lidguard.run("settings", "--help", check=True).stdout
    assert "--prevent-away-mode-sleep" not in summary
    bare = lidguard.run()
    assert bare.returncode == 1 and "Session Control:" in bare.stdout
    unknown = lidguard.run("help", "nope")
    assert unknown.returncode == 1 and len(unknown.stderr.strip().splitlines()) == 1
    bad = lidguard.run("start", "--bogus")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1


def test_read_commands_take_json(lidguard):
    lidguard.set_machine(lid="closed", displays=[{"name": "eDP-1", "internal": True},
                                                  {"name": "HDMI-A-1", "internal": False}],
                         temperaturesCelsius=[40.0, 51.0])
    assert lidguard.json("current-lid-state") == {"lidSwitchState": "Closed"}
    assert lidguard.json("current-monitor-count")["visibleDisplayMonitorCount"] == 2
    assert lidguard.json("current-temperature")["temperatureCelsius"] == 46
    high = lidguard.run("current-temperature", "--temperature-mode", "high", check=True).stdout
    assert high.strip() == "Current recognized system temperature using High mode: 51 Celsius"
    bad = lidguard.run("current-temperature", "--temperature-mode", "hot")
    assert bad.returncode == 1 and "must be default, low, average, or high" in bad.stderr
    assert lidguard.json("suspend-history")["entries"] == []
    assert "No suspend history entries recorded." in lidguard.run("suspend-history", check=True).stdout
    doctor = lidguard.json("doctor")
    assert doctor["platform"] == "fake" and "paths" in doctor and doctor["nativeModules"]


def test_a_rejected_number_changes_nothing_and_sessions_keep_working(lidguard):
    lidguard.run("settings", "--session-timeout-minutes", "30", check=True)
    path = lidguard.data_dir / "settings.json"
    before = path.read_text()
    rejected = lidguard.run("settings", "--session-timeout-minutes", "9999999999", "--suspend-mode", "hibernate")
    assert rejected.returncode == 1
    assert path.read_text() == before
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)


def test_hand_edited_huge_numbers_are_clamped_and_named(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True)
    data = {"SessionTimeoutMinutes": 9999999999, "ServerRuntimeCleanupDelayMinutes": 10**20,
            "PostStopSuspendDelaySeconds": 10**12, "SuspendHistoryEntryCount": 0, "SuspendMode": "nap"}
    path.write_text(json.dumps(data))
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)
    settings = lidguard.json("status")["settings"]
    assert settings["sessionTimeoutMinutes"] == 10080
    assert settings["serverRuntimeCleanupDelayMinutes"] == 10080
    assert settings["postStopSuspendDelaySeconds"] == 3600
    assert settings["suspendHistoryEntryCount"] == 1
    assert json.loads(path.read_text()) == data  # readers never rewrite the file
    doctor = lidguard.run("doctor", check=True).stdout
    problems = [
        "SuspendMode: stored value \"nap\" is not one of Sleep, Hibernate; using Sleep.",
        "PostStopSuspendDelaySeconds: stored value 1000000000000 is out of range (0-3600); using 3600.",
        "SuspendHistoryEntryCount: stored value 0 is out of range (1-1000); using 1.",
        "SessionTimeoutMinutes: stored value 9999999999 is out of range (1-10080); using 10080.",
        "ServerRuntimeCleanupDelayMinutes: stored value 100000000000000000000 is out of range (1-10080); "
        "using 10080.",
    ]
    for problem in problems:
        assert f"  {problem}" in doctor, doctor
    assert lidguard.json("doctor")["settings"]["problems"] == problems
    shown = lidguard.run("settings", "--suspend-mode", "hibernate", check=True).stdout
    for problem in problems[1:]:
        assert f"  {problem}" in shown, shown
    stored = json.loads(path.read_text())  # an explicit change saves the values in use
    assert stored["SessionTimeoutMinutes"] == 10080 and stored["SuspendMode"] == "Hibernate"
    assert "Stored values" not in lidguard.run("settings", "--suspend-mode", "sleep", check=True).stdout


def test_interactive_settings_show_stored_problems_first(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"SessionTimeoutMinutes": 0}))
    result = lidguard.run("settings", input_text="\n" * 40, check=True)
    assert result.stdout.index("SessionTimeoutMinutes: stored value 0 is out of range (1-10080); using 1.") < \
        result.stdout.index("Prevent system sleep (stored:")
    assert "Session timeout minutes (stored: 1," in result.stdout


def test_doctor_reports_a_corrupt_settings_file_and_carries_on(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ corrupt")
    result = lidguard.run("doctor", check=True)
    assert f"The settings file {path} cannot be used: it is not valid JSON" in result.stdout
    assert "Capabilities:" in result.stdout and "Paths:" in result.stdout
    report = lidguard.json("doctor")["settings"]
    assert report["file"] == str(path) and report["exists"] and str(path) in report["error"]
    assert path.read_text() == "{ corrupt"


def test_changing_the_stop_delays_refreshes_the_installed_stop_hooks_only(lidguard):
    """Issue 32.5: `lidguard settings` changing the post-stop delay or the reply window rewrites the Stop hooks
    of every agent whose hooks are installed (new timeout), and leaves agents without lidguard hooks alone."""
    for folder in (".claude", ".codex", ".gemini"):
        (lidguard.home / folder).mkdir()
    lidguard.run("hook-install", "--provider", "claude", check=True)
    lidguard.run("hook-install", "--provider", "codex", check=True)
    result = lidguard.run("settings", "--post-stop-suspend-delay-seconds", "40",
                          "--closed-lid-stop-follow-up-delay-seconds", "60", check=True)
    assert "Stop hooks refreshed (timeout 420 seconds): Claude, Codex" in result.stdout, result.stdout
    blocks = {block["provider"]: block["status"] for block in lidguard.json("hook-status")["providers"]}
    assert blocks["Claude"] == "Installed" and blocks["Codex"] == "Installed", blocks
    assert blocks["Gemini"] == "NotInstalled"
    assert not (lidguard.home / ".gemini" / "settings.json").exists()
    claude = json.loads((lidguard.home / ".claude" / "settings.json").read_text())
    assert claude["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 40 + 60 + 300 + 20
    unchanged = lidguard.run("settings", "--suspend-mode", "hibernate", check=True)
    assert "Stop hooks refreshed" not in unchanged.stdout


def test_interactive_settings_ask_every_setting_list_choices_and_say_what_changed(lidguard):
    # Issue 33.15: every setting (not 16 of them), the choices of enum prompts, "Changed: ..." at the end.
    from lidguard.cli.settings_commands import _ASKED
    from lidguard.platform.host import away_mode_supported
    from lidguard.settings import SETTING_OPTIONS

    asked = [name for _label, name in _ASKED if name != "prevent-away-mode-sleep" or away_mode_supported()]
    answers = ["hibernate" if name == "suspend-mode" else "aconly" if name == "power-policy" else ""
               for name in asked]
    result = lidguard.run("settings", input_text="\n".join(answers) + "\n", check=True)
    prompts = result.stdout.count("press Enter to keep stored): ")
    assert prompts == len(SETTING_OPTIONS) - (0 if away_mode_supported() else 1) == len(asked)
    for text in ("Suspend mode (stored: Sleep, default: Sleep, choices: sleep, hibernate, press Enter",
                 "Power policy (stored: AcOrBattery, default: AcOrBattery, choices: acorbattery, aconly, press",
                 "Closed lid permission request decision (stored: Deny, default: Deny, choices: deny, allow, ask,",
                 "Dim display brightness percent (stored: ", "Log full text (stored: false",
                 "Post-stop suspend sound (stored: off, default: off, choices: off, "):
        assert text in result.stdout, text
    tail = result.stdout.rsplit("press Enter to keep stored): ", 1)[1].splitlines()
    assert "Changed:" in tail and "  Suspend mode: Sleep -> Hibernate" in tail, tail
    assert not any(line.startswith("  Session timeout minutes: ") for line in tail), "no whole dump"
    assert json.loads((lidguard.data_dir / "settings.json").read_text())["PowerPolicy"] == "AcOnly"
    same = lidguard.run("settings", input_text="\n" * len(asked), check=True).stdout
    assert same.rsplit("press Enter to keep stored): ", 1)[1].splitlines()[0:2] == [
        f"Settings file: {lidguard.data_dir / 'settings.json'}", "Nothing changed."], same[-600:]
