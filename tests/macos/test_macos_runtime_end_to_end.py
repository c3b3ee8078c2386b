"""The whole runtime on the macOS backend over stand-in tools: real `lidguard` processes with
LIDGUARD_PLATFORM=macos, every tool call recorded with its exact arguments (conftest.py `mac`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.platform.macos.power import MACOS_LID_SCHEME_IDENTIFIER

DISABLE = ["sudo", "-n", "pmset", "-a", "disablesleep", "1"]
ENABLE = ["sudo", "-n", "pmset", "-a", "disablesleep", "0"]


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def caffeinate_pids(mac) -> list[int]:
    return [entry["pid"] for entry in mac.tools.calls("caffeinate") if _alive(entry["pid"])]


def privileged(mac) -> list[list[str]]:
    """What went through sudo: [sudo, -n, pmset, ...] with stand-in paths shortened."""
    return mac.tools.commands("sudo")


def start(mac, session: str = "s1") -> None:
    mac.run("start", "--provider", "claude", "--session", session, check=True)


def stop(mac, session: str = "s1") -> None:
    mac.run("stop", "--provider", "claude", "--session", session, check=True)


def wait_protected(mac) -> int:
    """The one runtime's pid once caffeinate holds the assertion and the lid policy is applied."""
    assert mac.wait_until(lambda: len(caffeinate_pids(mac)) == 1 and DISABLE in privileged(mac))
    [pid] = mac.runtime_pids()
    return pid


def test_start_holds_caffeinate_for_the_runtime_and_disables_lid_sleep_then_stop_restores(mac):
    start(mac)
    runtime_pid = wait_protected(mac)
    assert mac.tools.commands("caffeinate") == [["caffeinate", "-i", "-w", str(runtime_pid)]]
    # The original SleepDisabled is read first and recorded in the pending backup before the change.
    # (`pmset -g batt` is the power policy's reading of the power source, issue 19.)
    pmset = [call for call in mac.tools.commands("pmset") if call != ["pmset", "-g", "batt"]]
    assert pmset[:2] == [["pmset", "-g"], ["pmset", "-a", "disablesleep", "1"]]
    assert privileged(mac) == [DISABLE]
    backup = json.loads((mac.data_dir / "pending-lid-action-backup.json").read_text())
    assert backup["PowerSchemeIdentifier"] == MACOS_LID_SCHEME_IDENTIFIER
    assert (backup["AlternatingCurrentAction"], backup["DirectCurrentAction"]) == (1, 1)
    assert mac.tools.machine()["sleep_disabled"] == 1
    # A second session shares the protection: no second caffeinate, no second pmset write.
    start(mac, "s2")
    stop(mac, "s2")
    assert len(mac.tools.calls("caffeinate")) == 1 and privileged(mac) == [DISABLE]
    stop(mac)
    assert mac.wait_until(lambda: not caffeinate_pids(mac) and ENABLE in privileged(mac))
    assert privileged(mac) == [DISABLE, ENABLE]
    assert mac.tools.machine()["sleep_disabled"] == 0
    assert not (mac.data_dir / "pending-lid-action-backup.json").exists()
    assert not [call for call in mac.tools.commands() if "-s" in call[1:] or call[:2] == ["pmset", "sleepnow"]]


def test_display_sleep_adds_d_and_a_settings_change_is_make_before_break_keeping_the_backup(mac):
    start(mac)
    runtime_pid = wait_protected(mac)
    backup = (mac.data_dir / "pending-lid-action-backup.json").read_text()
    [first] = caffeinate_pids(mac)
    mac.run("settings", "--prevent-display-sleep", "true", check=True)
    assert mac.wait_until(lambda: len(mac.tools.calls("caffeinate")) == 2 and first not in caffeinate_pids(mac))
    assert mac.tools.commands("caffeinate")[1] == ["caffeinate", "-i", "-d", "-w", str(runtime_pid)]
    assert len(caffeinate_pids(mac)) == 1
    # The lid policy is untouched by a power-request change and its backup is never rewritten.
    assert privileged(mac) == [DISABLE]
    assert (mac.data_dir / "pending-lid-action-backup.json").read_text() == backup


def test_change_lid_action_off_never_calls_sudo(mac):
    mac.run("settings", "--change-lid-action", "false", check=True)
    start(mac)
    assert mac.wait_until(lambda: len(caffeinate_pids(mac)) == 1)
    stop(mac)
    assert mac.wait_until(lambda: not caffeinate_pids(mac))
    assert privileged(mac) == []
    assert not (mac.data_dir / "pending-lid-action-backup.json").exists()


