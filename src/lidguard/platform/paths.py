"""Per-user folders, following each OS's conventions.

``HOME``, ``XDG_DATA_HOME`` and ``XDG_RUNTIME_DIR`` fully isolate an instance on Linux: two instances
with different values never share a file or a socket.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LidGuardPaths", "resolve_paths"]


@dataclass(frozen=True, slots=True)
class LidGuardPaths:
    data_dir: Path
    runtime_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.data_dir / "settings.json"

    @property
    def session_log_file(self) -> Path:
        return self.data_dir / "session-execution.log"

    @property
    def suspend_history_file(self) -> Path:
        return self.data_dir / "suspend-history.log"

    @property
    def exception_log_file(self) -> Path:
        return self.data_dir / "log" / "exceptions.log"

    @property
    def lid_backup_file(self) -> Path:
        return self.data_dir / "pending-lid-action-backup.json"

    @property
    def socket_file(self) -> Path:
        return self.runtime_dir / "runtime.sock"

    @property
    def lock_file(self) -> Path:
        return self.runtime_dir / "runtime.lock"


def _data_dir() -> Path:
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return Path(local) / "LidGuard" if local else home / "AppData" / "Local" / "LidGuard"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "LidGuard"
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "share"
    return base / "LidGuard"


def _runtime_dir(data_dir: Path) -> Path:
    xdg = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if xdg and os.path.isabs(xdg) and sys.platform != "win32":
        return Path(xdg) / "lidguard"
    return data_dir / "run"


def resolve_paths() -> LidGuardPaths:
    data_dir = _data_dir()
    return LidGuardPaths(data_dir=data_dir, runtime_dir=_runtime_dir(data_dir))
