"""Exclusive lock on config writes (REFERENCE row 42): hook-install/remove, mcp-install/remove,
provider-mcp-install and `settings` do their read-modify-write under a per-file lock, so a concurrent
writer (another terminal, an IDE) never loses its entries and is never lost.

The other writer is a real process holding the same lock: it reads the file when it takes the lock and
writes its own change from that read when it lets go - what a second lidguard does. The lidguard under
test is seen waiting by its open lock file in /proc, never by a sleep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lidguard.platform.locking import ConfigLockError, config_lock, config_lock_path

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see an open lock file")

HOLDER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from lidguard.fileio import write_atomic
    from lidguard.platform.locking import config_lock
    path, key, value = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    with config_lock(path):
        data = json.loads(path.read_text()) if path.exists() else {}
        print("locked", flush=True)
        sys.stdin.readline()
        data[key] = value
        write_atomic(path, json.dumps(data, indent=2))
""")


class OtherWriter:
    """A process that holds the config lock between its read and its write."""

    def __init__(self, env: dict[str, str], path: Path, key: str, value: object) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), key, json.dumps(value)],
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "locked\n"

    def finish(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        assert self.process.wait(timeout=30) == 0


def _holds_open(pid: int, lock: Path) -> bool:
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}") == str(lock):
                return True
        except OSError:
            continue
    return False


def _run_while_another_writer_holds(lidguard, path: Path, key: str, value: object, *args: str):
    """Starts `lidguard args` while OtherWriter holds the lock; lets go once lidguard waits for it (or
    ended without waiting: then the other writer's stale write shows the lost update)."""
    env = {**lidguard.env, "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    writer = OtherWriter(env, path, key, value)
    process = subprocess.Popen([sys.executable, "-m", "lidguard", *args], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    lock = config_lock_path(path)
    deadline = time.monotonic() + 60
    while process.poll() is None and not _holds_open(process.pid, lock) and time.monotonic() < deadline:
        time.sleep(0.02)
    writer.finish()
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr


def test_hook_install_waits_for_the_other_writer_and_keeps_its_entry(lidguard):
    settings = lidguard.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}))
    code, _, stderr = _run_while_another_writer_holds(lidguard, settings, "theme", "dark",
                                                      "hook-install", "--provider", "claude")
    assert code == 0, stderr
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark" and data["model"] == "opus"
    assert "UserPromptSubmit" in data["hooks"] and "Stop" in data["hooks"]


def test_hook_remove_keeps_the_other_writers_entry(lidguard):
    lidguard.run("hook-install", "--provider", "codex", "--config", str(lidguard.home / "c" / "hooks.json"))
    hooks = lidguard.home / "c" / "hooks.json"
    assert "hooks" in json.loads(hooks.read_text())
    code, _, stderr = _run_while_another_writer_holds(lidguard, hooks, "note", "kept",
                                                      "hook-remove", "--provider", "codex", "--config", str(hooks))
    assert code == 0, stderr
    data = json.loads(hooks.read_text())
    assert data["note"] == "kept" and "UserPromptSubmit" not in json.dumps(data)


def test_settings_waits_and_keeps_the_other_writers_change(lidguard):
    lidguard.run("settings", "--suspend-mode", "hibernate", check=True)
    path = lidguard.data_dir / "settings.json"
    code, _, stderr = _run_while_another_writer_holds(lidguard, path, "PostStopSuspendDelaySeconds", 42,
                                                      "settings", "--post-stop-suspend-sound", "Beep")
    assert code == 0, stderr
    data = json.loads(path.read_text())
    assert (data["PostStopSuspendDelaySeconds"], data["PostStopSuspendSound"], data["SuspendMode"]) == (
        42, "Beep", "Hibernate")


def test_mcp_install_through_the_config_file_keeps_the_other_writers_entry(lidguard):
    config = lidguard.home / ".copilot" / "mcp-config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    code, _, stderr = _run_while_another_writer_holds(lidguard, config, "editor", {"font": 12},
                                                      "mcp-install", "--provider", "copilot")
    assert code == 0, stderr
    data = json.loads(config.read_text())
    assert data["editor"] == {"font": 12} and set(data["mcpServers"]) == {"other", "lidguard"}


