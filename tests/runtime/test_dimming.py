"""Reversible built-in display dimming (seed 004, issue 21) on the fake platform and trio's MockClock:
the pure decisions, the pending backup (saved before the change, restored and deleted on activity, the
last session ending, a pause, the setting turning off, the runtime exiting), crash recovery from the
backup, and a bad backup that never blocks protection and whose values are never guessed."""

from __future__ import annotations

import json
import os
import stat
from datetime import timedelta

import anyio
import pytest
from lidguard_runtime_harness import EPOCH, Harness, run_mock, with_runtime, with_settings

from lidguard.platform.api import BrightnessLevel, IdleReading, LidState, Unsupported
from lidguard.platform.fake import FakeMachine, FakePlatform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.components.dimming import DIMMED_POLL_SECONDS, WATCH_POLL_SECONDS
from lidguard.runtime.dimming import (
    BrightnessBackup,
    BrightnessBackupError,
    BrightnessBackupSetAside,
    dim_target,
    idle_for,
    read_brightness_backup,
    restore_pending_brightness,
    should_dim,
    write_brightness_backup,
)
from lidguard.shared.recovery import emergency_restore_without_runtime, recover_if_no_runtime

FIVE = timedelta(minutes=5)


# -- pure decisions ---------------------------------------------------------------------------------------

def test_idle_for_uses_the_os_start_else_the_first_time_seen_and_never_goes_negative():
    now = EPOCH
    assert idle_for(None, None, now) is None
    assert idle_for(IdleReading(False, now - FIVE), now - FIVE, now) is None
    assert idle_for(IdleReading(True, now - FIVE), None, now) == FIVE
    assert idle_for(IdleReading(True, None), now - timedelta(minutes=2), now) == timedelta(minutes=2)
    assert idle_for(IdleReading(True, None), None, now) == timedelta(0)
    assert idle_for(IdleReading(True, now + FIVE), None, now) == timedelta(0)  # a start in the future


@pytest.mark.parametrize("minutes, protecting, lid, idle, expected", [
    (5, True, LidState.OPEN, FIVE, True),
    (5, True, LidState.OPEN, FIVE - timedelta(seconds=1), False),
    (None, True, LidState.OPEN, FIVE * 100, False),  # off
    (5, False, LidState.OPEN, FIVE, False),  # no protected session
    (5, True, LidState.CLOSED, FIVE, False),
    (5, True, LidState.UNKNOWN, FIVE, False),
    (5, True, LidState.OPEN, None, False),  # not idle / unknown
])
def test_should_dim(minutes, protecting, lid, idle, expected):
    assert should_dim(idle_minutes=minutes, protecting=protecting, lid=lid, idle=idle) is expected


def test_dim_target_never_brightens_and_never_reaches_zero():
    assert dim_target(BrightnessLevel("b/x", 80, 100), 20) == 20
    assert dim_target(BrightnessLevel("b/x", 20, 100), 20) is None
    assert dim_target(BrightnessLevel("b/x", 10, 100), 20) is None
    assert dim_target(BrightnessLevel("b/x", 7, 7), 1) == 1
    assert dim_target(BrightnessLevel("b/x", 96000, 96000), 20) == 19200
    assert dim_target(BrightnessLevel("b/x", 1, 1), 50) is None
    assert dim_target(BrightnessLevel("b/x", 0, 0), 50) is None


# -- the backup file ----------------------------------------------------------------------------------------

def test_backup_round_trip_is_0600(tmp_path):
    path = tmp_path / "pending-brightness-backup.json"
    backup = BrightnessBackup(BrightnessLevel("backlight/intel_backlight", 96000, 120000), 24000)
    write_brightness_backup(path, backup)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_brightness_backup(path) == backup
    assert read_brightness_backup(tmp_path / "missing.json") is None


