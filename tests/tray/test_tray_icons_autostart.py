"""The drawn icons (Pillow, per state and panel) and the autostart entries per OS (tmp HOME)."""

from __future__ import annotations

import os
import plistlib
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.platform.autostart import (
    AutostartError,
    autostart_file,
    desktop_exec,
    install_autostart,
    remove_autostart,
)
from lidguard.tray.model import TrayState


def _near(pixel, colour, tolerance=24):
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


@pytest.mark.parametrize("panel", ["light", "dark"])
def test_each_state_draws_its_own_colour_and_mark(panel):
    from lidguard.tray.icons import STATE_COLOURS, draw_icon

    images = {state: draw_icon(state, panel, 32) for state in TrayState}
    for state, image in images.items():
        assert image.size == (32, 32) and image.mode == "RGBA"
        pixels = [image.getpixel((x, y)) for y in range(32) for x in range(32)]
        own = sum(1 for pixel in pixels if pixel[3] > 200 and _near(pixel, STATE_COLOURS[state]))
        assert own >= 20, (state, own)
        for other, colour in STATE_COLOURS.items():
            if other is not state:
                assert sum(1 for pixel in pixels if pixel[3] > 200 and _near(pixel, colour, 12)) < own / 4
        assert pixels[0][3] == 0  # the corners stay transparent for any panel colour
    assert len({image.tobytes() for image in images.values()}) == len(TrayState)


def test_the_outline_follows_the_panel():
    from lidguard.tray.icons import draw_icon

    light = draw_icon(TrayState.IDLE, "light", 64)
    dark = draw_icon(TrayState.IDLE, "dark", 64)
    ring = (32, 5)  # on the outer ring
    assert sum(light.getpixel(ring)[:3]) < 200 and sum(dark.getpixel(ring)[:3]) > 500
    with pytest.raises(ValueError, match="light or dark"):
        draw_icon(TrayState.IDLE, "purple")


def test_linux_desktop_entry_quotes_the_command(tmp_path):
    entry = autostart_file("linux", argv=["/opt/my apps/bin/lidguard"], home=tmp_path,
                           config_home=tmp_path / "cfg")
    assert entry.path == tmp_path / "cfg" / "autostart" / "lidguard-tray.desktop"
    text = entry.data.decode()
    assert '\nExec="/opt/my apps/bin/lidguard" tray\n' in text
    assert "\nType=Application\n" in text and "\nTerminal=false\n" in text
    assert desktop_exec(["/a$b/100%", "x"]) == '"/a\\\\$b/100%%" x'
    with pytest.raises(AutostartError):
        desktop_exec(["/bin/lidguard\n[Desktop Entry]"])


def test_macos_agent_and_windows_startup_entry(tmp_path):
    agent = autostart_file("macos", argv=["/usr/local/bin/lidguard"], home=tmp_path)
    assert agent.path == tmp_path / "Library" / "LaunchAgents" / "io.lidguard.tray.plist"
    plist = plistlib.loads(agent.data)
    assert plist["ProgramArguments"] == ["/usr/local/bin/lidguard", "tray"] and plist["RunAtLoad"] is True
    assert "KeepAlive" not in plist
    windows = autostart_file("windows", argv=["C:\\Python 3\\python.exe", "-m", "lidguard"], home=tmp_path,
                             appdata=tmp_path / "Roaming")
    assert windows.path == (tmp_path / "Roaming" / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
                            / "LidGuard Tray.cmd")
    assert windows.data == b'@echo off\r\nstart "" "C:\\Python 3\\pythonw.exe" -m lidguard tray\r\n'
    with pytest.raises(AutostartError, match="not known"):
        autostart_file("plan9", argv=["x"], home=tmp_path)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run([sys.executable, "-m", "lidguard", "tray", *args], env=env, text=True,
                          capture_output=True, timeout=60)


def test_install_and_remove_through_the_cli(isolated_home):
    installed = _cli(isolated_home, "--install-autostart")
    assert installed.returncode == 0, installed.stderr
    path = isolated_home / ".config" / "autostart" / "lidguard-tray.desktop"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "Exec=" in path.read_text()
    again = _cli(isolated_home, "--install-autostart")  # idempotent: the same file again
    assert again.returncode == 0 and len(list(path.parent.iterdir())) == 1
    for os_name, relative in (("macos", "Library/LaunchAgents/io.lidguard.tray.plist"),
                              ("windows", "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/"
                                          "LidGuard Tray.cmd")):
        result = _cli(isolated_home, "--install-autostart", "--os", os_name)
        assert result.returncode == 0, result.stderr
        assert (isolated_home / relative).is_file()
    removed = _cli(isolated_home, "--remove-autostart")
    assert removed.returncode == 0 and not path.exists() and "Removed" in removed.stdout
    nothing = _cli(isolated_home, "--remove-autostart")
    assert nothing.returncode == 0 and "No XDG autostart entry to remove" in nothing.stdout


def test_bad_places_give_one_line(isolated_home):
    folder = isolated_home / ".config" / "autostart" / "lidguard-tray.desktop"
    folder.mkdir(parents=True)
    for args in (("--install-autostart",), ("--remove-autostart",)):
        result = _cli(isolated_home, *args)
        assert result.returncode == 1 and result.stderr.count("\n") == 1 and result.stderr.startswith("lidguard: ")
    folder.rmdir()
    folder.parent.rmdir()
    folder.parent.write_text("a file where the folder goes")
    result = _cli(isolated_home, "--install-autostart")
    assert result.returncode == 1 and "Cannot write the XDG autostart entry" in result.stderr
    assert result.stderr.count("\n") == 1


def test_test_mode_refuses_the_real_home(tmp_path, monkeypatch):
    import pwd

    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    entry = autostart_file("linux", argv=["/bin/lidguard"], home=real)
    before = entry.path.stat().st_mtime_ns if entry.path.exists() else None
    with pytest.raises(AutostartError, match="real home"):
        install_autostart(entry, real)
    with pytest.raises(AutostartError, match="real home"):
        remove_autostart(entry, real)
    assert (entry.path.stat().st_mtime_ns if entry.path.exists() else None) == before  # untouched


def test_state_colours_are_far_apart():
    """A screen pixel within 40 per channel of one state's colour is never within 40 of another's."""
    from itertools import combinations

    from lidguard.tray.icons import STATE_COLOURS

    for (one, first), (other, second) in combinations(STATE_COLOURS.items(), 2):
        assert max(abs(a - b) for a, b in zip(first, second, strict=True)) > 80, (one, other)
