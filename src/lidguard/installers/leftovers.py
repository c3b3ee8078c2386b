"""What a hook removal leaves beside an agent's config and should not: a backup that still holds
lidguard's hooks (restoring it brings hooks back that point at a removed program), the lock sidecars
(``.<name>.lidguard-lock``, needed only while lidguard changes the file) and a file lidguard's removal
left empty (``~/.codex/config.toml`` that held only the trust entries). Used by ``hook-remove`` and
``uninstall``; a user's own backup (no lidguard hook in it) and non-empty files are never touched."""

from __future__ import annotations

import re
from pathlib import Path

from ..platform.locking import config_lock_path
from .common import backup_path

__all__ = ["holds_lidguard_hooks", "remove_leftovers"]

# a lidguard hook command: the program (any path ending in lidguard or lidguard.exe, also `-m lidguard`),
# then a `*-hook` subcommand
_HOOK_COMMAND = re.compile(r"lidguard(?:\.exe)?[\"']?\s+[a-z]+-hook\b")
_LARGEST_CHECKED = 16 * 1024 * 1024


def holds_lidguard_hooks(path: Path) -> bool:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _LARGEST_CHECKED:
            return False
        return _HOOK_COMMAND.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def _is_empty_file(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.stat().st_size < 4096 and not path.read_bytes().strip()
    except OSError:
        return False


def remove_leftovers(files: list[Path]) -> list[str]:
    """Removes the leftovers of ``files`` (the config files a removal may have changed); one line per
    removed or unremovable thing. Call it while holding ``config_lock(*files)``: the lock sidecars are
    removed silently (a waiter then locks a new one; on Windows an open sidecar stays)."""
    lines: list[str] = []
    for path in dict.fromkeys(files):
        found = [(backup_path(path), "backup holding lidguard's hooks")] if holds_lidguard_hooks(
            backup_path(path)) else []
        if _is_empty_file(path):
            found.append((path, "empty file"))
        sidecar = config_lock_path(path)
        if sidecar.is_file() and not sidecar.is_symlink():
            found.append((sidecar, ""))
        for target, what in found:
            try:
                target.unlink()
            except FileNotFoundError:
                continue
            except OSError as error:
                if what:
                    lines.append(f"Could not remove {what} {target}: {error.strerror or error}")
                continue
            if what:
                lines.append(f"Removed: {what} {target}")
    return lines
