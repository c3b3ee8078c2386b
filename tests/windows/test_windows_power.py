"""Power requests and the LIDACTION policy over the fake binding, including the real error codes."""

from __future__ import annotations

import pytest
from fake_winapi import BALANCED, FakeWindowsApi

from lidguard.platform.api import LidActionSnapshot, ProtectionRequest
from lidguard.platform.windows.power import WindowsLidPolicy, WindowsPowerRequests
from lidguard.platform.windows.winapi import (
    ERROR_ACCESS_DENIED,
    ERROR_INVALID_HANDLE,
    LIDACTION_SETTING,
    LIDACTION_SUBGROUP,
    POWER_REQUEST_AWAY_MODE_REQUIRED,
    POWER_REQUEST_DISPLAY_REQUIRED,
    POWER_REQUEST_SYSTEM_REQUIRED,
    WindowsApiError,
)


def test_apply_sets_the_requested_types_on_one_request_with_the_reason():
    api = FakeWindowsApi()
    handle = WindowsPowerRequests(api).apply(ProtectionRequest(True, True, True, reason="agent busy"))
    [created] = [call for call in api.calls if call[0] == "PowerCreateRequest"]
    assert created == ("PowerCreateRequest", "agent busy")
    assert api.active_requests() == [{POWER_REQUEST_SYSTEM_REQUIRED, POWER_REQUEST_AWAY_MODE_REQUIRED,
                                      POWER_REQUEST_DISPLAY_REQUIRED}]
    assert "SystemRequired+AwayModeRequired+DisplayRequired" in handle.description


def test_defaults_set_only_system_required_and_release_clears_then_closes_once():
    api = FakeWindowsApi()
    handle = WindowsPowerRequests(api).apply(ProtectionRequest())
    assert api.active_requests() == [{POWER_REQUEST_SYSTEM_REQUIRED}]
    handle.release()
    handle.release()
    assert api.names()[-2:] == ["PowerClearRequest", "CloseHandle"]
    assert api.names().count("CloseHandle") == 1 and api.requests == {}


def test_nothing_requested_creates_no_request():
    api = FakeWindowsApi()
    WindowsPowerRequests(api).apply(ProtectionRequest(False, False, False)).release()
    assert api.calls == []


def test_a_refused_set_clears_what_was_set_closes_the_handle_and_raises_access_denied():
    api = FakeWindowsApi()
    api.fail("PowerSetRequest", ERROR_ACCESS_DENIED)
    with pytest.raises(WindowsApiError) as raised:
        WindowsPowerRequests(api).apply(ProtectionRequest(prevent_display_sleep=True))
    assert raised.value.winerror == ERROR_ACCESS_DENIED and isinstance(raised.value, OSError)
    assert api.requests == {} and api.names()[-1] == "CloseHandle"


def test_release_with_an_invalid_handle_still_closes_and_reports_the_error():
    api = FakeWindowsApi()
    handle = WindowsPowerRequests(api).apply(ProtectionRequest())
    api.fail("PowerClearRequest", ERROR_INVALID_HANDLE)
    with pytest.raises(WindowsApiError) as raised:
        handle.release()
    assert raised.value.winerror == ERROR_INVALID_HANDLE
    assert api.names()[-1] == "CloseHandle" and api.requests == {}


def test_close_releases_every_request_still_held():
    api = FakeWindowsApi()
    power = WindowsPowerRequests(api)
    power.apply(ProtectionRequest())
    power.apply(ProtectionRequest(prevent_display_sleep=True))
    power.close()
    assert api.requests == {}


def test_lid_policy_reads_ac_and_dc_of_the_active_scheme():
    api = FakeWindowsApi()
    api.lid_values = {(BALANCED, True): 1, (BALANCED, False): 2}
    snapshot = WindowsLidPolicy(api).read_lid_actions()
    assert snapshot == LidActionSnapshot(BALANCED, 1, 2)
    reads = [call for call in api.calls if call[0].startswith("PowerRead")]
    assert reads == [("PowerReadACValueIndex", BALANCED, LIDACTION_SUBGROUP, LIDACTION_SETTING),
                     ("PowerReadDCValueIndex", BALANCED, LIDACTION_SUBGROUP, LIDACTION_SETTING)]


def test_do_nothing_writes_zero_to_both_and_applies_the_scheme_and_restore_writes_the_backup():
    api = FakeWindowsApi()
    policy = WindowsLidPolicy(api)
    snapshot = LidActionSnapshot(BALANCED, 1, 2)
    policy.set_do_nothing(snapshot)
    assert api.lid_values == {(BALANCED, True): 0, (BALANCED, False): 0}
    assert api.names()[-1] == "PowerSetActiveScheme"
    api.active_scheme = "8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c"  # the user switched schemes meanwhile
    policy.restore_lid_actions(snapshot)
    assert api.lid_values == {(BALANCED, True): 1, (BALANCED, False): 2}
    assert api.active_scheme == BALANCED  # the scheme active at backup time is applied again


def test_restore_skips_a_side_the_backup_does_not_include():
    api = FakeWindowsApi()
    WindowsLidPolicy(api).restore_lid_actions(LidActionSnapshot(BALANCED, 3, None))
    assert [call[0] for call in api.calls] == ["PowerWriteACValueIndex", "PowerSetActiveScheme"]


def test_a_refused_write_raises_access_denied():
    api = FakeWindowsApi()
    api.fail("PowerWriteDCValueIndex", ERROR_ACCESS_DENIED)
    with pytest.raises(WindowsApiError) as raised:
        WindowsLidPolicy(api).set_do_nothing(LidActionSnapshot(BALANCED, 1, 1))
    assert raised.value.winerror == ERROR_ACCESS_DENIED
    assert "PowerSetActiveScheme" not in api.names()


def test_access_denied_on_the_first_write_is_a_lid_policy_refusal_with_nothing_changed():
    from lidguard.platform.api import LidPolicyRefused

    api = FakeWindowsApi()
    api.fail("PowerWriteACValueIndex", ERROR_ACCESS_DENIED)
    with pytest.raises(LidPolicyRefused) as raised:
        WindowsLidPolicy(api).set_do_nothing(LidActionSnapshot(BALANCED, 1, 1))
    assert "access is denied" in raised.value.hint and "Windows error 5" in raised.value.detail
    assert api.names() == ["PowerWriteACValueIndex"]
