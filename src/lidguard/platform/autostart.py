"""Starting ``lidguard tray`` at login (``lidguard tray --install-autostart`` / ``--remove-autostart``).

One file per OS, written atomically (0600: only the user's own session reads it):

* Linux (XDG autostart): ``$XDG_CONFIG_HOME/autostart/lidguard-tray.desktop`` (``~/.config/...``).
* macOS: a launchd agent ``~/Library/LaunchAgents/io.lidguard.tray.plist`` (``RunAtLoad``, loaded by
  launchd at the next login; no ``KeepAlive``: Quit means quit).
* Windows: ``LidGuard Tray.cmd`` in the Startup folder
  (``%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup``), started with ``pythonw`` when the
  command is a ``python.exe`` so no console window stays.

Nothing here runs a program. In test mode a HOME that is the account's real home folder is refused,
so a test can never write into the real login items.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AUTOSTART_OS_NAMES", "LAUNCHD_TRAY_LABEL", "AutostartError", "AutostartFile", "autostart_file",
           "desktop_exec", "install_autostart", "remove_autostart"]

AUTOSTART_OS_NAMES = ("linux", "macos", "windows")
LAUNCHD_TRAY_LABEL = "io.lidguard.tray"
DESKTOP_FILE_NAME = "lidguard-tray.desktop"
WINDOWS_FILE_NAME = "LidGuard Tray.cmd"
_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


class AutostartError(Exception):
    """One readable sentence."""


@dataclass(frozen=True)
class AutostartFile:
    path: Path
    data: bytes
    description: str


def _refuse_control(words: list[str]) -> None:
    for word in words:
        if not word or any(ord(character) < 32 or ord(character) == 127 for character in word):
            raise AutostartError(f"Cannot write an autostart entry for the command word {word!r}.")


def desktop_exec(argv: list[str]) -> str:
    """The ``Exec=`` value (Desktop Entry Specification): reserved characters quoted, ``%`` doubled,
    then the string value's own backslash escape."""
    _refuse_control(argv)
    words = []
    for word in argv:
        word = word.replace("%", "%%")
        if any(character in _DESKTOP_RESERVED for character in word):
            inner = "".join("\\" + character if character in '"`$\\' else character for character in word)
            word = f'"{inner}"'
        words.append(word)
    return " ".join(words).replace("\\", "\\\\")


def _windows_argv(argv: list[str]) -> list[str]:
    from pathlib import PureWindowsPath

    first = PureWindowsPath(argv[0])
    if first.name.lower() == "python.exe":
        return [str(first.with_name("pythonw.exe")), *argv[1:]]
    return argv


def autostart_file(os_name: str, *, argv: list[str], home: Path, config_home: Path | None = None,
                   appdata: Path | None = None) -> AutostartFile:
    """What ``--install-autostart`` writes for ``os_name`` (``argv`` starts the lidguard CLI)."""
    command = [*argv, "tray"]
    _refuse_control(command)
    if os_name == "linux":
        folder = (config_home or home / ".config") / "autostart"
        text = ("[Desktop Entry]\nType=Application\nName=LidGuard tray\n"
                "Comment=Shows whether LidGuard keeps this computer awake for AI coding agents\n"
                f"Exec={desktop_exec(command)}\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
                "NoDisplay=true\n")
        return AutostartFile(folder / DESKTOP_FILE_NAME, text.encode(), "XDG autostart entry")
    if os_name == "macos":
        agent = {"Label": LAUNCHD_TRAY_LABEL, "ProgramArguments": command, "RunAtLoad": True,
                 "ProcessType": "Interactive", "LimitLoadToSessionType": "Aqua"}
        path = home / "Library" / "LaunchAgents" / f"{LAUNCHD_TRAY_LABEL}.plist"
        return AutostartFile(path, plistlib.dumps(agent, sort_keys=True), "launchd agent")
    if os_name == "windows":
        roaming = appdata or home / "AppData" / "Roaming"
        folder = roaming / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
        line = subprocess.list2cmdline(_windows_argv(command)).replace("%", "%%")
        text = f'@echo off\r\nstart "" {line}\r\n'
        return AutostartFile(folder / WINDOWS_FILE_NAME, text.encode("utf-8"), "Startup folder entry")
    raise AutostartError(f"Autostart is not known for {os_name!r} (one of {', '.join(AUTOSTART_OS_NAMES)}).")


def _refuse_real_home_in_tests(home: Path) -> None:
    from ..switches import in_test_mode

    if not in_test_mode():
        return
    try:
        import pwd  # POSIX only; on Windows the test suite never runs the real backend

        real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, AttributeError):
        return
    try:
        same = home.resolve() == real.resolve()
    except OSError:
        same = False
    if same:
        raise AutostartError(f"Test mode: refusing to write autostart entries into the real home folder {home}.")


def install_autostart(entry: AutostartFile, home: Path) -> None:
    from ..fileio import write_atomic

    _refuse_real_home_in_tests(home)
    try:
        entry.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(entry.path, entry.data)
    except OSError as error:
        raise AutostartError(f"Cannot write the {entry.description} {entry.path}: "
                             f"{error.strerror or error}.") from error


def remove_autostart(entry: AutostartFile, home: Path) -> bool:
    """True when a file was removed; a folder or anything that is not a regular file is left alone."""
    _refuse_real_home_in_tests(home)
    try:
        if entry.path.is_symlink() or entry.path.is_file():
            entry.path.unlink()
            return True
    except OSError as error:
        raise AutostartError(f"Cannot remove the {entry.description} {entry.path}: "
                             f"{error.strerror or error}.") from error
    if entry.path.exists():
        raise AutostartError(f"{entry.path} is not a file; left as it is.")
    return False
