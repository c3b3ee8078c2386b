"""A data folder too long for a Unix socket: the socket folder is one only this user can create, never a
predictable shared /tmp name another local user could squat (issue 39 item 7)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.platform.paths import MAX_SOCKET_PATH_BYTES, RuntimeDirError, prepare_runtime_dir, resolve_paths


def _long(base: Path) -> Path:
    return base / ("d" * 60) / ("e" * 60)


def test_a_long_data_folder_gets_its_socket_folder_under_home_not_tmp(isolated_home, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(_long(isolated_home)))
    paths = resolve_paths()
    assert not str(paths.runtime_dir).startswith("/tmp/lidguard-")
    assert paths.runtime_dir.parent == Path(os.path.realpath(isolated_home)) / ".lidguard-run"
    assert len(os.fsencode(str(paths.socket_file))) <= MAX_SOCKET_PATH_BYTES
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert resolve_paths() == paths, "the same folder whatever the caller's environment"
    prepare_runtime_dir(paths.runtime_dir)
    for folder in (paths.runtime_dir, paths.runtime_dir.parent):
        assert oct(os.lstat(folder).st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("case", [pytest.param("foreign", marks=pytest.mark.root_only), "loose"])
def test_a_precreated_foreign_or_loose_short_folder_is_refused(isolated_home, monkeypatch, case):
    monkeypatch.setenv("XDG_DATA_HOME", str(_long(isolated_home)))
    squatted = isolated_home / ".lidguard-run"
    squatted.mkdir(mode=0o700)
    if case == "foreign":  # "another user made it": this process pretends to be a different uid
        real_uid = os.getuid()
        if real_uid != 0:
            pytest.skip("needs root to give the home folder to the pretended uid")
        os.chown(isolated_home, real_uid + 1, -1)  # the home is the pretended user's, the folder in it is not
        monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
        expected = f"belongs to uid {real_uid}, not to you (uid {real_uid + 1})"
    else:
        os.chmod(squatted, 0o777)
        expected = "writable by other users (mode 0777)"
    with pytest.raises(RuntimeDirError, match=re.escape(expected)) as raised:
        resolve_paths()
    assert str(squatted) in str(raised.value) and "\n" not in str(raised.value)


def test_a_long_home_uses_a_private_xdg_runtime_dir(isolated_home, monkeypatch, tmp_path):
    long_home = _long(isolated_home)
    long_home.mkdir(parents=True, mode=0o700)
    runtime = isolated_home / "run"
    monkeypatch.setenv("HOME", str(long_home))
    monkeypatch.setenv("XDG_DATA_HOME", str(long_home / "data"))
    paths = resolve_paths()
    assert paths.runtime_dir.parent == Path(os.path.realpath(runtime))
    assert paths.runtime_dir.name.startswith("lidguard-")
    os.chmod(runtime, 0o755)  # XDG_RUNTIME_DIR must be the user's own 0700 folder, else it is not used
    with pytest.raises(RuntimeDirError, match="no private folder short enough") as raised:
        resolve_paths()
    assert "XDG_RUNTIME_DIR" in str(raised.value) and "\n" not in str(raised.value)
    os.chmod(runtime, 0o700)
    folder = paths.runtime_dir
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)  # a loose folder at the chosen name is refused, never used
    with pytest.raises(RuntimeDirError, match=re.escape("writable by other users (mode 0777)")):
        resolve_paths()


def test_long_data_path_with_xdg_runtime_dir_end_to_end(lidguard):
    long_home = _long(lidguard.home)
    long_home.mkdir(parents=True, mode=0o700)
    lidguard.env.update(HOME=str(long_home), XDG_DATA_HOME=str(long_home / "data"))
    lidguard.home = long_home  # the fixture finds (and ends) the runtimes started with this HOME
    lidguard.run("start", "--provider", "custom", "--session", "long", check=True)
    probe = "from lidguard.platform.paths import resolve_paths; print(resolve_paths().socket_file)"
    socket_file = subprocess.run([sys.executable, "-c", probe], env=lidguard.env, capture_output=True, text=True,
                                 check=True).stdout.strip()
    assert socket_file.startswith(os.path.realpath(lidguard.env["XDG_RUNTIME_DIR"]) + "/lidguard-")
    assert os.path.exists(socket_file)
    status = lidguard.json("status")
    assert status["runtimeRunning"] is True
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["long"]
    assert lidguard.runtime_pids()


def test_a_hook_under_a_squatted_socket_folder_says_so_in_its_log_and_exits_cleanly(lidguard):
    """Issue 39.7: "refuse and SAY so (log + status)". The agent's hook cannot reach a runtime through a folder
    another user could have made: it answers the agent as always (exit 0, nothing printed) and its log - in the
    data folder, which is the user's own - says why this turn is not protected; status says the same."""
    long_data = _long(lidguard.home)
    lidguard.env["XDG_DATA_HOME"] = str(long_data)
    squatted = lidguard.home / ".lidguard-run"
    squatted.mkdir(mode=0o700)
    os.chmod(squatted, 0o777)
    payload = '{"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": "/w", "prompt": "go"}'
    result = subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=lidguard.env, input=payload.encode(),
                            capture_output=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, b""), result.stderr
    log = (long_data / "LidGuard" / "claude-hook-events.log").read_text()
    assert "Not protected: the runtime cannot be reached" in log and str(squatted) in log, log
    assert "writable by other users (mode 0777)" in log
    status = lidguard.run("status")
    assert status.returncode == 1 and str(squatted) in status.stderr and len(status.stderr.splitlines()) == 1
    assert not lidguard.runtime_pids(), "nothing was started through the refused folder"