@pytest.mark.parametrize("content", [
    b"", b"{\x00\xff not json", b"[]", b'{"Device": "backlight/x"}',
    b'{"Device": "backlight/x", "Brightness": NaN, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": 1e400, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": 80.5, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": true, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": 180, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": -1, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "backlight/x", "Brightness": 0, "MaxBrightness": 0, "DimmedTo": 0}',
    b'{"Device": "backlight/x", "Brightness": 5, "MaxBrightness": 99999999999999999999, "DimmedTo": 1}',
    b'{"Device": "\\ud800", "Brightness": 5, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "", "Brightness": 5, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": "a\\nb", "Brightness": 5, "MaxBrightness": 100, "DimmedTo": 1}',
    b'{"Device": 7, "Brightness": 5, "MaxBrightness": 100, "DimmedTo": 1}',
    b"[" * 100000 + b"]" * 100000,
])
def test_unusable_backups_are_refused(tmp_path, content):
    path = tmp_path / "pending-brightness-backup.json"
    path.write_bytes(content)
    with pytest.raises(BrightnessBackupError):
        read_brightness_backup(path)


@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink", "huge"])
def test_backups_that_are_not_small_regular_files_are_refused(tmp_path, kind):
    path = tmp_path / "pending-brightness-backup.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        target = tmp_path / "elsewhere.json"
        write_brightness_backup(target, BrightnessBackup(BrightnessLevel("backlight/x", 80, 100), 20))
        path.symlink_to(target)
    else:
        with open(path, "wb") as handle:
            handle.truncate(64 * 1024 * 1024)
    with pytest.raises(BrightnessBackupError):
        read_brightness_backup(path)


def test_crash_recovery_restores_only_what_lidguard_set(tmp_path):
    path = tmp_path / "pending-brightness-backup.json"
    platform = FakePlatform(FakeMachine(brightness=BrightnessLevel("backlight/fake", 20, 100)))
    write_brightness_backup(path, BrightnessBackup(BrightnessLevel("backlight/fake", 80, 100), 20))
    assert restore_pending_brightness(platform, path) == \
        "Restored the display brightness to 80/100 (backlight/fake)."
    assert platform.brightness.read_brightness().value == 80 and not path.exists()
    assert restore_pending_brightness(platform, path) is None
    # The user turned it up meanwhile: left alone, the backup dropped.
    platform = FakePlatform(FakeMachine(brightness=BrightnessLevel("backlight/fake", 55, 100)))
    write_brightness_backup(path, BrightnessBackup(BrightnessLevel("backlight/fake", 80, 100), 20))
    assert restore_pending_brightness(platform, path).startswith("Left the display brightness alone")
    assert "brightness-set" not in [a["action"] for a in platform.actions] and not path.exists()


def test_an_unusable_backup_is_set_aside_and_never_guessed(tmp_path):
    path = tmp_path / "pending-brightness-backup.json"
    path.write_bytes(b'{"Device": "backlight/fake", "Brightness": NaN}')
    platform = FakePlatform()
    with pytest.raises(BrightnessBackupSetAside) as caught:
        restore_pending_brightness(platform, path)
    assert caught.value.aside is not None and caught.value.aside.exists() and not path.exists()
    assert platform.actions == []


def test_the_next_command_recovers_the_brightness_when_no_runtime_holds_the_lock():
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    platform = FakePlatform(FakeMachine(brightness=BrightnessLevel("backlight/fake", 20, 100)))
    write_brightness_backup(paths.brightness_backup_file,
                            BrightnessBackup(BrightnessLevel("backlight/fake", 80, 100), 20))
    warnings: list[str] = []
    recover_if_no_runtime(paths, lambda: platform, warnings.append)
    assert platform.brightness.read_brightness().value == 80
    assert not paths.brightness_backup_file.exists() and warnings == []
    # A refusing platform never blocks the command: a warning, and the backup kept for the next one.
    write_brightness_backup(paths.brightness_backup_file,
                            BrightnessBackup(BrightnessLevel("backlight/fake", 80, 100), 80))
    failing = FakePlatform(FakeMachine(brightness_failure="logind said no"))
    recover_if_no_runtime(paths, lambda: failing, warnings.append)
    assert len(warnings) == 1 and "logind said no" in warnings[0]
    assert paths.brightness_backup_file.exists()
    lines = emergency_restore_without_runtime(paths, lambda: platform)
    assert "Restored the display brightness to 80/100 (backlight/fake)." in lines
    assert not paths.brightness_backup_file.exists()


# -- the component ------------------------------------------------------------------------------------------

