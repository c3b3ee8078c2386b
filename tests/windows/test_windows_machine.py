"""Lid notifications, displays, suspend, thermal, power source and sound over the fake binding."""

from __future__ import annotations

import subprocess

import pytest
from fake_winapi import FakeWindowsApi

from lidguard.platform.api import DisplayConnector, LidState, SuspendMode, count_visible_displays
from lidguard.platform.windows.backend import WindowsPlatform
from lidguard.platform.windows.display import WindowsDisplayReader
from lidguard.platform.windows.lid import WindowsLidStateReader
from lidguard.platform.windows.sound import SoundPlaybackError, WindowsSoundPlayer
from lidguard.platform.windows.suspend import MODERN_STANDBY_GUIDANCE, WindowsSuspender
from lidguard.platform.windows.thermal import CommandResult, WindowsThermalReader, parse_cim_output
from lidguard.platform.windows.winapi import (
    ERROR_ACCESS_DENIED,
    ERROR_NOT_ALL_ASSIGNED,
    ERROR_NOT_SUPPORTED,
    GUID_LIDSWITCH_STATE_CHANGE,
)


def test_lid_is_unknown_until_the_first_callback_then_follows_broadcasts():
    api = FakeWindowsApi()
    lid = WindowsLidStateReader(api)
    assert lid.read_lid_state() is LidState.UNKNOWN
    assert ("PowerSettingRegisterNotification", GUID_LIDSWITCH_STATE_CHANGE) in api.calls
    api.broadcast_lid(0)
    assert lid.read_lid_state() is LidState.CLOSED
    api.broadcast_lid(1)
    assert lid.read_lid_state() is LidState.OPEN
    assert api.names().count("PowerSettingRegisterNotification") == 1
    lid.close()
    assert api.notification_callbacks == {} and lid.read_lid_state() is LidState.UNKNOWN


def test_lid_registration_refused_stays_unknown_and_says_why():
    api = FakeWindowsApi()
    api.fail("PowerSettingRegisterNotification", ERROR_ACCESS_DENIED)
    lid = WindowsLidStateReader(api)
    assert lid.read_lid_state() is LidState.UNKNOWN
    assert "Windows error 5" in lid.describe()


@pytest.mark.parametrize(("monitors", "paths", "visible", "externals"), [
    (1, [(11, True)], 1, 0),                       # laptop panel only (eDP)
    (2, [(11, True), (5, True)], 2, 1),            # panel + HDMI
    (2, [(6, True), (10, False)], 1, 0),           # LVDS + an inactive DisplayPort connection
    (1, [(0x80000000, True), (10, True)], 1, 1),   # mirrored: one desktop monitor, external kept
    (0, [], 0, 0),                                 # lid closed, nothing attached
])
def test_displays_from_system_metrics_refined_by_query_display_config(monitors, paths, visible, externals):
    api = FakeWindowsApi()
    api.monitors, api.display_paths = monitors, paths
    displays = WindowsDisplayReader(api).list_connected_displays()
    assert count_visible_displays(displays, exclude_internal=False) == visible
    assert count_visible_displays(displays, exclude_internal=True) == externals


def test_display_query_failure_falls_back_to_the_desktop_count():
    api = FakeWindowsApi()
    api.monitors = 2
    api.fail("QueryDisplayConfig", ERROR_ACCESS_DENIED)
    assert WindowsDisplayReader(api).list_connected_displays() == [DisplayConnector("Monitor-1", False),
                                                                  DisplayConnector("Monitor-2", False)]


@pytest.mark.parametrize("mode", [SuspendMode.SLEEP, SuspendMode.HIBERNATE])
def test_suspend_enables_the_privilege_then_calls_set_suspend_state(mode):
    api = FakeWindowsApi()
    result = WindowsSuspender(api).suspend(mode)
    assert result.succeeded
    assert api.names() == ["AdjustTokenPrivileges", "SetSuspendState"]
    assert api.suspends == [mode is SuspendMode.HIBERNATE]


