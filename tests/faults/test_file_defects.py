"""Issue 17's file defects (1, 2, 4, 7, 8, 12) and issue 18's corrupt-settings item, each as the user
meets it: real ``lidguard`` processes in an isolated home, the fake platform recording what protection
the runtime applied. Keep-awake never depends on a file; every command says what is wrong in one line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.platform.fake import FakePlatform
from lidguard.runtime import protection
from lidguard.runtime.protection import ProtectionCoordinator, protection_target
from lidguard.settings.model import headless_defaults

from .fault_matrix import enospc_env

PROMPT = {"session_id": "h1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "go"}


def protected(lidguard) -> bool:
    return any(action.get("action") == "protection-applied" for action in lidguard.actions())


def hook_start(lidguard, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=env or lidguard.env,
                          input=json.dumps(PROMPT).encode(), capture_output=True, timeout=60)


def session_ids(lidguard, env: dict[str, str] | None = None) -> set[str]:
    result = subprocess.run([sys.executable, "-m", "lidguard", "status", "--json"], env=env or lidguard.env,
                            text=True, capture_output=True, timeout=30, check=True)
    return {session["sessionIdentifier"] for session in json.loads(result.stdout)["sessions"]}


def settings_path(lidguard) -> Path:
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    return lidguard.data_dir / "settings.json"


# -- defect 1: NaN / Infinity anywhere in settings.json ------------------------------------------------
@pytest.mark.parametrize("content", [
    b'{"PostStopSuspendDelaySeconds": NaN}',  # the reproducer
    b'{"SomeUnknownKey": Infinity, "ChangeLidAction": true}',
    b'{"PowerRequest": {"PreventSystemSleep": true, "Reason": -Infinity}, "SessionTimeoutMinutes": 1e400}',
    b'{"Unknown": ' + b"9" * 5000 + b"}",  # more digits than int() takes from text
    b'{"Unknown": ' + b"[" * 70 + b"]" * 70 + b"}",  # deeper than a request may nest
])
def test_non_finite_or_oversized_numbers_anywhere_still_start_and_protect(lidguard, content):
    settings_path(lidguard).write_bytes(content)
    result = lidguard.run("start", "--provider", "custom", "--session", "s1")
    assert result.returncode == 0, result.stderr
    assert "Started Custom:s1." in result.stdout and result.stderr == ""
    assert protected(lidguard)
    assert hook_start(lidguard).returncode == 0
    assert lidguard.wait_until(lambda: session_ids(lidguard) == {"s1", "h1"})
    assert settings_path(lidguard).read_bytes() == content, "the file is never rewritten"


def test_nan_is_reported_as_replaced_by_status_and_doctor_and_used_so_by_the_runtime(lidguard):
    settings_path(lidguard).write_bytes(b'{"PostStopSuspendDelaySeconds": NaN, "SessionTimeoutMinutes": 33}')
    lidguard.run("start", "--provider", "custom", "--session", "s1", check=True)
    line = "PostStopSuspendDelaySeconds: stored value NaN is not an integer; using 10."
    assert f"Settings problem: {line}" in lidguard.run("status", check=True).stdout
    assert line in lidguard.run("doctor", check=True).stdout
    runtime_settings = lidguard.json("status")["settings"]
    assert runtime_settings["postStopSuspendDelaySeconds"] == 10 and runtime_settings["sessionTimeoutMinutes"] == 33


# -- defect 2: an unusable pending-lid-action-backup.json ---------------------------------------------
BAD_BACKUPS = {
    "truncated": b"{",
    "wrong shape": b"[1, 2]",
    "number out of range": b'{"PowerSchemeIdentifier": "fake", "IncludesAlternatingCurrent": true, '
                           b'"AlternatingCurrentAction": 1e400}',
    "directory": None,
}


@pytest.mark.parametrize("kind", list(BAD_BACKUPS))
def test_an_unusable_lid_backup_is_set_aside_reported_and_the_session_protected(lidguard, kind):
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    backup.parent.mkdir(parents=True)
    content = BAD_BACKUPS[kind]
    if content is None:
        backup.mkdir()
    else:
        backup.write_bytes(content)
    result = lidguard.run("start", "--provider", "custom", "--session", "s1")
    assert result.returncode == 0, result.stderr
    assert "set aside as" in result.stderr and len(result.stderr.splitlines()) == 1
    assert protected(lidguard)
    assert not any(a["action"] == "lid-policy-restored" for a in lidguard.actions()), "values are never guessed"
    # Where the bad file was, a good backup now (the fake's lid hold ends with its process: settled).
    assert protection.read_lid_backup(backup) is not None
    aside = sorted(backup.parent.glob("pending-lid-action-backup.unusable-*.json"))
    assert len(aside) == 1
    if content is not None:
        assert aside[0].read_bytes() == content, "set aside as it was"
    for command in ("status", "doctor"):
        text = lidguard.run(command, check=True).stdout
        assert f"File problem: Lid-action backup set aside as {aside[0]}" in text
    assert any(str(aside[0]) in line for line in lidguard.json("status")["fileProblems"])
    # The next start has nothing left to warn about.
    again = lidguard.run("start", "--provider", "custom", "--session", "s2")
    assert again.returncode == 0 and again.stderr == ""


def test_a_hook_start_with_an_unusable_backup_protects(lidguard):
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    backup.parent.mkdir(parents=True)
    backup.write_bytes(b"{")
    result = hook_start(lidguard)
    assert (result.returncode, result.stdout) == (0, b"")
    assert lidguard.wait_until(lambda: protected(lidguard))
    assert session_ids(lidguard) == {"h1"}


class _LidPolicyThatOutlivesTheProcess:
    """A lid policy like Windows' or macOS's: what lidguard sets stays after a crash."""

    hold_ends_with_process = False

    def __init__(self) -> None:
        self.calls: list[str] = []

    def read_lid_actions(self):
        from lidguard.platform.api import LidActionSnapshot

        self.calls.append("read")
        return LidActionSnapshot("scheme", 1, 1)

    def set_do_nothing(self, snapshot) -> None:
        self.calls.append("set-do-nothing")

    def restore_lid_actions(self, snapshot) -> None:
        self.calls.append("restore")

    def drop_runtime_hold(self) -> None:
        self.calls.append("drop")


def test_the_lid_policy_waits_until_the_set_aside_backup_is_settled_keep_awake_does_not(tmp_path):
    platform = FakePlatform()
    policy = _LidPolicyThatOutlivesTheProcess()
    platform.lid_policy = policy  # type: ignore[assignment]
    backup = tmp_path / "pending-lid-action-backup.json"
    backup.write_bytes(b"{")
    logged: list[tuple[str, str]] = []
    coordinator = ProtectionCoordinator(platform, backup, lambda event, message: logged.append((event, message)))
    target = protection_target(headless_defaults())
    assert target.change_lid_action
    coordinator.converge(target)
    assert [a["action"] for a in platform.actions] == ["protection-applied"]
    assert policy.calls == [], "the lid is left alone while the old setting is unknown"
    assert [event for event, _ in logged] == ["lid-action-backup-set-aside", "lid-action-change-skipped"]
    assert coordinator.current == target  # nothing left to converge: no retry storm, no second log line
    coordinator.converge(target)
    assert len(logged) == 2
    (aside,) = protection.set_aside_lid_backups(backup)
    aside.unlink()  # the user checked the lid setting and deleted the file: settled
    coordinator.converge(protection_target(headless_defaults().replace(**{"change_lid_action": False})))
    coordinator.converge(target)
    assert policy.calls == ["read", "set-do-nothing"]
    assert protection.read_lid_backup(backup) is not None
    coordinator.converge(None)
    assert policy.calls[-1] == "restore" and not backup.exists()


def test_a_backup_that_cannot_be_written_leaves_the_lid_alone_never_keep_awake(tmp_path, monkeypatch):
    platform = FakePlatform()
    backup = tmp_path / "pending-lid-action-backup.json"

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(protection, "write_atomic", full_disk)
    logged: list[str] = []
    coordinator = ProtectionCoordinator(platform, backup, lambda event, message: logged.append(message))
    coordinator.converge(protection_target(headless_defaults()))
    assert [a["action"] for a in platform.actions] == ["protection-applied"]
    assert coordinator.applied and len(logged) == 1 and "No space left on device" in logged[0]


# -- defect 4: a full disk ----------------------------------------------------------------------------
def _full_disk_checks(lidguard, env: dict[str, str]) -> None:
    result = hook_start(lidguard, env)
    assert (result.returncode, result.stdout) == (0, b"")
    assert lidguard.wait_until(lambda: protected(lidguard)), "keep-awake with no settings file on a full disk"
    assert session_ids(lidguard, env) == {"h1"}
    assert not (lidguard.data_dir / "settings.json").exists()
    cli = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "custom", "--session", "s1"],
                         env=env, text=True, capture_output=True, timeout=60)
    assert cli.returncode == 0 and "No space left on device" in cli.stderr, cli.stderr
    assert session_ids(lidguard, env) == {"h1", "s1"}
    changed = subprocess.run([sys.executable, "-m", "lidguard", "settings", "--session-timeout-minutes", "30"],
                             env=env, text=True, capture_output=True, timeout=60)
    assert changed.returncode == 1
    assert changed.stderr.strip().splitlines() == [
        f"lidguard: Cannot save the settings file {lidguard.data_dir / 'settings.json'}: No space left on device."]


def test_a_full_disk_at_the_file_layer_never_vetoes_protection(lidguard):
    env = {**enospc_env(lidguard.env, _every_file()), "LIDGUARD_TEST_ENOSPC_NAME": "*"}
    _full_disk_checks(lidguard, env)


def _every_file():
    from .fault_matrix import FaultFile

    return FaultFile("every file", "*")


def _mount_tmpfs(where: Path, size: str) -> bool:
    try:
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                                capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


@pytest.mark.root_only
def test_a_real_full_tmpfs_never_vetoes_protection(lidguard):
    data_home = lidguard.home / "data"
    data_home.mkdir(exist_ok=True)
    if not _mount_tmpfs(data_home, "256k"):
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail("root under CI=true must be able to mount a tmpfs")
        pytest.skip("mounting a tmpfs is not possible here")
    try:  # the first start ever: not even the data folder exists yet
        with open(data_home / "filler", "wb", buffering=0) as filler:  # fill it to the last block
            chunk = b"\0" * 4096
            try:
                while True:
                    filler.write(chunk)
                    filler.flush()
            except OSError as error:
                assert error.errno == 28
        assert os.statvfs(data_home).f_bavail == 0
        _full_disk_checks(lidguard, lidguard.env)
        for command in ("status", "doctor"):
            assert f"File problem: The disk holding {lidguard.data_dir} is full" in lidguard.run(command).stdout
    finally:
        lidguard.kill_runtimes()
        lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=10)
        if subprocess.run(["umount", str(data_home)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(data_home)], capture_output=True)


# -- defect 7: settings.json that is a FIFO -----------------------------------------------------------
def test_a_fifo_settings_file_hangs_nothing(lidguard):
    path = settings_path(lidguard)
    os.mkfifo(path, 0o600)
    problem = f"The settings file {path} cannot be used: it is a FIFO (named pipe), not a regular file."
    started = lidguard.run("start", "--provider", "custom", "--session", "s1", timeout=40)
    assert started.returncode == 0 and problem in started.stderr
    assert (hook := hook_start(lidguard)).returncode == 0 and hook.stdout == b""
    status = lidguard.run("status", timeout=40)
    assert status.returncode == 0 and f"Settings file error: {problem}" in status.stdout
    assert problem in lidguard.run("doctor", timeout=40).stdout
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert session_ids(lidguard) == {"s1", "h1"}


# -- defect 8: symlinks -------------------------------------------------------------------------------
def test_a_symlinked_settings_file_is_written_through_atomically(lidguard):
    dotfiles = lidguard.home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "lidguard-settings.json"
    target.write_text(json.dumps({"SessionTimeoutMinutes": 20}))
    link = settings_path(lidguard)
    link.symlink_to(target)
    result = lidguard.run("settings", "--session-timeout-minutes", "33")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target), "the user's link stays"
    assert json.loads(target.read_text())["SessionTimeoutMinutes"] == 33
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in dotfiles.iterdir()] == [target.name], "no temp file left behind"
    lidguard.run("start", "--provider", "custom", "--session", "s1", check=True)
    assert lidguard.json("status")["settings"]["sessionTimeoutMinutes"] == 33


def test_logs_never_follow_a_symlink(lidguard):
    elsewhere = lidguard.home / "elsewhere"
    elsewhere.mkdir()
    lidguard.data_dir.mkdir(parents=True)
    links = {}
    for name in ("session-execution.log", "claude-hook-events.log"):
        target = elsewhere / name
        target.write_text("not yours\n")
        (lidguard.data_dir / name).symlink_to(target)
        links[name] = target
    assert lidguard.run("start", "--provider", "custom", "--session", "s1").returncode == 0
    assert hook_start(lidguard).returncode == 0
    assert session_ids(lidguard) == {"s1", "h1"} and protected(lidguard)
    for name, target in links.items():
        assert target.read_text() == "not yours\n", name
        assert (lidguard.data_dir / name).is_symlink()
    doctor = lidguard.run("doctor", check=True).stdout
    assert (f"File problem: Log {lidguard.data_dir / 'session-execution.log'} cannot be written: it is a symbolic "
            "link") in doctor


# -- defect 12 (settings parts) -----------------------------------------------------------------------
def test_settings_reset_on_a_directory_says_what_is_wrong(lidguard):
    path = settings_path(lidguard)
    path.mkdir()
    result = lidguard.run("settings", "--reset", "true")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"lidguard: Cannot save the settings file {path}: it is a directory; move it away first."]
    assert path.is_dir()


# -- issue 18: a corrupt settings file, every read-only command ---------------------------------------
def test_every_read_only_command_works_with_a_corrupt_settings_file_and_says_the_same(lidguard):
    path = settings_path(lidguard)
    path.write_bytes(b"{broken")
    problem = (f"The settings file {path} cannot be used: it is not valid JSON "
               "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1)).")
    for command in (("suspend-history",), ("current-temperature",), ("status",), ("doctor",),
                    ("suspend-history", "--json"), ("current-temperature", "--json"), ("status", "--json")):
        result = lidguard.run(*command)
        assert result.returncode == 0, (command, result.stderr)
        assert problem in result.stdout + result.stderr or json.dumps(problem) in result.stdout, command
    for command in (("current-lid-state",), ("current-monitor-count",), ("hook-events", "--provider", "claude")):
        assert lidguard.run(*command).returncode == 0, command
    assert path.read_bytes() == b"{broken"


def test_start_warns_once_per_runtime(lidguard):
    path = settings_path(lidguard)
    path.write_bytes(b"{broken")
    first = lidguard.run("start", "--provider", "custom", "--session", "s1")
    problem = (f"The settings file {path} cannot be used: it is not valid JSON "
               "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1)).")
    assert first.returncode == 0 and len(first.stderr.splitlines()) == 1
    assert first.stderr.startswith(f"lidguard: warning: {problem} "), "the words status and doctor use"
    second = lidguard.run("start", "--provider", "custom", "--session", "s2")
    assert (second.returncode, second.stderr) == (0, "")
    path.write_bytes(b"[1]")  # another problem: said again
    third = lidguard.run("start", "--provider", "custom", "--session", "s3")
    assert "does not hold a JSON object" in third.stderr
    lidguard.run("stop-runtime", "--force", check=True)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=20)
    fourth = lidguard.run("start", "--provider", "custom", "--session", "s4")
    assert fourth.returncode == 0 and "does not hold a JSON object" in fourth.stderr, "a new runtime: once more"


def test_an_unreadable_settings_file_gives_start_and_status_the_same_line(tmp_path, monkeypatch):
    """Root reads a mode-000 file, so the fault matrix cannot make one unreadable for root: here the
    open itself is refused, as it is for any other user."""
    from lidguard.settings.store import load_settings_report
    from lidguard.shared.raw_settings import FAIL_CLOSED, read_settings_for_start

    path = tmp_path / "settings.json"
    path.write_text("{}")
    real_open = os.open

    def refuse(target, flags, *args, **kwargs):
        if Path(target) == path:
            raise PermissionError(13, "Permission denied", str(target))
        return real_open(target, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    raw = read_settings_for_start(path)
    report = load_settings_report(path)
    problem = f"The settings file {path} cannot be used: Permission denied. {FAIL_CLOSED}"
    assert raw.settings is None and raw.problem == problem and raw.warning is not None
    assert report.error is not None and report.error.startswith(problem)
    assert path.read_text() == "{}"