def _stop_and_wait_for_history(mac, expected_entries: int = 1) -> list[dict]:
    mac.run("settings", "--post-stop-suspend-delay-seconds", "1", check=True)
    start(mac)
    wait_protected(mac)
    stop(mac)
    mac.wait_until(lambda: len(mac.json("suspend-history")["entries"]) >= expected_entries)
    return mac.json("suspend-history")["entries"]


def test_closed_lid_with_only_the_built_in_display_sleeps_once_with_pmset_sleepnow(mac):
    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-builtin")
    [entry] = _stop_and_wait_for_history(mac)
    assert entry["Succeeded"] is True and entry["SuspendMode"] == "Sleep"
    assert mac.tools.commands("pmset").count(["pmset", "sleepnow"]) == 1
    assert [call for call in mac.tools.commands("ioreg")][-1] == ["ioreg", "-r", "-k", "AppleClamshellState", "-d", "4"]
    assert ["system_profiler", "SPDisplaysDataType", "-json"] in mac.tools.commands("system_profiler")
    # Protection is released before the request: the lid policy restored, caffeinate gone.
    assert privileged(mac) == [DISABLE, ENABLE]
    assert not caffeinate_pids(mac)


@pytest.mark.parametrize("clamshell, displays", [("closed", "apple-silicon-clamshell-external"),
                                                  ("closed", "intel-builtin-external"),
                                                  ("open", "apple-silicon-builtin"),
                                                  ("absent", "apple-silicon-none")])
def test_external_display_open_or_unknown_lid_never_sleeps(mac, clamshell, displays):
    mac.tools.set_machine(clamshell=clamshell, displays=displays)
    mac.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
    start(mac)
    wait_protected(mac)
    stop(mac)
    log = mac.data_dir / "session-execution.log"
    assert mac.wait_until(lambda: log.exists() and "stop-suspend-skipped" in log.read_text())
    assert ["pmset", "sleepnow"] not in mac.tools.commands("pmset")
    assert mac.json("suspend-history")["entries"] == []


def test_hibernate_backs_up_hibernatemode_sets_25_sleeps_and_leaves_the_backup(mac):
    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-none", hibernatemode=3)
    mac.run("settings", "--suspend-mode", "hibernate", check=True)
    [entry] = _stop_and_wait_for_history(mac)
    assert entry["SuspendMode"] == "Hibernate" and entry["Succeeded"] is True, entry
    pmset = mac.tools.commands("pmset")
    hibernate_at = pmset.index(["pmset", "-a", "hibernatemode", "25"])
    assert pmset[hibernate_at + 1] == ["pmset", "sleepnow"]
    assert ["sudo", "-n", "pmset", "-a", "hibernatemode", "25"] in privileged(mac)
    backup = json.loads((mac.data_dir / "pending-macos-power-state-backup.json").read_text())
    assert backup["IncludesHibernateMode"] is True and backup["HibernateMode"] == 3
    assert mac.tools.machine()["hibernatemode"] == 25
    assert "deferred through pending backup" in entry["Message"]


def test_the_next_cli_call_after_the_runtime_is_gone_restores_the_hibernatemode_exactly_once(mac):
    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-none", hibernatemode=3)
    mac.run("settings", "--suspend-mode", "hibernate", check=True)
    [entry] = _stop_and_wait_for_history(mac)
    assert entry["Succeeded"] is True, entry
    backup = mac.data_dir / "pending-macos-power-state-backup.json"
    assert backup.exists() and mac.tools.machine()["hibernatemode"] == 25
    # While a runtime holds the lock, nobody restores: the backup is the runtime's business.
    mac.run("status", check=True)
    assert backup.exists() and mac.tools.machine()["hibernatemode"] == 25
    mac.run("stop-runtime", "--force", check=True)
    assert mac.wait_until(lambda: not mac.runtime_pids(), timeout=20)
    mac.run("status", check=True)
    assert not backup.exists()
    assert mac.tools.machine()["hibernatemode"] == 3
    restores = [call for call in privileged(mac) if call[-2:] == ["hibernatemode", "3"]]
    mac.run("status", check=True)
    assert [call for call in privileged(mac) if call[-2:] == ["hibernatemode", "3"]] == restores == [
        ["sudo", "-n", "pmset", "-a", "hibernatemode", "3"]]


