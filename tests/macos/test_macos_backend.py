"""The macOS backend's modules in-process, over recorded outputs and the stand-ins (`standins`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from lidguard.platform.api import (
    DisplayConnector,
    LidState,
    PowerSource,
    ProtectionRequest,
    SuspendMode,
    count_visible_displays,
)
from lidguard.platform.macos import MacOSPlatform, commands
from lidguard.platform.macos.battery import parse_pmset_battery
from lidguard.platform.macos.display import parse_displays
from lidguard.platform.macos.lid import parse_clamshell_state
from lidguard.platform.macos.power import build_caffeinate_arguments, parse_pmset_setting, parse_sleep_disabled
from lidguard.platform.macos.ps import ancestry_from_table, parse_ps_table
from lidguard.platform.macos.sound import MacSoundPlayer
from lidguard.platform.macos.suspend import MacSuspender
from lidguard.platform.macos.thermal import parse_powermetrics_temperatures, select_hid_temperatures

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(name: str, **values: object) -> str:
    text = (FIXTURES / name).read_text()
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


# -- parsers over recorded outputs ------------------------------------------------------------------
@pytest.mark.parametrize("machine", ["apple-silicon", "intel"])
def test_pmset_g_sleep_disabled_and_hibernatemode(machine):
    text = fixture(f"pmset-g-{machine}.txt", sleep_disabled=1, hibernatemode=25, sleep_note="")
    assert parse_sleep_disabled(text) == 1 and parse_pmset_setting(text, "hibernatemode") == 25
    text = fixture(f"pmset-g-{machine}.txt", sleep_disabled=0, hibernatemode=3, sleep_note="")
    assert parse_sleep_disabled(text) == 0 and parse_pmset_setting(text, "hibernatemode") == 3
    assert parse_pmset_setting(text, "sleep") == 1


def test_sleep_disabled_implied_by_the_prevented_note_and_absent_means_0():
    assert parse_sleep_disabled(" sleep  1 (sleep prevented by SleepDisabled, caffeinate)\n") == 1
    assert parse_sleep_disabled(fixture("pmset-g-custom-apple-silicon.txt", hibernatemode=3)) == 0


def test_pmset_g_custom_sections_read_the_first_hibernatemode():
    assert parse_pmset_setting(fixture("pmset-g-custom-apple-silicon.txt", hibernatemode=0), "hibernatemode") == 0


@pytest.mark.parametrize("name, expected", [
    ("pmset-g-batt-ac.txt", PowerSource(True, 100, "Charged")),
    ("pmset-g-batt-battery.txt", PowerSource(False, 80, "Discharging")),
    ("pmset-g-batt-desktop.txt", PowerSource(True)),
    ("pmset-g-apple-silicon.txt", PowerSource(None)),
])
def test_pmset_battery(name, expected):
    assert parse_pmset_battery(fixture(name, sleep_disabled=0, hibernatemode=3, sleep_note="")) == expected


@pytest.mark.parametrize("value, state", [("Yes", LidState.CLOSED), ("No", LidState.OPEN), ("Maybe", LidState.UNKNOWN)])
def test_ioreg_clamshell(value, state):
    assert parse_clamshell_state(fixture("ioreg-clamshell.txt", clamshell=value, causes_sleep="Yes")) is state
    assert parse_clamshell_state("") is LidState.UNKNOWN


@pytest.mark.parametrize("name, displays, eligible_count", [
    ("apple-silicon-builtin", [DisplayConnector("Color LCD", True)], 0),
    ("apple-silicon-builtin-external",
     [DisplayConnector("Color LCD", True), DisplayConnector("DELL U2720Q", False)], 1),
    ("apple-silicon-clamshell-external", [DisplayConnector("DELL U2720Q", False)], 1),
    ("apple-silicon-none", [], 0),
    # Intel with a discrete GPU: the offline external is not counted; spdisplays_builtin marks the panel.
    ("intel-builtin-external", [DisplayConnector("Color LCD", True), DisplayConnector("LG HDR 4K", False)], 1),
])
def test_system_profiler_displays(name, displays, eligible_count):
    parsed = parse_displays(fixture(f"displays-{name}.json"))
    assert parsed == displays
    assert count_visible_displays(parsed, exclude_internal=True) == eligible_count


def test_system_profiler_garbage_is_an_error():
    with pytest.raises(ValueError):
        parse_displays("[]")


def test_powermetrics_celsius_values():
    assert parse_powermetrics_temperatures(fixture("powermetrics-smc-intel.txt", cpu=71.5)) == [71.5, 48.0]
    assert parse_powermetrics_temperatures(fixture("powermetrics-smc-apple-silicon.txt")) == []
    assert parse_powermetrics_temperatures("CPU die temperature: 140.0 C\nFan: 1200 rpm\n") == []
    assert parse_powermetrics_temperatures("Battery temperature: 31 °C\nSSD temp 40 Celsius\n") == [31.0, 40.0]


def test_hid_sensor_selection():
    readings = [("PMU tdie1", 45.5), ("PMU tdev1", 30.0), ("pACC MTR Temp Sensor2", 52.0),
                ("eACC MTR Temp Sensor0", 0.0), ("NAND CH0 temp", 33.0), ("CPU", 151.0), ("gas gauge battery", 29.0)]
    assert select_hid_temperatures(readings) == [45.5, 52.0]


def test_ps_table_splits_comm_with_spaces_and_walks_the_chain():
    table = parse_ps_table(fixture("ps-axo.txt"))
    chain = ancestry_from_table(table, 9011, max_depth=64)
    assert [process.pid for process in chain] == [9011, 9010, 9001, 641, 640, 612, 1]
    assert chain[0].name == "Python" and chain[0].cmdline[-2:] == ("/opt/homebrew/bin/lidguard", "claude-hook")
    assert chain[2].name == "node" and chain[2].cmdline == ("node", "/opt/homebrew/bin/claude",
                                                            "--dangerously-skip-permissions")
    assert table[9100].exe == "/Applications/Visual Studio Code.app/Contents/MacOS/Electron"
    assert table[9200].cmdline == ("codex", "app-server")
    assert ancestry_from_table(table, 424242, max_depth=64) == []


def test_owner_detection_over_the_ps_chain_is_the_linux_one():
    from lidguard.agents.ancestry import resolve_agent_process

    chain = ancestry_from_table(parse_ps_table(fixture("ps-axo.txt")), 9011, max_depth=64)
    agent = resolve_agent_process(chain, "claude")
    assert agent is not None and agent.pid == 9001


def test_caffeinate_arguments_never_use_s():
    assert build_caffeinate_arguments(ProtectionRequest(), 42) == ["-i", "-w", "42"]
    assert build_caffeinate_arguments(ProtectionRequest(prevent_display_sleep=True, prevent_away_mode_sleep=True),
                                      42) == ["-i", "-d", "-w", "42"]
    assert build_caffeinate_arguments(ProtectionRequest(prevent_system_sleep=False), 42) == []


# -- the safety rule: tests never run a real macOS tool ---------------------------------------------
def test_without_a_stand_in_folder_every_tool_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "elsewhere"
    fake.mkdir()
    (fake / "pmset").write_text("#!/bin/sh\nexit 0\n")
    (fake / "pmset").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("LIDGUARD_MACOS_STANDIN_DIR", raising=False)
    with pytest.raises(commands.RealToolRefused):
        commands.run_tool("pmset", ["-g"], capability="power")


def test_a_tool_outside_the_stand_in_folder_is_refused(standins, monkeypatch, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "pmset").write_text("#!/bin/sh\nexit 0\n")
    (real / "pmset").chmod(0o755)
    monkeypatch.setenv("PATH", f"{real}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(commands.RealToolRefused):
        commands.run_privileged("pmset", ["-a", "disablesleep", "1"], capability="lid_policy")
    assert standins.calls() == []


def test_test_mode_never_prefers_the_fixed_system_paths(standins, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert commands.resolve_tool("pmset") == str(standins.bin / "pmset")


# -- capabilities in-process ------------------------------------------------------------------------
def test_platform_reads_lid_displays_power_source(standins):
    platform = MacOSPlatform()
    standins.set_machine(clamshell="closed", displays="apple-silicon-clamshell-external", power="battery")
    assert platform.lid.read_lid_state() is LidState.CLOSED
    assert platform.display.list_connected_displays() == [DisplayConnector("DELL U2720Q", False)]
    assert platform.describe_power_source() == PowerSource(False, 80, "Discharging")
    standins.set_machine(clamshell="absent")
    assert platform.lid.read_lid_state() is LidState.UNKNOWN
    assert [status.name for status in platform.native_module_statuses()] == ["macos"]


def test_missing_ioreg_reads_unknown(standins):
    (standins.bin / "ioreg").unlink()
    assert MacOSPlatform().lid.read_lid_state() is LidState.UNKNOWN
    assert MacOSPlatform().describe_capabilities()["lid"].startswith("unavailable: ioreg missing")


def test_thermal_falls_back_to_powermetrics_and_unavailable_is_empty(standins):
    thermal = MacOSPlatform().thermal
    standins.set_machine(cpu_temperature=95.5)
    assert thermal.read_temperatures_celsius() == [95.5, 48.0]
    assert standins.commands("sudo") == [["sudo", "-n", "powermetrics", "--samplers", "smc", "-n", "1", "-i", "1000"]]
    for state in ({"powermetrics": "unsupported"}, {"powermetrics": "apple-silicon"}, {"sudo": "password"}):
        standins.set_machine(powermetrics="intel", sudo="ok")
        standins.set_machine(**state)
        assert thermal.read_temperatures_celsius() == []


def test_sleep_and_a_hibernate_restoring_an_earlier_pending_backup_first(standins, tmp_path):
    backup = tmp_path / "pending-macos-power-state-backup.json"
    suspender = MacSuspender(backup)
    assert suspender.suspend(SuspendMode.SLEEP).succeeded
    assert standins.commands("pmset") == [["pmset", "sleepnow"]]
    standins.clear_calls()
    backup.write_text('{"SavedAt": "2026-01-01T00:00:00Z", "IncludesHibernateMode": true, "HibernateMode": 0}')
    standins.set_machine(hibernatemode=25)
    result = suspender.suspend(SuspendMode.HIBERNATE)
    assert result.succeeded, result.message
    assert [call for call in standins.commands("pmset") if call[1] != "-g"] == [
        ["pmset", "-a", "hibernatemode", "0"], ["pmset", "-a", "hibernatemode", "25"], ["pmset", "sleepnow"]]
    assert '"HibernateMode": 0' in backup.read_text()


def test_hibernate_refuses_an_unsupported_mode_and_a_refused_sudo_changes_nothing(standins, tmp_path):
    backup = tmp_path / "backup.json"
    standins.set_machine(hibernatemode=7)
    result = MacSuspender(backup).suspend(SuspendMode.HIBERNATE)
    assert not result.succeeded and "hibernatemode 7" in result.message and not backup.exists()
    standins.set_machine(hibernatemode=3, sudo="password")
    result = MacSuspender(backup).suspend(SuspendMode.HIBERNATE)
    assert not result.succeeded and "macos-permission install" in result.message
    assert not backup.exists() and ["pmset", "sleepnow"] not in standins.commands("pmset")


def test_sound_volume_override_captures_sets_and_restores(standins):
    standins.set_machine(volume=35, muted=True)
    assert MacSoundPlayer().play("Asterisk", volume_percent=80) == []
    assert standins.commands("afplay") == [["afplay", "/System/Library/Sounds/Glass.aiff"]]
    assert [call[2] for call in standins.commands("osascript")] == [
        "output volume of (get volume settings)", "output muted of (get volume settings)",
        "set volume output volume 80 without output muted", "set volume output volume 35",
        "set volume output muted true"]
    machine = standins.machine()
    assert (machine["volume"], machine["muted"]) == (35, True)


def test_process_watcher_uses_ps_and_polls_without_kqueue(standins):
    watcher = MacOSPlatform().process
    assert [process.pid for process in watcher.read_ancestry(9010)] == [9010, 9001, 641, 640, 612, 1]
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    # Its parent reaps it (as an agent's parent does): kill(2) alone cannot tell a zombie apart.
    reaper = threading.Thread(target=child.wait)
    reaper.start()
    watcher._poll_interval_seconds = 0.05

    async def wait() -> None:
        with anyio.fail_after(10):
            await watcher.wait_for_exit(child.pid)

    anyio.run(wait)
    reaper.join()
    assert not watcher.is_alive(child.pid)
