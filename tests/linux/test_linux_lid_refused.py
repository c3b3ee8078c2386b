"""polkit refusing the ``handle-lid-switch`` inhibitor is a ``LidPolicyRefused`` (keep-awake stays,
issue 32): over the binding (a D-Bus AccessDenied / InteractiveAuthorizationRequired) and the
systemd-inhibit helper (its "Access denied" line). Other logind failures stay plain errors."""

from __future__ import annotations

import pytest

from lidguard.platform.api import LidPolicyRefused
from lidguard.platform.linux import power
from lidguard.platform.linux.power import InhibitorHelperError, LinuxLidPolicy, LogindError

SNAPSHOT = LinuxLidPolicy().read_lid_actions


@pytest.mark.parametrize("error", [
    LogindError("org.freedesktop.DBus.Error.AccessDenied", "Permission denied"),
    LogindError("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", "Interactive authentication required."),
    InhibitorHelperError(1, "Failed to inhibit: Access denied\n"),
])
def test_a_polkit_refusal_is_a_lid_policy_refusal(monkeypatch, error):
    def refuse(what, why, *, capability="power"):
        assert what == "handle-lid-switch"
        raise error

    monkeypatch.setattr(power, "acquire_inhibitor", refuse)
    lid = LinuxLidPolicy()
    with pytest.raises(LidPolicyRefused) as raised:
        lid.set_do_nothing(SNAPSHOT())
    assert "polkit" in raised.value.hint and "handle-lid-switch" in raised.value.hint
    assert not lid.holds_lid_switch


def test_any_other_logind_failure_stays_an_error(monkeypatch):
    def fail(what, why, *, capability="power"):
        raise LogindError("System.Error.ECONNRESET", "Connection reset by peer")

    monkeypatch.setattr(power, "acquire_inhibitor", fail)
    with pytest.raises(LogindError) as raised:
        LinuxLidPolicy().set_do_nothing(SNAPSHOT())
    assert not isinstance(raised.value, LidPolicyRefused)