def test_hibernate_rolls_back_at_once_when_sleepnow_fails(mac):
    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-none", hibernatemode=3, sleepnow_exit=1)
    mac.run("settings", "--suspend-mode", "hibernate", check=True)
    [entry] = _stop_and_wait_for_history(mac)
    assert entry["Succeeded"] is False and "IOPMSleepSystem" in entry["Message"]
    hibernate = [call for call in privileged(mac) if "hibernatemode" in call]
    assert hibernate == [["sudo", "-n", "pmset", "-a", "hibernatemode", "25"],
                         ["sudo", "-n", "pmset", "-a", "hibernatemode", "3"]]
    assert mac.tools.machine()["hibernatemode"] == 3
    assert not (mac.data_dir / "pending-macos-power-state-backup.json").exists()


def test_kill_9_ends_caffeinate_and_the_next_cli_call_restores_sleep_exactly_once(mac):
    mac.env["LIDGUARD_WATCHDOG"] = "off"  # the CLI's recovery; with a watchdog it restores at once (below)
    start(mac)
    runtime_pid = wait_protected(mac)
    os.kill(runtime_pid, signal.SIGKILL)
    # caffeinate -w <runtime pid> lets go by itself when the runtime dies.
    assert mac.wait_until(lambda: not caffeinate_pids(mac))
    assert mac.tools.machine()["sleep_disabled"] == 1
    status = mac.json("status")
    assert status["runtimeRunning"] is False
    assert privileged(mac) == [DISABLE, ENABLE]
    assert mac.tools.machine()["sleep_disabled"] == 0
    assert not (mac.data_dir / "pending-lid-action-backup.json").exists()
    mac.json("status")
    assert privileged(mac) == [DISABLE, ENABLE]


def test_kill_9_with_no_other_command_the_watchdog_restores_sleep_once_and_a_racing_cli_call_adds_nothing(mac):
    """Issue 32.4 on the macOS backend: the runtime dies (kill -9, OOM) and the agent with it, so nothing calls
    lidguard again - `pmset -a disablesleep 1` must not stay. The watchdog sees the runtime's pipe close and
    runs the crash recovery at once, under the runtime lock: CLI calls racing it restore nothing twice."""
    watchdog = "lidguard.runtime.watchdog"

    def crash() -> None:
        runtime_pid = wait_protected(mac)
        assert mac.wait_until(lambda: bool(mac.pids_of_this_home(watchdog)))
        os.kill(runtime_pid, signal.SIGKILL)

    start(mac)
    crash()  # and no other command at all
    assert mac.wait_until(lambda: mac.tools.machine()["sleep_disabled"] == 0, timeout=30)
    assert mac.wait_until(lambda: not mac.pids_of_this_home(watchdog), timeout=20)
    assert privileged(mac) == [DISABLE, ENABLE], "restored once, with no lidguard command"
    assert not (mac.data_dir / "pending-lid-action-backup.json").exists()
    log = [json.loads(line) for line in (mac.data_dir / "session-execution.log").read_text().splitlines()]
    assert [entry["EventName"] for entry in log].count("watchdog-recovered") == 1
    # Again, with three CLI calls racing the watchdog's recovery: still one restore for the one crash.
    start(mac, "s2")
    crash()
    racing = [subprocess.Popen([sys.executable, "-m", "lidguard", "status"], env=mac.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) for _ in range(3)]
    for process in racing:
        process.wait(timeout=30)
    assert mac.wait_until(lambda: not mac.pids_of_this_home(watchdog), timeout=20)
    assert mac.tools.machine()["sleep_disabled"] == 0
    assert privileged(mac) == [DISABLE, ENABLE, DISABLE, ENABLE]
    mac.json("status")
    assert privileged(mac) == [DISABLE, ENABLE, DISABLE, ENABLE]


def test_without_the_sudoers_rule_start_keeps_awake_says_why_and_the_next_start_after_install_applies_the_lid(mac):
    mac.tools.set_machine(sudo="password")
    result = mac.run("start", "--provider", "claude", "--session", "s1")
    assert result.returncode == 0, result.stderr
    assert "keeping awake; the lid-close action needs `lidguard macos-permission install`" in result.stdout
    # Never a password prompt: only `sudo -n`, once; the refused change is not "restored" with sudo.
    assert privileged(mac) == [DISABLE]
    assert mac.wait_until(lambda: len(caffeinate_pids(mac)) == 1)
    [runtime_pid] = mac.runtime_pids()
    assert mac.tools.commands("caffeinate") == [["caffeinate", "-i", "-w", str(runtime_pid)]]
    assert mac.tools.machine()["sleep_disabled"] == 0
    assert not (mac.data_dir / "pending-lid-action-backup.json").exists()
    status = mac.json("status")
    assert "lidguard macos-permission install" in status["lidPolicyHeldBack"]
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["s1"]
    text = mac.run("status", check=True).stdout
    assert "Lid-close action held back: keeping awake; the lid-close action needs" in text
    # Another hook event does not retry sudo (no storm); a start after the rule is installed does.
    mac.run("mark-session-active", "--provider", "claude", "--session", "s1", check=True)
    assert privileged(mac) == [DISABLE]
    installed = mac.run("macos-permission", "install")
    assert installed.returncode == 0, installed.stderr
    start(mac, "s2")
    assert mac.wait_until(lambda: privileged(mac)[-1:] == [DISABLE] and mac.tools.machine()["sleep_disabled"] == 1)
    assert mac.json("status")["lidPolicyHeldBack"] is None
    assert (mac.data_dir / "pending-lid-action-backup.json").exists()
    assert len(caffeinate_pids(mac)) == 1
    stop(mac, "s2")
    stop(mac)
    assert mac.wait_until(lambda: not caffeinate_pids(mac) and mac.tools.machine()["sleep_disabled"] == 0)


