"""Where the lock and the socket live, and which runtime folders are never used (issue 6)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.cli.context import CliContext
from lidguard.cli.output import CliError
from lidguard.platform.locking import InstanceLock, _restore_own_mode
from lidguard.platform.paths import (
    MAX_SOCKET_PATH_BYTES,
    RuntimeDirError,
    prepare_runtime_dir,
    resolve_paths,
    runtime_dir_for,
)

NOBODY = 65534


def test_lock_and_socket_do_not_depend_on_xdg_runtime_dir(isolated_home, monkeypatch):
    with_variable = resolve_paths()
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    without_variable = resolve_paths()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(isolated_home / "elsewhere"))
    other_variable = resolve_paths()
    assert with_variable == without_variable == other_variable
    data_dir = isolated_home / "data" / "LidGuard"
    assert with_variable.lock_file == data_dir / "runtime.lock"
    assert with_variable.lock_file.parent == with_variable.settings_file.parent == with_variable.lid_backup_file.parent
    assert with_variable.socket_file == data_dir / "run" / "runtime.sock"


def test_a_long_data_folder_gets_a_short_private_socket_folder_derived_from_it(isolated_home, monkeypatch):
    deep = isolated_home / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("XDG_DATA_HOME", str(deep))
    paths = resolve_paths()
    assert len(os.fsencode(str(paths.socket_file))) <= MAX_SOCKET_PATH_BYTES
    assert paths.runtime_dir.parent == Path(os.path.realpath(isolated_home)) / ".lidguard-run"  # never /tmp
    assert len(paths.runtime_dir.name) == 16
    assert paths.lock_file == deep / "LidGuard" / "runtime.lock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setenv("TMPDIR", str(isolated_home))
    assert resolve_paths() == paths, "the same name whatever the environment"
    assert runtime_dir_for(isolated_home / ("f" * 60) / ("e" * 60)) != paths.runtime_dir
    try:
        prepared = prepare_runtime_dir(paths.runtime_dir)
        assert oct(os.lstat(prepared).st_mode & 0o777) == "0o700"
    finally:
        os.rmdir(paths.runtime_dir)
        os.rmdir(paths.runtime_dir.parent)


def test_the_runtime_folder_is_created_private(isolated_home):
    paths = resolve_paths()
    prepare_runtime_dir(paths.runtime_dir)
    assert oct(os.lstat(paths.runtime_dir).st_mode & 0o777) == "0o700"
    os.chmod(paths.runtime_dir, 0o755)  # ours and not writable by others: tightened, not refused
    prepare_runtime_dir(paths.runtime_dir)
    assert oct(os.lstat(paths.runtime_dir).st_mode & 0o777) == "0o700"


def _symlinked(runtime_dir: Path, target: Path) -> None:
    target.mkdir(mode=0o700)
    runtime_dir.parent.mkdir(parents=True, exist_ok=True)
    runtime_dir.symlink_to(target)


def _world_writable(runtime_dir: Path, target: Path) -> None:
    runtime_dir.mkdir(parents=True)
    os.chmod(runtime_dir, 0o777)


def _group_writable(runtime_dir: Path, target: Path) -> None:
    runtime_dir.mkdir(parents=True)
    os.chmod(runtime_dir, 0o770)


def _owned_by_nobody(runtime_dir: Path, target: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to chown a folder to another user")
    runtime_dir.mkdir(parents=True, mode=0o700)
    os.chown(runtime_dir, NOBODY, NOBODY)


def _a_file(runtime_dir: Path, target: Path) -> None:
    runtime_dir.parent.mkdir(parents=True)
    runtime_dir.write_text("")


UNSAFE = {
    "symlink": (_symlinked, "symbolic link"),
    "world-writable": (_world_writable, "writable by other users (mode 0777)"),
    "group-writable": (_group_writable, "writable by other users (mode 0770)"),
    "other-owner": (_owned_by_nobody, f"belongs to uid {NOBODY}"),
    "not-a-folder": (_a_file, "is not a folder"),
}


@pytest.mark.parametrize("case", [pytest.param(case, marks=pytest.mark.root_only) if case == "other-owner" else case
                                  for case in sorted(UNSAFE)])
def test_an_unsafe_runtime_folder_is_never_used(isolated_home, case):
    make, expected = UNSAFE[case]
    runtime_dir = isolated_home / "data" / "LidGuard" / "run"
    target = isolated_home / "target"
    make(runtime_dir, target)
    before = os.lstat(runtime_dir)
    with pytest.raises(RuntimeDirError, match=re.escape(expected)) as raised:
        resolve_paths()
    assert "\n" not in str(raised.value) and str(runtime_dir) in str(raised.value)
    assert isinstance(raised.value, ValueError)
    with pytest.raises(RuntimeDirError, match=re.escape(expected)):
        prepare_runtime_dir(runtime_dir)
    after = os.lstat(runtime_dir)
    assert (after.st_mode, after.st_uid) == (before.st_mode, before.st_uid), "the folder was changed"
    if target.exists():
        assert oct(target.stat().st_mode & 0o777) == "0o700" and not any(target.iterdir())
    with pytest.raises(CliError, match=re.escape(expected)):
        CliContext()


@pytest.mark.root_only
def test_another_users_data_folder_is_refused(isolated_home):
    if os.getuid() != 0:
        pytest.skip("needs root to chown a folder to another user")
    data_dir = isolated_home / "data" / "LidGuard"
    data_dir.mkdir(parents=True)
    os.chown(data_dir, NOBODY, NOBODY)
    with pytest.raises(RuntimeDirError, match=f"belongs to uid {NOBODY}"):
        resolve_paths()


def test_the_cli_and_run_server_refuse_a_symlinked_runtime_folder_in_one_line(lidguard):
    target = lidguard.home / "target"
    _symlinked(lidguard.socket.parent, target)
    for args in (("status",), ("start", "--provider", "claude", "--session", "s1"), ("run-server",)):
        result = lidguard.run(*args, timeout=20)
        assert result.returncode == 1, (args, result)
        assert result.stderr.count("\n") == 1 and "symbolic link" in result.stderr, (args, result.stderr)
        assert result.stderr.startswith("lidguard: The runtime folder ")
    assert not lidguard.runtime_pids()
    assert not any(target.iterdir())


def test_a_symlinked_lock_file_is_not_followed(isolated_home):
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True)
    victim = isolated_home / "victim"
    victim.write_text("keep")
    paths.lock_file.symlink_to(victim)
    with pytest.raises(OSError):
        InstanceLock(paths.lock_file).try_acquire()
    assert victim.read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens a mode-000 file anyway: the user lane runs this")
def test_a_mode_000_lock_file_of_ones_own_is_taken_back(isolated_home, monkeypatch):
    """A user's own lock file they may not open (a stray chmod 000) is set back to 0600 and taken, as root
    would take it anyway; the user lane (ci/test.sh) runs this as a normal user, where it counts."""
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True)
    paths.lock_file.write_text("")
    paths.lock_file.chmod(0)
    lock = InstanceLock(paths.lock_file)
    assert lock.try_acquire()
    lock.release()
    assert oct(paths.lock_file.stat().st_mode & 0o777) == "0o600"
    paths.lock_file.chmod(0)
    real_uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_uid + 1)  # "another user's file": left as it is
    assert _restore_own_mode(paths.lock_file) is False
    assert paths.lock_file.stat().st_mode & 0o777 == 0


def test_recovery_never_runs_while_the_lock_is_held(isolated_home, monkeypatch):
    """The lock of a live runtime (started with XDG_RUNTIME_DIR) stops recovery in a caller without it."""
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True)
    backup = paths.lid_backup_file
    backup.write_text('{"AlternatingCurrentAction": 1, "DirectCurrentAction": 1}')
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from lidguard.platform.locking import InstanceLock\n"
         "from lidguard.platform.paths import resolve_paths\n"
         "assert InstanceLock(resolve_paths().lock_file).try_acquire()\n"
         "print('held', flush=True)\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        restored: list[object] = []
        monkeypatch.setattr("lidguard.runtime.protection.restore_pending_lid_backup",
                            lambda *args: restored.append(args))
        CliContext().recover_if_no_runtime()
        assert restored == [] and backup.exists()
    finally:
        holder.communicate("", timeout=10)
    CliContext().recover_if_no_runtime()
    assert len(restored) == 1, "with the lock free, recovery runs"