DIM_ON = {"DimDisplayWhenIdleMinutes": 5, "DimDisplayBrightnessPercent": 20, "ChangeLidAction": False}


def _harness(**settings: object) -> Harness:
    machine = FakeMachine(lid=LidState.OPEN, brightness=BrightnessLevel("backlight/fake", 80, 100))
    return Harness(machine=machine, settings=with_settings(**{**DIM_ON, **settings}))


def _brightness(h: Harness) -> int:
    return h.platform.brightness.read_brightness().value


def _sets(h: Harness) -> list[int]:
    return [a["value"] for a in h.platform.actions if a["action"] == "brightness-set"]


def _go_idle(h: Harness, minutes_ago: float | None = None) -> None:
    h.platform.machine.idle = True
    h.platform.machine.idle_since = None if minutes_ago is None else h.clock.now() - timedelta(minutes=minutes_ago)


def test_dims_after_the_idle_minutes_saving_the_brightness_first_and_restores_on_activity():
    harness = _harness()

    async def body(h: Harness) -> None:
        await h.start()
        _go_idle(h, minutes_ago=4)
        await anyio.sleep(WATCH_POLL_SECONDS + 0.1)  # the user was seen idle before the minutes passed
        assert _sets(h) == [] and not h.paths.brightness_backup_file.exists()
        await anyio.sleep(60 + 0.1)  # the watch wakes at the 5-minute mark
        assert _sets(h) == [20] and _brightness(h) == 20
        backup = h.paths.brightness_backup_file
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600
        saved = json.loads(backup.read_text())
        assert (saved["Device"], saved["Brightness"], saved["MaxBrightness"], saved["DimmedTo"]) == \
            ("backlight/fake", 80, 100, 20)
        assert h.runtime.dimming.describe()["DimmedTo"] == 20
        h.platform.machine.idle = False  # the user is back
        await anyio.sleep(DIMMED_POLL_SECONDS + 0.1)
        assert _sets(h) == [20, 80] and _brightness(h) == 80
        assert not backup.exists() and h.runtime.dimming.describe() is None
        assert "display-dimmed" in h.log_names() and "display-restored" in h.log_names()
        assert h.runtime.protection.applied  # dimming never touched protection

    run_mock(lambda: with_runtime(harness, body))


def test_without_the_os_idle_start_the_minutes_count_from_the_first_idle_reading():
    harness = _harness()

    async def body(h: Harness) -> None:
        await h.start()
        _go_idle(h)
        await anyio.sleep(4 * 60)
        assert _sets(h) == []
        await anyio.sleep(60 + 2 * WATCH_POLL_SECONDS)  # seen idle at the watch's next poll, up to 10 s late
        assert _sets(h) == [20]

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("ending", ["last-session-ends", "pause", "setting-off", "runtime-exits", "lid-closes"])
def test_every_ending_restores_the_brightness_and_deletes_the_backup(ending):
    harness = _harness()

    async def body(h: Harness) -> None:
        _go_idle(h, minutes_ago=10)
        await h.start()
        await anyio.sleep(1)
        assert _sets(h) == [20]
        if ending == "last-session-ends":
            await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        elif ending == "pause":
            await h.send("pause")
        elif ending == "setting-off":
            await h.send("settings", HasSettings=True,
                         Settings=with_settings(**{**DIM_ON, "DimDisplayWhenIdleMinutes": None}).to_file_json())
        elif ending == "lid-closes":
            h.platform.machine.lid = LidState.CLOSED
        if ending != "runtime-exits":
            await anyio.sleep(DIMMED_POLL_SECONDS + 0.1)
            assert _sets(h) == [20, 80] and not h.paths.brightness_backup_file.exists()

    run_mock(lambda: with_runtime(harness, body))
    assert _sets(harness) == [20, 80] and _brightness(harness) == 80
    assert not harness.paths.brightness_backup_file.exists()


