"""Per-user folders, following each OS's conventions, and where the runtime's lock and socket live.

Data folder: ``$XDG_DATA_HOME/LidGuard`` (when absolute) else ``~/.local/share/LidGuard`` on Linux,
``~/Library/Application Support/LidGuard`` on macOS, ``%LOCALAPPDATA%\\LidGuard`` on Windows. The fake
platform outside the tests uses ``LidGuard-demo`` instead (``_folder_name``). ``HOME``
and ``XDG_DATA_HOME`` fully isolate an instance: two data folders never share a file, lock or socket.

One runtime per data folder, whatever the caller's environment. Hooks run from cron, IDE terminals,
``sudo -u`` and ssh sessions without PAM, where ``XDG_RUNTIME_DIR`` (and often ``TMPDIR``) is missing,
so nothing below depends on them; the lock and the socket are derived from the data folder alone:

* lock: ``<data>/runtime.lock``, beside settings.json and the lid backup. ``run-server`` holds it for
  its whole life; a CLI runs crash recovery only when it can take it (``cli/context.py``).
* socket: ``<real data>/run/runtime.sock`` (``<real data>`` = the data folder's ``os.path.realpath``, so
  the socket does not depend on how HOME is spelled) when that path fits in ``MAX_SOCKET_PATH_BYTES`` (100 bytes:
  ``sun_path`` holds 107 bytes on Linux, 103 on macOS), else
  ``<real home>/.lidguard-run/<hash>/runtime.sock`` where ``<hash>`` is the first 16 hex digits of the
  SHA-256 of the data folder's real path (the home folder must be this user's and not writable by
  others; ``.lidguard-run`` is created 0700 and refused when it is not), so every caller with this HOME
  derives the same name; only when that is too long too, ``$XDG_RUNTIME_DIR/lidguard-<hash>`` when that
  variable names this user's own 0700 folder (callers without it then miss the runtime); else
  ``RuntimeDirError`` says there is no safe place. Never a predictable shared name in ``/tmp``, which
  another local user could create first (issue 39). On Windows (no uid) the folder is always
  ``<data>/run`` (a named pipe replaces the socket later).

The runtime folder (the socket's parent) is used only when it is the user's own private folder:
``os.lstat`` (a symbolic link is never followed) must show a directory owned by this uid and not
writable by group or others; a folder we own with other extra bits (0755) is tightened to 0700 when
prepared. Anything else raises ``RuntimeDirError`` with a one-line message saying what to do. There
is deliberately no silent fallback: a client and a server that chose different fallbacks would split
the runtime in two. The data folder itself, when it exists, must belong to this uid (``sudo`` keeping
another user's ``HOME`` is refused instead of mixing two users' files).
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # the hook path imports neither typing nor pathlib (~5 ms in a fresh interpreter)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_SOCKET_PATH_BYTES",
    "LidGuardPaths",
    "RuntimeDirError",
    "checked_data_dir",
    "check_runtime_dir",
    "prepare_runtime_dir",
    "resolve_paths",
    "runtime_dir_for",
    "user_config_dir",
]

MAX_SOCKET_PATH_BYTES = 100
SOCKET_NAME = "runtime.sock"
SHORT_HOME_FOLDER = ".lidguard-run"  # <home>/.lidguard-run/<hash>: only this user can create it


class RuntimeDirError(ValueError):
    """No safe folder for the runtime's socket or lock; the message is one readable line."""


def _path(text: str) -> Path:
    from pathlib import Path  # pathlib (with urllib.parse, ipaddress, fnmatch) costs the hook path ~3 ms

    return Path(text)


