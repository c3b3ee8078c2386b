"""``lidguard tray``'s one-line errors: no display, the extra not installed, a display nobody serves."""

from __future__ import annotations

import os
import subprocess
import sys


def _tray(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard", "tray", *args], env=env, text=True,
                          capture_output=True, timeout=60)


def _one_line(result: subprocess.CompletedProcess[str], text: str) -> None:
    assert result.returncode == 1, result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("lidguard: "), result.stderr
    assert text in result.stderr, result.stderr


def test_no_display():
    env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    _one_line(_tray(env), "no graphical display (neither DISPLAY nor WAYLAND_DISPLAY is set)")


def _without(tmp_path, module: str) -> str:
    blocker = tmp_path / module
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(f"raise ImportError(\"No module named '{module}'\", name='{module}')\n")
    return os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])


def test_the_extra_is_not_installed(tmp_path):
    env = {**os.environ, "DISPLAY": ":0", "PYTHONPATH": _without(tmp_path, "PIL")}
    _one_line(_tray(env), "lidguard tray needs the optional 'tray' packages (missing: PIL); install them with: ")
    for backend, module in (("xembed", "Xlib"), ("sni", "jeepney"), ("pystray", "pystray")):
        env = {**os.environ, "DISPLAY": ":0", "LIDGUARD_TRAY_BACKEND": backend,
               "PYTHONPATH": _without(tmp_path / backend, module)}
        _one_line(_tray(env), f"(missing: {module}); install them with: ")


def test_a_display_or_bus_nobody_serves(tmp_path):
    env = {**os.environ, "DISPLAY": f"unix:{tmp_path}/nothing:0", "LIDGUARD_TRAY_BACKEND": "xembed"}
    _one_line(_tray(env), "Cannot show the tray: cannot open the display")
    env = {**os.environ, "DISPLAY": ":0", "LIDGUARD_TRAY_BACKEND": "sni",
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"}
    _one_line(_tray(env), "Cannot show the tray: cannot open the session D-Bus")
    _one_line(_tray({**env, "LIDGUARD_TRAY_BACKEND": "gtk4"}), "LIDGUARD_TRAY_BACKEND must be sni, xembed or pystray")


def test_options_that_do_not_go_together(isolated_home):
    env = {**os.environ, "HOME": str(isolated_home)}
    _one_line(_tray(env, "--install-autostart", "--remove-autostart"), "Use one of")
    _one_line(_tray(env, "--os", "macos"), "--os goes with")