def test_off_by_default_and_never_without_a_protected_session():
    harness = _harness(DimDisplayWhenIdleMinutes=None)

    async def body(h: Harness) -> None:
        _go_idle(h, minutes_ago=60)
        await h.start()
        await anyio.sleep(120)
        assert _sets(h) == []
        await h.send("remove-session", Provider="Claude", SessionIdentifier="s1")
        await h.send("settings", HasSettings=True, Settings=with_settings(**DIM_ON).to_file_json())
        await anyio.sleep(120)
        assert _sets(h) == []
        await h.start()  # on, idle and protected: dims at once
        await anyio.sleep(1)
        assert _sets(h) == [20]

    run_mock(lambda: with_runtime(harness, body))


def test_a_closed_lid_or_a_display_already_dim_is_left_alone():
    harness = _harness()

    async def body(h: Harness) -> None:
        h.platform.machine.lid = LidState.CLOSED
        _go_idle(h, minutes_ago=60)
        await h.start()
        await anyio.sleep(60)
        assert _sets(h) == []
        h.platform.machine.lid = LidState.OPEN
        h.platform.machine.brightness = BrightnessLevel("backlight/fake", 15, 100)
        await anyio.sleep(60)
        assert _sets(h) == [] and not h.paths.brightness_backup_file.exists()

    run_mock(lambda: with_runtime(harness, body))


def test_brightness_the_user_changed_while_dimmed_is_left_alone():
    harness = _harness()

    async def body(h: Harness) -> None:
        _go_idle(h, minutes_ago=10)
        await h.start()
        await anyio.sleep(1)
        h.platform.machine.brightness = BrightnessLevel("backlight/fake", 60, 100)  # the brightness keys
        h.platform.machine.idle = False
        await anyio.sleep(DIMMED_POLL_SECONDS + 0.1)
        assert _sets(h) == [20] and _brightness(h) == 60
        assert not h.paths.brightness_backup_file.exists()

    run_mock(lambda: with_runtime(harness, body))


def test_no_backlight_turns_dimming_off_for_the_runtime_and_protection_stays():
    harness = _harness()
    harness.platform.machine.brightness = None

    async def body(h: Harness) -> None:
        await h.start()
        _go_idle(h, minutes_ago=10)
        await anyio.sleep(60)
        assert h.runtime.protection.applied and _sets(h) == []
        assert h.log_names().count("dimming-unsupported") == 1

    run_mock(lambda: with_runtime(harness, body))


def test_a_failing_backlight_is_retried_and_logged_once():
    harness = _harness()

    async def body(h: Harness) -> None:
        h.platform.machine.brightness_failure = "EIO"
        await h.start()
        _go_idle(h, minutes_ago=10)
        await anyio.sleep(60)
        assert _sets(h) == [] and h.log_names().count("dimming-brightness-read-failed") == 1
        h.platform.machine.brightness_failure = None
        await anyio.sleep(WATCH_POLL_SECONDS + 0.1)
        assert _sets(h) == [20]

    run_mock(lambda: with_runtime(harness, body))


def test_an_idle_reader_that_is_unsupported_turns_dimming_off():
    harness = _harness()

    def unsupported() -> IdleReading:
        raise Unsupported("brightness", "no idle hint here")

    harness.platform.brightness.read_idle = unsupported  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        await h.start()
        await anyio.sleep(60)
        assert h.runtime.protection.applied and _sets(h) == []
        assert h.log_names().count("dimming-unsupported") == 1

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("content", [b"{\x00\xff not json", b'{"Device": "backlight/fake", "Brightness": NaN}'])
def test_an_unusable_backup_is_set_aside_the_display_left_alone_and_protection_applied(content):
    harness = _harness()

    async def body(h: Harness) -> None:
        h.paths.brightness_backup_file.parent.mkdir(parents=True, exist_ok=True)
        h.paths.brightness_backup_file.write_bytes(content)
        await h.start()
        _go_idle(h, minutes_ago=10)
        await anyio.sleep(60)
        assert h.runtime.protection.applied and _sets(h) == []
        asides = list(h.paths.data_dir.glob("pending-brightness-backup.unusable-*.json"))
        assert len(asides) == 1 and asides[0].read_bytes() == content
        # Settled once the user deletes the set-aside file: dimming works again.
        asides[0].unlink()
        await anyio.sleep(WATCH_POLL_SECONDS + 0.1)
        assert _sets(h) == [20]

    run_mock(lambda: with_runtime(harness, body))


