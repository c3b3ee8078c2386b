"""macOS contract: the parsers and the cffi binding against the real tools and libraries of a Mac.
Written from the tools' documented output (pmset(1), ioreg(8), system_profiler(8), caffeinate(8));
run on macos-13 (x86_64) and macos-14 (arm64) in the workflows, skipped everywhere else."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.real_os("macos")


def tool(*argv: str, timeout: float = 60) -> str:
    result = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(argv)} exited {result.returncode}: {result.stderr}"
    return result.stdout


def test_pmset_settings_parse() -> None:
    from lidguard.platform.macos.power import parse_pmset_setting, parse_sleep_disabled

    text = tool("/usr/bin/pmset", "-g")
    assert parse_sleep_disabled(text) in (0, 1)
    custom = tool("/usr/bin/pmset", "-g", "custom")
    # Every machine has a sleep timer (minutes) in at least one power source section.
    assert parse_pmset_setting(custom, "sleep") is not None or parse_pmset_setting(text, "sleep") is not None


def test_pmset_battery_parses() -> None:
    from lidguard.platform.macos.battery import parse_pmset_battery

    source = parse_pmset_battery(tool("/usr/bin/pmset", "-g", "batt"))
    # A desktop runner draws AC power and has no battery; a laptop names both.
    assert source.on_ac in (True, False)
    assert source.battery_percent is None or 0 <= source.battery_percent <= 100


def test_ioreg_clamshell_state_parses() -> None:
    from lidguard.platform.api import LidState
    from lidguard.platform.macos.lid import IOREG_ARGUMENTS, parse_clamshell_state

    state = parse_clamshell_state(tool("/usr/sbin/ioreg", *IOREG_ARGUMENTS))
    # A runner without a lid has no AppleClamshellState: Unknown is the documented answer there.
    assert state in (LidState.OPEN, LidState.CLOSED, LidState.UNKNOWN)


def test_system_profiler_displays_parse() -> None:
    from lidguard.platform.macos.display import SYSTEM_PROFILER_ARGUMENTS, parse_displays

    displays = parse_displays(tool("/usr/sbin/system_profiler", *SYSTEM_PROFILER_ARGUMENTS, timeout=120))
    assert all(isinstance(display.name, str) for display in displays)


def test_caffeinate_assertion_appears_and_goes() -> None:
    from lidguard.platform.api import ProtectionRequest
    from lidguard.platform.macos.power import build_caffeinate_arguments

    arguments = build_caffeinate_arguments(ProtectionRequest(), os.getpid())
    assert "-w" in arguments and str(os.getpid()) in arguments
    process = subprocess.Popen(["/usr/bin/caffeinate", *arguments])
    try:
        deadline = time.monotonic() + 20
        while f"pid {process.pid}(caffeinate)" not in tool("/usr/bin/pmset", "-g", "assertions"):
            assert time.monotonic() < deadline, "caffeinate's assertion never showed in pmset -g assertions"
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=20)
    deadline = time.monotonic() + 20
    while f"pid {process.pid}(caffeinate)" in tool("/usr/bin/pmset", "-g", "assertions"):
        assert time.monotonic() < deadline, "caffeinate's assertion outlived it"
        time.sleep(0.2)


def binding():
    module = importlib.import_module("lidguard.platform.macos._binding")
    module._load.cache_clear()
    loaded, reason = module._load()
    assert loaded is not None, reason
    return loaded


def test_libproc_reads_this_process_and_its_children() -> None:
    native = binding()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        chain = native.read_ancestry(child.pid, 8)
        assert [info.pid for info in chain[:2]] == [child.pid, os.getpid()]
        assert native.read_process(os.getpid()) is not None
        cpu = native.descendant_cpu_seconds(os.getpid())
        assert cpu is None or cpu >= 0
    finally:
        child.kill()
        child.wait(timeout=20)


def test_iohid_temperatures_are_numbers_or_a_clear_unavailable() -> None:
    native = binding()
    try:
        readings = native.read_hid_temperatures()
    except OSError as error:  # documented: some models expose no HID temperature sensors to a user
        assert str(error), "an unavailable thermal read must say why"
        return
    assert all(isinstance(name, str) and -50.0 < value < 150.0 for name, value in readings)


def test_notify_registration_for_power_source_changes() -> None:
    from lidguard.platform.macos.power_events import NOTIFY_NAMES

    native = binding()
    descriptor, tokens = native.register_notifications(NOTIFY_NAMES)
    try:
        assert descriptor >= 0 and len(tokens) == len(NOTIFY_NAMES)
    finally:
        native.cancel_notifications(tokens)