def test_missing_shutdown_privilege_fails_without_suspending():
    api = FakeWindowsApi()
    api.fail("AdjustTokenPrivileges", ERROR_NOT_ALL_ASSIGNED)
    result = WindowsSuspender(api).suspend(SuspendMode.SLEEP)
    assert not result.succeeded and "SeShutdownPrivilege" in result.message and api.suspends == []


def test_modern_standby_sleep_refusal_turns_the_display_off_and_gives_guidance():
    api = FakeWindowsApi()
    api.modern_standby = True
    api.fail("SetSuspendState", ERROR_NOT_SUPPORTED)
    result = WindowsSuspender(api).suspend(SuspendMode.SLEEP)
    assert not result.succeeded
    assert "Windows error 50" in result.message and MODERN_STANDBY_GUIDANCE in result.message
    assert "SendNotifyMessageW" in api.names()


def test_not_supported_without_modern_standby_is_a_plain_failure():
    api = FakeWindowsApi()
    api.fail("SetSuspendState", ERROR_NOT_SUPPORTED)
    result = WindowsSuspender(api).suspend(SuspendMode.SLEEP)
    assert not result.succeeded and "SendNotifyMessageW" not in api.names()


def test_thermal_parses_deci_kelvin_lines_and_treats_failures_as_unavailable():
    assert parse_cim_output("3032\r\n3132\r\n\r\nnot a number\n2731\n") == [30.05, 40.05]
    outputs = iter([CommandResult(0, "3232\n", ""), CommandResult(1, "", "Access denied\n"),
                    CommandResult(0, "\n", "")])
    reader = WindowsThermalReader(lambda argv, timeout: next(outputs))
    assert reader.read_temperatures_celsius() == [50.05]
    assert reader.read_temperatures_celsius() == [] and "Access denied" in (reader.last_failure or "")
    assert reader.read_temperatures_celsius() == []

    def timing_out(argv, timeout):
        raise subprocess.TimeoutExpired(argv, timeout)

    assert WindowsThermalReader(timing_out).read_temperatures_celsius() == []


def test_power_source_from_system_power_status():
    api = FakeWindowsApi()
    platform = WindowsPlatform(api)
    assert platform.describe_power_source().describe() == "AC, battery 80%, Charging"
    api.power_status = (0, 0, 42)
    assert platform.describe_power_source().to_json() == {"onAc": False, "batteryPercent": 42,
                                                          "batteryStatus": "Discharging"}
    api.power_status = (1, 128, 255)
    assert platform.describe_power_source().describe() == "AC"


def test_system_sounds_play_as_aliases_with_the_volume_override_restored():
    api = FakeWindowsApi()
    api.volume = (0.25, True)
    warnings = WindowsSoundPlayer(api).play("Beep", volume_percent=70)
    assert warnings == [] and api.sounds == [("SystemDefault", True)]
    volume_calls = [call for call in api.calls if call[0].startswith("Set")]
    assert volume_calls == [("SetMasterVolumeLevelScalar", 0.7), ("SetMute", False), ("SetMute", True),
                            ("SetMasterVolumeLevelScalar", 0.25)]
    assert api.volume == (0.25, True)


def test_volume_failures_are_warnings_and_a_failed_sound_still_restores(tmp_path):
    api = FakeWindowsApi()
    api.fail("SetMute", ERROR_ACCESS_DENIED)
    api.fail("PlaySound", ERROR_ACCESS_DENIED)
    wav = tmp_path / "done.wav"
    wav.write_bytes(b"RIFF")
    with pytest.raises(SoundPlaybackError) as raised:
        WindowsSoundPlayer(api).play(str(wav), volume_percent=50)
    assert any("unmute" in warning for warning in raised.value.warnings)
    assert api.volume[0] == 0.4
    with pytest.raises(SoundPlaybackError):
        WindowsSoundPlayer(api).play(str(tmp_path / "done.mp3"), volume_percent=None)
