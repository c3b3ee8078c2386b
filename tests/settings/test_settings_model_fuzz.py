"""The settings model is a boundary (the settings file, every `start` request): whatever JSON arrives,
``Settings.from_raw`` gives usable settings - every number inside its range (or off where off is
allowed), every switch a real bool, every enum a member - or, for anything but an object, one
ValueError. What it writes back reads back to the same settings with nothing to report."""

from __future__ import annotations

import enum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lidguard.fileio import NumberText
from lidguard.settings.model import (
    BOOL_SETTINGS,
    ENUM_SETTINGS,
    NUMBER_RANGES,
    POWER_REQUEST_FIELDS,
    SETTING_FIELDS,
    Settings,
    SettingsShapeError,
    headless_defaults,
)
from lidguard.settings.problems import find_problems

KEYS = [*SETTING_FIELDS, *list(SETTING_FIELDS.values())[:4], "Unknown", "powerRequest", ""]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["off", " OFF ", "hibernate", " Sleep", "ask", "AcOnly", "high", "Beep",
                                           "x.wav", "http://127.0.0.1/x", "https://h", "ftp://x", "\ud800", "\x00"]),
    st.sampled_from([NumberText("NaN"), NumberText("1e400"), NumberText("-Infinity")]),
)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=3), max_leaves=8)
POWER = st.dictionaries(st.sampled_from([*POWER_REQUEST_FIELDS, "reason", "Other"]), JSON, max_size=5)
RAW = st.dictionaries(st.sampled_from(KEYS), JSON, max_size=12).flatmap(
    lambda raw: st.just(raw) | POWER.map(lambda power: {**raw, "PowerRequest": power}))


def _assert_usable(value: Settings) -> None:
    for key, name in SETTING_FIELDS.items():
        stored = getattr(value, name)
        if key in NUMBER_RANGES:
            spec = NUMBER_RANGES[key]
            if stored is None:
                assert spec.off_allowed, key
            else:
                assert type(stored) is int and spec.minimum <= stored <= spec.maximum, (key, stored)
        elif key in BOOL_SETTINGS:
            assert type(stored) is bool, key
        elif key in ENUM_SETTINGS:
            assert isinstance(stored, ENUM_SETTINGS[key][0]) and isinstance(stored, enum.StrEnum), key
        elif key != "PowerRequest":
            assert type(stored) is str, key
    power = value.power_request
    assert type(power.prevent_system_sleep) is bool and type(power.prevent_display_sleep) is bool
    assert type(power.prevent_away_mode_sleep) is bool and power.reason.strip()


@settings(max_examples=400, deadline=None)
@given(RAW)
def test_any_json_object_gives_usable_settings_that_read_back_the_same(raw):
    value = Settings.from_raw(raw)
    _assert_usable(value)
    written = value.to_file_json()
    assert list(written) == list(SETTING_FIELDS)
    assert Settings.from_raw(written) == value
    # what it wrote is all in range; only a sound file that does not exist on this machine is reported
    assert [line for line in find_problems(written) if "does not exist" not in line] == []
    find_problems(raw)  # never raises either


@pytest.mark.parametrize("raw", [None, [], [{}], "text", 0, 1.5, True, NumberText("NaN")])
def test_anything_but_an_object_is_one_value_error(raw):
    with pytest.raises(SettingsShapeError, match="must be a JSON object"):
        Settings.from_raw(raw)
    assert issubclass(SettingsShapeError, ValueError)


def test_the_file_keys_win_over_field_names_and_unknown_keys_are_ignored():
    value = Settings.from_raw({"SessionTimeoutMinutes": 30, "session_timeout_minutes": 40, "Other": 1})
    assert value.session_timeout_minutes == 30
    assert Settings.from_raw({"session_timeout_minutes": 40}).session_timeout_minutes == 40
    assert Settings.from_raw({}) == Settings()
    assert Settings.from_raw(headless_defaults().to_file_json()) == headless_defaults()
