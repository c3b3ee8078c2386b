"""The systemd-inhibit fallback believes only a confirmed inhibitor: systemd-inhibit runs its command once
logind granted the inhibitor, and the command says so. Before, "still running after 0.25 s" counted as
held: on a loaded CI machine a helper about to fail (no logind on the bus) was still starting then, and
protection was reported while none was held. Fake ``systemd-inhibit`` scripts stand in for the slow cases
(a real one against the private bus runs in test_linux_power.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lidguard.platform.api import ProtectionRequest
from lidguard.platform.linux import power
from lidguard.platform.linux.power import InhibitorHelperError, LinuxPowerRequests


def _fake_inhibit(folder: Path, body: str) -> None:
    script = folder / "systemd-inhibit"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def helper_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The binding off, a private-looking bus address (nothing is contacted: the fake helper runs), and
    PATH = a folder for the fake systemd-inhibit + the system's sh."""
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    return tmp_path


def test_a_helper_that_fails_after_a_slow_start_is_a_failure_not_protection(helper_only: Path) -> None:
    _fake_inhibit(helper_only, "sleep 0.6\necho 'Failed to inhibit: no logind' >&2\nexit 1\n")
    with pytest.raises(InhibitorHelperError) as raised:
        LinuxPowerRequests().apply(ProtectionRequest())
    assert raised.value.exit_code == 1 and "no logind" in raised.value.stderr


def test_a_helper_that_confirms_after_a_slow_start_holds_until_released(helper_only: Path) -> None:
    marker = helper_only / "running"
    # As systemd-inhibit does: get the inhibitor (slowly), then run the command and wait for it.
    _fake_inhibit(helper_only, f'sleep 0.6\ntouch {marker}\nshift 4\n[ "$1" = "--" ] && shift\n"$@"\n'
                               f"rm -f {marker}\n")
    handle = LinuxPowerRequests().apply(ProtectionRequest())
    assert marker.exists()  # confirmed means the command runs: the inhibitor is held
    handle.release()
    assert not marker.exists()


def test_a_helper_that_never_confirms_is_ended_and_a_failure(helper_only: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = helper_only / "pid"
    _fake_inhibit(helper_only, f"echo $$ > {pid_file}\nexec sleep 600\n")
    monkeypatch.setattr(power, "HELPER_CONFIRM_SECONDS", 1.0)
    with pytest.raises(InhibitorHelperError) as raised:
        LinuxPowerRequests().apply(ProtectionRequest())
    assert raised.value.exit_code is None and "did not confirm" in str(raised.value)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # ended, not left holding anything