class LidGuardPaths:
    """The user's files and folders (immutable; a plain class: ``dataclasses`` costs the hook path ~10 ms).

    Held as text: the ``Path`` properties build their ``Path`` on use, the ``*_str`` ones are for the hook
    path, which never imports ``pathlib``."""

    __slots__ = ("_data_dir", "_runtime_dir")
    _data_dir: str
    _runtime_dir: str

    def __init__(self, data_dir: str | os.PathLike[str], runtime_dir: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "_data_dir", os.fspath(data_dir))
        object.__setattr__(self, "_runtime_dir", os.fspath(runtime_dir))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"LidGuardPaths is immutable; cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LidGuardPaths):
            return NotImplemented
        return (self._data_dir, self._runtime_dir) == (other._data_dir, other._runtime_dir)

    def __hash__(self) -> int:
        return hash((self._data_dir, self._runtime_dir))

    def __repr__(self) -> str:
        return f"LidGuardPaths(data_dir={self._data_dir!r}, runtime_dir={self._runtime_dir!r})"

    @property
    def data_dir_str(self) -> str:
        return self._data_dir

    @property
    def settings_file_str(self) -> str:
        return os.path.join(self._data_dir, "settings.json")

    @property
    def lid_backup_file_str(self) -> str:
        return os.path.join(self._data_dir, "pending-lid-action-backup.json")

    @property
    def socket_file_str(self) -> str:
        return os.path.join(self._runtime_dir, SOCKET_NAME)

    @property
    def lock_file_str(self) -> str:
        return os.path.join(self._data_dir, "runtime.lock")

    @property
    def data_dir(self) -> Path:
        return _path(self._data_dir)

    @property
    def runtime_dir(self) -> Path:
        return _path(self._runtime_dir)

    @property
    def settings_file(self) -> Path:
        return _path(self.settings_file_str)

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
        return _path(self.lid_backup_file_str)

    @property
    def power_state_backup_file(self) -> Path:
        """macOS: the hibernatemode saved before a Hibernate request (restored by the next recovery)."""
        return self.data_dir / "pending-macos-power-state-backup.json"

    @property
    def brightness_backup_file(self) -> Path:
        """The display brightness saved before dimming it (runtime/dimming.py)."""
        return self.data_dir / "pending-brightness-backup.json"

    @property
    def pending_backup_files(self) -> tuple[Path, ...]:
        """Every file a crashed runtime or a hibernate may leave for the next CLI recovery step."""
        return (self.lid_backup_file, self.power_state_backup_file, self.brightness_backup_file)

    @property
    def socket_file(self) -> Path:
        return _path(self.socket_file_str)

    @property
    def lock_file(self) -> Path:
        return _path(self.lock_file_str)


DEMO_FOLDER_NAME = "LidGuard-demo"


def _folder_name() -> str:
    """``LidGuard``, or ``LidGuard-demo`` for the fake platform outside the tests: the demo's runtime,
    settings, logs and journal never share a file (or the socket) with real use, so a real agent's hook
    is never answered by a runtime that protects nothing, and the demo never changes the real settings."""
    from ..switches import demo_mode

    return DEMO_FOLDER_NAME if demo_mode() else "LidGuard"


def _data_dir() -> str:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    join = os.path.join
    name = _folder_name()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return join(local, name) if local else join(home, "AppData", "Local", name)
    if sys.platform == "darwin":
        return join(home, "Library", "Application Support", name)
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = xdg if xdg and os.path.isabs(xdg) else join(home, ".local", "share")
    return join(base, name)


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid else None


def runtime_dir_for(data_dir: str | os.PathLike[str]) -> Path:
    """The socket's folder, from the data folder's real path alone (see the module docstring): a HOME
    reached through a symlink (``/h`` -> ``/home/a-long-name``) must find the runtime's socket."""
    return _path(_runtime_dir_for(os.fspath(data_dir)))


def _runtime_dir_for(data_dir: str) -> str:
    uid = _uid()
    if uid is None:
        return os.path.join(data_dir, "run")
    real = os.path.realpath(data_dir)  # resolves the existing part; a missing tail stays as spelled
    nearby = os.path.join(real, "run")
    if _fits(nearby):
        return nearby
    import hashlib  # only for long data folders: OpenSSL costs the hook path ~5 ms

    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    home = os.path.realpath(os.environ.get("HOME") or os.path.expanduser("~"))
    in_home = os.path.join(home, SHORT_HOME_FOLDER, digest)
    if _fits(in_home) and _private_base(home, uid, strict=False):
        check_runtime_dir(os.path.dirname(in_home))  # a squatted or loose ~/.lidguard-run is refused, never used
        return in_home
    xdg = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if xdg and os.path.isabs(xdg):
        in_xdg = os.path.join(os.path.realpath(xdg), f"lidguard-{digest}")
        if _fits(in_xdg) and _private_base(os.path.realpath(xdg), uid, strict=True):
            return in_xdg
    raise RuntimeDirError(
        f"The data folder {data_dir} is too long for a Unix socket and there is no private folder short enough "
        f"for it: neither {os.path.join(home, SHORT_HOME_FOLDER)} (your home folder must be your own and not "
        "writable by others) nor XDG_RUNTIME_DIR (unset, too long, or not your own 0700 folder) can be used; "
        "use a shorter HOME/XDG_DATA_HOME or set XDG_RUNTIME_DIR to a private 0700 folder of your own.")


