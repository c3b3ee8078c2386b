"""Keep-awake protection and the lid policy against dbusmock's logind, over both inhibitor paths.

``inhibitor_backend`` runs each test over the cffi binding, the binding forced off
(``LIDGUARD_LOGIND_BINDING=off``) and a missing sd-bus library - the last two use systemd-inhibit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dbus_harness import LogindMock

from lidguard.platform.api import LidPolicy, LidPolicyRefused, PowerRequests, ProtectionRequest, Unsupported
from lidguard.platform.linux._binding import NO_LOGIND
from lidguard.platform.linux.power import (
    LID_SWITCH_WHY,
    LINUX_LID_SCHEME_IDENTIFIER,
    InhibitorHelperError,
    LinuxLidPolicy,
    LinuxPowerRequests,
)

pytestmark = pytest.mark.dbus

REASON = "agent session test-1 is running"


def _whats(entries: list[tuple]) -> list[str]:
    return sorted(entry[0] for entry in entries)


def test_protection_is_a_sleep_and_an_idle_inhibitor_until_released(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    power = LinuxPowerRequests()
    assert isinstance(power, PowerRequests)
    handle = power.apply(ProtectionRequest(reason=REASON))
    entries = logind_mock.list_inhibitors()
    # One per kind: logind checks a combined "sleep:idle" against the handle-lid-switch permission.
    assert sorted(entries) == [("idle", "lidguard", REASON, "block", 1000, 123456),
                               ("sleep", "lidguard", REASON, "block", 1000, 123456)]
    assert handle.description
    handle.release()
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []
    handle.release()  # idempotent
    power.close()


def test_display_only_protection_blocks_idle(inhibitor_backend: str, logind_mock: LogindMock) -> None:
    handle = LinuxPowerRequests().apply(
        ProtectionRequest(prevent_system_sleep=False, prevent_display_sleep=True)
    )
    assert _whats(logind_mock.list_inhibitors()) == ["idle"]
    handle.release()
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []


def test_nothing_to_block_holds_nothing(logind_mock: LogindMock) -> None:
    handle = LinuxPowerRequests().apply(
        ProtectionRequest(
            prevent_system_sleep=False, prevent_display_sleep=False, prevent_away_mode_sleep=True
        )
    )
    assert "nothing" in handle.description
    assert logind_mock.list_inhibitors() == []
    handle.release()


def test_lid_policy_is_a_separate_handle_lid_switch_inhibitor(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    power, lid = LinuxPowerRequests(), LinuxLidPolicy()
    assert isinstance(lid, LidPolicy)
    before = lid.read_lid_actions()
    assert (
        before.power_scheme_identifier,
        before.alternating_current_action,
        before.direct_current_action,
    ) == (
        LINUX_LID_SCHEME_IDENTIFIER,
        1,
        1,
    )
    handle = power.apply(ProtectionRequest(reason=REASON))
    lid.set_do_nothing(before)
    lid.set_do_nothing(before)  # already held: no second inhibitor
    entries = logind_mock.list_inhibitors()
    assert _whats(entries) == ["handle-lid-switch", "idle", "sleep"]
    lid_entry = next(entry for entry in entries if entry[0] == "handle-lid-switch")
    assert lid_entry[1:4] == ("lidguard", LID_SWITCH_WHY, "block")
    during = lid.read_lid_actions()
    assert (during.alternating_current_action, during.direct_current_action) == (0, 0)

    lid.restore_lid_actions(before)
    assert _whats(logind_mock.wait_for_inhibitors(lambda found: len(found) == 2)) == ["idle", "sleep"]
    assert lid.read_lid_actions().alternating_current_action == 1
    handle.release()
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []


def test_drop_runtime_hold_and_close_release_everything(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    power, lid = LinuxPowerRequests(), LinuxLidPolicy()
    lid.set_do_nothing(lid.read_lid_actions())
    lid.drop_runtime_hold()
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []

    power.apply(ProtectionRequest())
    power.apply(ProtectionRequest(prevent_system_sleep=False, prevent_display_sleep=True))
    lid.set_do_nothing(lid.read_lid_actions())
    assert len(logind_mock.list_inhibitors()) == 4  # sleep + idle, idle, handle-lid-switch
    power.close()
    lid.close()
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []


def test_a_child_spawned_while_held_does_not_keep_the_inhibitor(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    handle = LinuxPowerRequests().apply(ProtectionRequest())
    lid = LinuxLidPolicy()
    lid.set_do_nothing(lid.read_lid_actions())
    child = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        handle.release()
        lid.close()
        assert logind_mock.wait_for_inhibitors(lambda found: not found) == []
        assert child.poll() is None, "the child must still run: it is the one that could leak the fd"
    finally:
        child.kill()
        child.wait()


HOLDER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from lidguard.platform.api import ProtectionRequest
    from lidguard.platform.linux import _binding
    from lidguard.platform.linux.power import LinuxLidPolicy, LinuxPowerRequests
    if sys.argv[1] == "library-missing":
        _binding.LIBRARY_NAMES = ("liblidguard-no-such-sd-bus.so.0",)
    power, lid = LinuxPowerRequests(), LinuxLidPolicy()
    power.apply(ProtectionRequest())
    lid.set_do_nothing(lid.read_lid_actions())
    print("held", flush=True)
    time.sleep(60)
    """
)