def test_a_permission_request_hook_never_waits_for_a_slow_system_profiler(mac):
    """Issue 32.10: with the lid closed and system_profiler taking 8 s, a PermissionRequest hook's
    status question (the closed-lid decision) is answered within the hook's 2.5 s request budget: the
    runtime reads the lid (ioreg) and serves the displays it has, refreshing them off the request."""
    import subprocess
    import sys
    import time

    mac.tools.set_machine(clamshell="closed", displays="apple-silicon-none", system_profiler_seconds=8)
    start(mac)
    wait_protected(mac)
    # The reply snapshot is re-read once older than 2 s: let it age (the scenario itself, not a wait for work).
    aged_at = time.monotonic() + 2.5
    mac.wait_until(lambda: time.monotonic() >= aged_at, timeout=10)
    payload = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
               "transcript_path": "", "permission_mode": "default"}
    result = subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=mac.env,
                            input=json.dumps(payload), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    log = (mac.data_dir / "claude-hook-events.log").read_text()
    status_lines = [line for line in log.splitlines() if "runtime-result" in line and "command=status" in line]
    assert status_lines and "succeeded=true" in status_lines[-1], log
    assert "did not answer" not in status_lines[-1], log


@pytest.mark.parametrize("mode", ["sleep", "hibernate"])
def test_without_the_sudoers_rule_a_closed_lid_stop_sleeps_and_hibernate_says_why_not(mac, mode):
    """No rule (issue 34.4): the lid policy is held back (keep-awake only) and the post-stop suspend
    still runs - `pmset sleepnow` needs no root; Hibernate's `hibernatemode 25` is refused by sudo, and
    the suspend-history entry says so with the install command; nothing was changed."""
    mac.tools.set_machine(sudo="password", clamshell="closed", displays="apple-silicon-none", hibernatemode=3)
    mac.run("settings", "--post-stop-suspend-delay-seconds", "1", check=True)
    mac.run("settings", "--suspend-mode", mode, check=True)
    start(mac)
    assert mac.wait_until(lambda: len(caffeinate_pids(mac)) == 1)
    stop(mac)
    assert mac.wait_until(lambda: len(mac.json("suspend-history")["entries"]) >= 1)
    [entry] = mac.json("suspend-history")["entries"]
    machine = mac.tools.machine()
    assert (machine["hibernatemode"], machine["sleep_disabled"]) == (3, 0)
    assert [call for call in privileged(mac) if "-n" not in call] == []  # never a password prompt
    if mode == "sleep":
        assert entry["Succeeded"] is True and machine.get("sleeps") == 1
        assert privileged(mac) == [DISABLE]
    else:
        assert entry["Succeeded"] is False and ["pmset", "sleepnow"] not in mac.tools.commands("pmset")
        assert "sudo: a password is required" in entry["Message"]
        assert "lidguard macos-permission install" in entry["Message"]
        assert privileged(mac) == [DISABLE, ["sudo", "-n", "pmset", "-a", "hibernatemode", "25"]]
    assert not (mac.data_dir / "pending-macos-power-state-backup.json").exists()


def test_status_without_a_runtime_asks_only_what_the_verdict_needs(mac):
    """status with no session shows doctor's verdict (issue 33.6) from the power capability alone: describing
    every capability ran system_profiler (seconds on a real Mac) and a `sudo -n powermetrics` per status."""
    status = mac.json("status")
    assert status["runtimeRunning"] is False
    # One display read: status's own "displays" line (no runtime to ask); none for the verdict, no sudo.
    assert len(mac.tools.calls("system_profiler")) == 1 and privileged(mac) == []