def test_provider_mcp_install_keeps_the_other_writers_entry(lidguard):
    config = lidguard.home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    code, _, stderr = _run_while_another_writer_holds(
        lidguard, config, "ide", True, "provider-mcp-install", "--config", str(config), "--provider-name", "agent")
    assert code == 0, stderr
    data = json.loads(config.read_text())
    assert data["ide"] is True and "lidguard-provider" in data["mcpServers"]


def test_concurrent_provider_mcp_installs_never_lose_an_entry(lidguard):
    config = lidguard.home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    names = [f"server-{index}" for index in range(4)]
    processes = [subprocess.Popen(
        [sys.executable, "-m", "lidguard", "provider-mcp-install", "--config", str(config), "--provider-name",
         "agent", "--server-name", name], env=lidguard.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for name in names]
    for process in processes:
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    assert set(json.loads(config.read_text())["mcpServers"]) == set(names)


def test_the_lock_times_out_with_one_line_and_refuses_odd_lock_files(lidguard, tmp_path):
    path = tmp_path / "settings.json"
    writer = OtherWriter(lidguard.env, path, "k", 1)
    try:
        began = time.monotonic()
        with pytest.raises(ConfigLockError, match="Another process is changing"), config_lock(path, timeout=0.2):
            pass
        assert time.monotonic() - began < 10
    finally:
        writer.finish()
    with config_lock(path, tmp_path / "other.json", path, timeout=1):  # duplicates and several files
        pass
    target = tmp_path / "elsewhere"
    os.symlink(target, config_lock_path(tmp_path / "linked.json"))
    with pytest.raises(ConfigLockError, match="Cannot lock"), config_lock(tmp_path / "linked.json", timeout=1):
        pass
    assert not target.exists()
    os.mkfifo(config_lock_path(tmp_path / "fifo.json"))
    with pytest.raises(ConfigLockError, match="not a regular file"), config_lock(tmp_path / "fifo.json", timeout=1):
        pass
    config_lock_path(tmp_path / "dir.json").mkdir()
    with pytest.raises(ConfigLockError, match="Cannot lock"), config_lock(tmp_path / "dir.json", timeout=1):
        pass


def test_the_mcp_settings_tool_updates_under_the_lock(lidguard):
    import threading

    from lidguard.mcp.tools import ToolContext
    from lidguard.platform.paths import resolve_paths

    paths = resolve_paths()
    tools = ToolContext(paths, request=lambda command, **fields: {"RuntimeUnavailable": True})
    tools.update_settings({"suspendMode": "Hibernate"})
    writer = OtherWriter(lidguard.env, paths.settings_file, "PostStopSuspendDelaySeconds", 42)
    outcome: dict[str, object] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("result", tools.update_settings(
        {"postStopSuspendSound": "Beep"})))
    thread.start()
    deadline = time.monotonic() + 30
    while thread.is_alive() and not _holds_open(os.getpid(), config_lock_path(paths.settings_file)) and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    writer.finish()
    thread.join(30)
    data = json.loads(paths.settings_file.read_text())
    assert (data["PostStopSuspendDelaySeconds"], data["PostStopSuspendSound"], data["SuspendMode"]) == (
        42, "Beep", "Hibernate")
    assert outcome["result"]["appliedChanges"] == ["postStopSuspendSound"]  # type: ignore[index]


def test_interactive_settings_never_hold_the_lock_while_asking(lidguard):
    """The answers are applied to the file as it is when they are saved, under the lock; a `settings`
    run while the user is still typing neither waits nor is lost."""
    lidguard.run("settings", "--suspend-mode", "sleep", check=True)
    interactive = subprocess.Popen([sys.executable, "-m", "lidguard", "settings"], env=lidguard.env, text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert interactive.stdout is not None and interactive.stdin is not None
    prompt = ""
    while "Prevent system sleep" not in prompt:  # the first question is asked: the file was read
        char = interactive.stdout.read(1)
        assert char, interactive.stderr.read() if interactive.stderr else ""
        prompt += char
    began = time.monotonic()
    other = lidguard.run("settings", "--suspend-mode", "hibernate", timeout=60)
    assert other.returncode == 0, other.stderr
    assert time.monotonic() - began < 10  # not the lock's 15 s wait
    interactive.stdin.write("false\n" + "\n" * 40)
    interactive.stdin.close()
    assert interactive.wait(timeout=60) == 0, interactive.stderr.read() if interactive.stderr else ""
    data = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert data["SuspendMode"] == "Hibernate" and data["PowerRequest"]["PreventSystemSleep"] is False
