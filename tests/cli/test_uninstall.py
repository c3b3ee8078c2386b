"""``lidguard uninstall``: after it no agent config, backup, MCP entry, autostart entry or service unit
names lidguard, the runtime is stopped, lock sidecars and empty files lidguard left are gone, the data
folder stays unless --purge, and a second run says there is nothing to remove (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _names_lidguard(path: Path) -> bool:
    return path.is_file() and "-hook" in path.read_text(errors="replace") and "lidguard" in path.read_text(
        errors="replace")


def _every_file(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file() or path.is_symlink()]


@pytest.fixture
def installed(lidguard: Any) -> Any:
    home = lidguard.home
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": "opus", "hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "my-own-stop-script"}]}]}}))
    (home / ".codex").mkdir()
    (home / ".gemini").mkdir()
    for provider in ("claude", "codex", "gemini"):
        lidguard.run("hook-install", "--provider", provider, check=True)
    lidguard.run("hook-install", "--provider", "claude", check=True)  # a refresh: the backup now holds our hooks
    lidguard.run("mcp-install", "--provider", "claude", check=True)
    lidguard.run("tray", "--install-autostart", check=True)
    lidguard.run("service", "install", "--no-enable", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert lidguard.wait_until(lambda: lidguard.runtime_pids())
    return lidguard


def test_uninstall_removes_everything_outside_the_install_and_keeps_the_users_own(installed: Any) -> None:
    lidguard, home = installed, installed.home
    assert any(_names_lidguard(path) for path in _every_file(home / ".claude"))
    result = lidguard.run("uninstall", "--yes")
    assert result.returncode == 0, result.stderr
    assert "Removed: the Claude hooks" in result.stdout and "Removed: the Codex hooks" in result.stdout
    assert "Removed: the Gemini hooks" in result.stdout and "MCP entry" in result.stdout
    assert "autostart" in result.stdout.lower() and "systemd" in result.stdout
    assert "Now remove the program: " in result.stdout and "uninstall lidguard" in result.stdout
    leftovers = [path for path in _every_file(home) if path.name.endswith(".lidguard-lock")
                 or _names_lidguard(path) or (path.suffix == ".bak" and "lidguard" in path.read_text(errors="replace"))]
    leftovers = [path for path in leftovers if lidguard.data_dir not in path.parents]
    assert leftovers == []
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "my-own-stop-script"
    assert not (home / ".config" / "systemd" / "user" / "lidguard.service").exists()
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    assert lidguard.data_dir.is_dir()  # kept without --purge
    again = lidguard.run("uninstall", "--yes")
    assert again.returncode == 0 and "Nothing to remove" in again.stdout


def test_uninstall_purge_deletes_the_data_and_config_folders(installed: Any) -> None:
    lidguard = installed
    config = lidguard.home / ".config" / "LidGuard"
    config.mkdir(parents=True, exist_ok=True)
    (config / "notify.json").write_text("{}")
    result = lidguard.run("uninstall", "--yes", "--purge")
    assert result.returncode == 0, result.stderr
    assert not lidguard.data_dir.exists() and not config.exists()


def test_uninstall_asks_first_and_a_no_removes_nothing(installed: Any) -> None:
    lidguard = installed
    result = lidguard.run("uninstall", input_text="n\n")
    assert result.returncode == 1 and "Nothing was removed" in result.stdout
    assert _names_lidguard(lidguard.home / ".claude" / "settings.json")
    ended = lidguard.run("uninstall", input_text="")
    assert ended.returncode == 1 and ended.stderr.count("\n") == 1 and "--yes" in ended.stderr


def test_hook_remove_leaves_no_lock_file_no_backup_with_our_hooks_and_no_empty_file(lidguard: Any) -> None:
    home = lidguard.home
    for folder in (".claude", ".codex", ".gemini"):
        (home / folder).mkdir()
    for provider in ("claude", "codex", "gemini"):
        lidguard.run("hook-install", "--provider", provider, check=True)
        lidguard.run("hook-install", "--provider", provider, check=True)
        lidguard.run("hook-remove", "--provider", provider, check=True)
    left = [path for path in _every_file(home) if lidguard.data_dir not in path.parents
            and (path.name.endswith(".lidguard-lock") or _names_lidguard(path) or path.stat().st_size == 0)]
    assert left == []


def test_a_lock_waiter_whose_sidecar_was_removed_by_the_holder_locks_the_new_one(tmp_path: Path) -> None:
    """hook-remove removes the sidecar while holding it; a waiter that then gets the removed inode must
    lock the new file, or a third process would hold "the same" lock beside it."""
    import threading

    from lidguard.platform.locking import ConfigLockError, config_lock, config_lock_path

    config = tmp_path / "settings.json"
    entered, leave = threading.Event(), threading.Event()

    def waiter() -> None:
        with config_lock(config, timeout=10):
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=waiter)
    with config_lock(config):
        thread.start()
        assert not entered.wait(0.3)
        config_lock_path(config).unlink()
    try:
        assert entered.wait(10)
        with pytest.raises(ConfigLockError):
            with config_lock(config, timeout=0.3):
                pass
    finally:
        leave.set()
        thread.join(10)