def test_kill_9_of_the_holding_process_drops_its_inhibitors(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    environment = dict(os.environ)
    if inhibitor_backend == "forced-off":
        environment["LIDGUARD_LOGIND_BINDING"] = "off"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, inhibitor_backend],
        env=environment,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        assert _whats(logind_mock.list_inhibitors()) == ["handle-lid-switch", "idle", "sleep"]
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=5)
        assert logind_mock.wait_for_inhibitors(lambda found: not found) == []
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def test_no_logind_on_the_bus_is_unsupported(inhibitor_backend: str, system_bus: object) -> None:
    if inhibitor_backend == "binding":
        with pytest.raises(Unsupported) as raised:
            LinuxPowerRequests().apply(ProtectionRequest())
        assert raised.value.capability == "power"
        assert raised.value.reason == NO_LOGIND  # a bus without logind, in plain words (issue 33.14)
    else:
        # systemd-inhibit itself reports the missing service; its exit code and stderr come back.
        with pytest.raises(InhibitorHelperError) as raised:
            LinuxPowerRequests().apply(ProtectionRequest())
        assert raised.value.exit_code != 0
        assert raised.value.stderr.strip()


def test_missing_systemd_inhibit_is_unsupported(
    binding_library_missing: None, logind_mock: LogindMock, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unsupported) as raised:
        LinuxLidPolicy().set_do_nothing(LinuxLidPolicy().read_lid_actions())
    assert raised.value.capability == "lid_policy"
    assert "systemd-inhibit" in raised.value.reason
    assert "inactive" in LinuxPowerRequests().describe() or "unavailable" in LinuxPowerRequests().describe()


def test_describe_names_the_active_path(inhibitor_backend: str) -> None:
    description = LinuxPowerRequests().describe()
    if inhibitor_backend == "binding":
        assert "via cffi" in description
    else:
        assert "systemd-inhibit" in description and "inactive" in description
    assert "handle-lid-switch" in LinuxLidPolicy().describe()


def test_release_kills_the_helper_group_when_closing_stdin_is_not_enough(
    unreachable_system_bus: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    # A stand-in systemd-inhibit that confirms (as its command would) and then ignores its stdin: release
    # must fall back to killing the group.
    fake = tmp_path / "systemd-inhibit"
    fake.write_text("#!/bin/sh\necho held\nexec 0</dev/null\nsleep 30 &\nwait\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    handle = LinuxPowerRequests().apply(ProtectionRequest())
    pid = int(handle.description.split("pid ")[1].split()[0])
    handle.release()
    # The whole group, background `sleep` included, is gone (zombies re-parented to a container's
    # PID 1 may linger unreaped, so living members are read from /proc rather than probed with kill).
    deadline = time.monotonic() + 10  # bounded: returns as soon as the group is gone
    while _living_group_members(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _living_group_members(pid) == []


def _living_group_members(process_group: int) -> list[int]:
    members = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        state, group = fields[0], int(fields[2])  # stat(5): state, ppid, pgrp after the comm field
        if group == process_group and state != "Z":
            members.append(int(stat_file.parent.name))
    return members


def test_a_helper_that_exits_at_once_reports_exit_code_and_stderr(
    unreachable_system_bus: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    fake = tmp_path / "systemd-inhibit"
    fake.write_text("#!/bin/sh\necho 'Failed to inhibit: Access denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    # polkit's "Access denied" is a refused lid change (keep-awake stays, issue 32), the helper's error its cause.
    with pytest.raises(LidPolicyRefused) as raised:
        LinuxLidPolicy().set_do_nothing(LinuxLidPolicy().read_lid_actions())
    helper = raised.value.__cause__
    assert isinstance(helper, InhibitorHelperError) and helper.exit_code == 1
    assert "Failed to inhibit: Access denied" in str(helper) and "Access denied" in raised.value.detail