def _fits(folder: str) -> bool:
    return len(os.fsencode(os.path.join(folder, SOCKET_NAME))) <= MAX_SOCKET_PATH_BYTES


def _private_base(folder: str, uid: int, *, strict: bool) -> bool:
    """``folder`` is this user's own directory that no one else can write to (``strict``: mode 0700)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
        return False
    loose = stat.S_IRWXG | stat.S_IRWXO if strict else stat.S_IWGRP | stat.S_IWOTH
    return not info.st_mode & loose


def _check_data_dir(data_dir: str) -> None:
    uid = _uid()
    try:
        owner = os.stat(data_dir).st_uid  # the data folder may be a symlink the user made on purpose
    except OSError:
        return
    if uid is not None and owner != uid:
        raise RuntimeDirError(f"The data folder {data_dir} belongs to uid {owner}, not to you (uid {uid}); "
                              "run lidguard as that user or set HOME/XDG_DATA_HOME to a folder of your own.")


def check_runtime_dir(path: str | os.PathLike[str]) -> bool:
    """Raises ``RuntimeDirError`` unless ``path`` is missing or a private folder of this user.

    Returns True when the folder exists (and is safe), False when it does not exist yet.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise RuntimeDirError(f"Cannot inspect the runtime folder {path}: {error.strerror or error}.") from error
    if stat.S_ISLNK(info.st_mode):
        raise RuntimeDirError(f"The runtime folder {path} is a symbolic link; LidGuard never follows one. "
                              "Remove it and try again.")
    if not stat.S_ISDIR(info.st_mode):
        raise RuntimeDirError(f"The runtime folder {path} is not a folder. Remove it and try again.")
    uid = _uid()
    if uid is not None and info.st_uid != uid:
        raise RuntimeDirError(f"The runtime folder {path} belongs to uid {info.st_uid}, not to you (uid {uid}); "
                              "LidGuard only uses a folder of your own. Remove it and try again.")
    if uid is not None and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise RuntimeDirError(f"The runtime folder {path} is writable by other users "
                              f"(mode {stat.S_IMODE(info.st_mode):04o}); LidGuard only uses a private 0700 folder. "
                              f"Remove it (or run chmod 700 on it) and try again.")
    return True


def prepare_runtime_dir(path: Path) -> Path:
    """Creates the runtime folder 0700 (or checks the existing one) and tightens it to 0700."""
    if path.parent.name == SHORT_HOME_FOLDER:  # ~/.lidguard-run: created 0700, refused when not private
        try:
            os.mkdir(path.parent, 0o700)
        except FileExistsError:
            pass
        except OSError as error:
            raise RuntimeDirError(f"Cannot create the runtime folder {path.parent}: {error.strerror or error}.") \
                from error
        check_runtime_dir(path.parent)
    elif path.name == "run":  # <data>/run: the data folder may not exist yet
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.mkdir(path, 0o700)  # never follows a symlink at ``path``: it fails with EEXIST instead
    except FileExistsError:
        pass
    except OSError as error:
        raise RuntimeDirError(f"Cannot create the runtime folder {path}: {error.strerror or error}.") from error
    check_runtime_dir(path)
    if _uid() is not None and stat.S_IMODE(os.lstat(path).st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def checked_data_dir() -> str:
    """The user's data folder alone (raises ``RuntimeDirError`` when it is another user's): where a hook
    still logs why it cannot reach the runtime when the runtime folder is refused."""
    data_dir = _data_dir()
    _check_data_dir(data_dir)
    return data_dir


def resolve_paths() -> LidGuardPaths:
    """The user's paths; raises ``RuntimeDirError`` when an existing folder is not safe to use."""
    data_dir = _data_dir()
    runtime_dir = _runtime_dir_for(data_dir)
    _check_data_dir(data_dir)
    check_runtime_dir(runtime_dir)
    return LidGuardPaths(data_dir=data_dir, runtime_dir=runtime_dir)


def user_config_dir() -> Path:
    """The user's config folder for LidGuard's separate tools (``lidguard-notify``'s ``notify.json``):
    ``$XDG_CONFIG_HOME/LidGuard`` (when absolute) else ``~/.config/LidGuard`` on Linux,
    ``~/Library/Application Support/LidGuard`` on macOS, ``%APPDATA%\\LidGuard`` on Windows."""
    from pathlib import Path

    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    if sys.platform == "win32":
        roaming = os.environ.get("APPDATA")
        return Path(roaming) / "LidGuard" if roaming else home / "AppData" / "Roaming" / "LidGuard"
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "LidGuard"
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"
    return base / "LidGuard"
