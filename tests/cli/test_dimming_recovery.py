"""Crash recovery of the display brightness (issue 21) through real `lidguard` processes on the fake
platform: the next command restores from the pending backup; an unusable backup is set aside with one
warning and never blocks the command; `emergency-restore` restores it too; the settings show the option."""

from __future__ import annotations

import json


def _write_backup(lidguard, content: bytes) -> None:
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    (lidguard.data_dir / "pending-brightness-backup.json").write_bytes(content)


BACKUP = json.dumps({"Device": "backlight/fake", "Brightness": 80, "MaxBrightness": 100, "DimmedTo": 20}).encode()


def _sets(lidguard) -> list[int]:
    return [action["value"] for action in lidguard.actions() if action["action"] == "brightness-set"]


def test_the_next_command_restores_a_dimmed_display(lidguard):
    lidguard.set_machine(brightness={"device": "backlight/fake", "value": 20, "maximum": 100})
    _write_backup(lidguard, BACKUP)
    result = lidguard.run("status", check=True)
    assert result.stderr == ""
    assert _sets(lidguard) == [80]
    assert not (lidguard.data_dir / "pending-brightness-backup.json").exists()
    assert not lidguard.runtime_pids()


def test_an_unusable_backup_is_set_aside_with_one_warning_and_the_command_runs(lidguard):
    _write_backup(lidguard, b'{"Device": "backlight/fake", "Brightness": NaN, "MaxBrightness": 100}')
    result = lidguard.run("status", "--json", check=True)
    assert json.loads(result.stdout)["runtimeRunning"] is False
    [warning] = result.stderr.splitlines()
    assert warning.startswith("lidguard: warning: Brightness backup unusable") and "set aside" in warning
    assert _sets(lidguard) == []
    assert len(list(lidguard.data_dir.glob("pending-brightness-backup.unusable-*.json"))) == 1
    # And a session still starts and is protected.
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert any(action["action"] == "protection-applied" for action in lidguard.actions())


def test_a_refusing_display_keeps_the_backup_and_never_blocks_a_start(lidguard):
    lidguard.set_machine(brightnessFailure="logind refused SetBrightness")
    _write_backup(lidguard, BACKUP)
    result = lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert "logind refused SetBrightness" in result.stderr
    assert any(action["action"] == "protection-applied" for action in lidguard.actions())


def test_emergency_restore_restores_the_brightness(lidguard):
    lidguard.set_machine(brightness={"device": "backlight/fake", "value": 20, "maximum": 100})
    _write_backup(lidguard, BACKUP)
    result = lidguard.run("emergency-restore", check=True)
    assert "Restored the display brightness to 80/100 (backlight/fake)." in result.stdout.splitlines()
    assert _sets(lidguard) == [80]


def test_the_settings_command_sets_shows_and_bounds_dimming(lidguard):
    result = lidguard.run("settings", "--dim-display-when-idle-minutes", "7", "--dim-display-brightness-percent",
                          "15", check=True)
    assert "  Dim display when idle: off -> after 7 minutes, to 15 %" in result.stdout
    shown = json.loads(lidguard.run("settings", "--json", check=True).stdout)["settings"]
    assert (shown["dimDisplayWhenIdleMinutes"], shown["dimDisplayBrightnessPercent"]) == (7, 15)
    failed = lidguard.run("settings", "--dim-display-brightness-percent", "0")
    assert failed.returncode == 1 and failed.stderr.strip().splitlines() == [
        "lidguard: The dim-display-brightness-percent option must be an integer from 1 to 100."]
    result = lidguard.run("settings", "--dim-display-when-idle-minutes", "off", check=True)
    assert "  Dim display when idle: after 7 minutes, to 15 % -> off" in result.stdout


def test_status_shows_the_dimmed_display_and_a_set_aside_backup(lidguard):
    from datetime import UTC, datetime, timedelta

    away = (datetime.now(UTC) - timedelta(minutes=30)).isoformat()
    lidguard.set_machine(idle=True, idleSinceUtc=away, brightness={"device": "backlight/fake", "value": 80,
                                                                   "maximum": 100})
    lidguard.run("settings", "--dim-display-when-idle-minutes", "5", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert lidguard.wait_until(lambda: _sets(lidguard) == [20])
    assert lidguard.wait_until(lambda: lidguard.json("status")["displayDimmed"] is not None, timeout=10)
    dimmed = lidguard.json("status")["displayDimmed"]
    assert (dimmed["device"], dimmed["brightness"], dimmed["maxBrightness"], dimmed["dimmedTo"]) == \
        ("backlight/fake", 80, 100, 20)
    assert ("Display dimmed (the user is away): 20/100, restored to 80 on activity (backlight/fake)"
            in lidguard.run("status", check=True).stdout.splitlines())
    lidguard.set_machine(idle=False, brightness={"device": "backlight/fake", "value": 80, "maximum": 100})
    assert lidguard.wait_until(lambda: _sets(lidguard) == [20, 80])
    assert lidguard.wait_until(lambda: lidguard.json("status")["displayDimmed"] is None)
    lidguard.run("stop-runtime", "--force", check=True)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=20)
    _write_backup(lidguard, b"\x00\xff not json")
    lidguard.run("status", check=True)  # sets it aside (one warning)
    problems = lidguard.json("status")["fileProblems"]
    assert any(problem.startswith("Brightness backup set aside as ") for problem in problems)


def test_doctor_lists_brightness_and_an_optional_capability_is_never_missing():
    from lidguard.cli.doctor import _verdict, capability_objects

    capabilities = capability_objects({"power": "available (x)",
                                       "brightness": "unsupported: no readable backlight device"})
    hooks = [{"provider": "Claude Code", "status": "Installed", "problem": None}]
    verdict = _verdict(capabilities, hooks, {"error": None})
    assert verdict["ready"] is True and verdict["text"] == "ready"
    capabilities = capability_objects({"power": "available (x)", "sound": "unsupported: none"})
    assert _verdict(capabilities, hooks, {"error": None})["ready"] is False


def test_a_hook_started_runtime_restores_a_predecessors_dimmed_display(lidguard):
    """The hook path checks only the lid backup before it starts the runtime; the runtime itself then
    restores the brightness a killed predecessor left (startup), before it answers."""
    import subprocess
    import sys

    lidguard.set_machine(brightness={"device": "backlight/fake", "value": 20, "maximum": 100})
    _write_backup(lidguard, BACKUP)
    prompt = {"session_id": "h1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    result = subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=lidguard.env,
                            input=json.dumps(prompt).encode(), capture_output=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, b"")
    assert lidguard.wait_until(lambda: _sets(lidguard) == [80])
    [restore] = [action for action in lidguard.actions() if action["action"] == "brightness-set"]
    assert restore["pid"] in lidguard.runtime_pids()
    assert not (lidguard.data_dir / "pending-brightness-backup.json").exists()
    log = (lidguard.data_dir / "session-execution.log").read_text()
    assert "brightness-restored-from-pending-backup" in log