def test_a_predecessors_backup_is_adopted_not_overwritten():
    harness = _harness()

    async def body(h: Harness) -> None:
        h.paths.brightness_backup_file.parent.mkdir(parents=True, exist_ok=True)
        write_brightness_backup(h.paths.brightness_backup_file,
                                BrightnessBackup(BrightnessLevel("backlight/fake", 90, 100), 20))
        _go_idle(h, minutes_ago=10)
        await h.start()
        await anyio.sleep(1)
        assert _sets(h) == [20]
        assert json.loads(h.paths.brightness_backup_file.read_text())["Brightness"] == 90
        h.platform.machine.idle = False
        await anyio.sleep(DIMMED_POLL_SECONDS + 0.1)
        assert _sets(h) == [20, 90]

    run_mock(lambda: with_runtime(harness, body))


def test_a_backup_that_cannot_be_written_leaves_the_display_alone(monkeypatch):
    import lidguard.runtime.components.dimming as component

    def full_disk(path, backup):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(component, "write_brightness_backup", full_disk)
    harness = _harness()

    async def body(h: Harness) -> None:
        await h.start()
        _go_idle(h, minutes_ago=10)
        await anyio.sleep(60)
        assert h.runtime.protection.applied and _sets(h) == []
        assert h.log_names().count("dimming-skipped") == 1

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("step", range(6))
def test_cancelling_the_runtime_at_any_point_still_restores(step):
    """The watch is cancelled at each of its first awaits in turn; the shielded cleanup always restores."""
    harness = _harness()

    async def body(h: Harness) -> None:
        _go_idle(h, minutes_ago=10)
        await h.start()
        await anyio.sleep(1)
        h.platform.machine.idle = False
        for _ in range(step):
            await anyio.sleep(0)

    run_mock(lambda: with_runtime(harness, body))
    assert _brightness(harness) == 80 and not harness.paths.brightness_backup_file.exists()


@pytest.mark.parametrize("adopted", [False, True])
def test_a_refused_dim_changes_nothing_and_keeps_only_a_predecessors_backup(adopted):
    harness = _harness()

    def refuse(level: BrightnessLevel) -> None:
        raise OSError("logind refused SetBrightness")

    harness.platform.brightness.set_brightness = refuse  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        if adopted:
            h.paths.brightness_backup_file.parent.mkdir(parents=True, exist_ok=True)
            write_brightness_backup(h.paths.brightness_backup_file,
                                    BrightnessBackup(BrightnessLevel("backlight/fake", 90, 100), 20))
        _go_idle(h, minutes_ago=10)
        await h.start()
        await anyio.sleep(60)
        assert h.runtime.protection.applied and h.runtime.dimming.describe() is None
        assert h.log_names().count("dimming-set-failed") == 1
        assert h.paths.brightness_backup_file.exists() is adopted

    run_mock(lambda: with_runtime(harness, body))


def test_watchers_see_the_display_dimmed_and_restored_at_once():
    """`status --watch` and the tray: dimming changes only the status reply (no registry change), and still
    streams a line within the coalescing window, not at the stream's periodic re-check."""
    from lidguard.runtime.components.status_stream import RECHECK_SECONDS

    harness = _harness()

    assert WATCH_POLL_SECONDS + 1 < RECHECK_SECONDS

    async def take(watcher) -> dict:
        with anyio.fail_after(WATCH_POLL_SECONDS + 1):  # the dimming watch's own poll, not the re-check
            return json.loads(await watcher.take())

    async def body(h: Harness) -> None:
        await h.start()
        await h.send("status")
        watcher = h.runtime.status_stream.open()
        assert (await take(watcher))["DisplayDimmed"] is None
        _go_idle(h, minutes_ago=10)
        dimmed = await take(watcher)
        while dimmed["DisplayDimmed"] is None:  # a line from the idle reading itself may come first
            dimmed = await take(watcher)
        assert dimmed["DisplayDimmed"]["DimmedTo"] == 20
        h.platform.machine.idle = False
        restored = await take(watcher)
        assert restored["DisplayDimmed"] is None
        h.runtime.status_stream.close(watcher)

    run_mock(lambda: with_runtime(harness, body))
