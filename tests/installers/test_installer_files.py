"""What hook-install/hook-remove do to the files they touch, through the CLI: the file's mode is kept,
one backup per file (not one per run), and a file lidguard created is not left behind as ``{}``."""

from __future__ import annotations

import json
import stat


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def backups_of(path) -> list[str]:
    return sorted(item.name for item in path.parent.iterdir() if item.name.startswith(path.name + "."))


def test_install_keeps_the_mode_and_one_backup_per_file(lidguard):
    settings = lidguard.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}, indent=2) + "\n")
    settings.chmod(0o644)
    lidguard.run("hook-install", "--provider", "claude", check=True)
    assert mode(settings) == 0o644
    for delay in ("20", "30", "40"):  # each changes the Stop hook timeout: settings rewrites the hooks (32.5)
        before = settings.read_text()
        lidguard.run("settings", "--post-stop-suspend-delay-seconds", delay, check=True)
        assert settings.read_text() != before
        result = lidguard.run("hook-install", "--provider", "claude", check=True)
        assert "Changed: False" in result.stdout
    assert mode(settings) == 0o644
    assert backups_of(settings) == ["settings.json.lidguard.bak"]
    backup = settings.with_name("settings.json.lidguard.bak")
    assert mode(backup) == 0o600 and "Stop" in json.loads(backup.read_text())["hooks"]


def test_remove_leaves_no_empty_object_behind(lidguard):
    (lidguard.home / ".claude").mkdir()
    (lidguard.home / ".codex").mkdir()
    lidguard.run("hook-install", "--provider", "claude", check=True)
    lidguard.run("hook-install", "--provider", "codex", check=True)
    claude = lidguard.home / ".claude" / "settings.json"
    codex = lidguard.home / ".codex" / "hooks.json"
    assert claude.exists() and codex.exists()
    lidguard.run("hook-remove", "--provider", "claude", check=True)
    lidguard.run("hook-remove", "--provider", "codex", check=True)
    assert not claude.exists() and not codex.exists()
    assert not claude.with_name("settings.json.lidguard.bak").exists()  # it held only our hooks (issue 33)
    status = lidguard.run("hook-status", "--provider", "claude", check=True).stdout
    assert "Status: NotInstalled" in status


def test_remove_keeps_a_file_that_holds_the_users_own_keys(lidguard):
    settings = lidguard.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}))
    lidguard.run("hook-install", "--provider", "claude", check=True)
    lidguard.run("hook-remove", "--provider", "claude", check=True)
    assert json.loads(settings.read_text()) == {"model": "opus"}
