"""``lidguard tray`` as a real process on Xvfb, docked in a real XEmbed tray (trayer), against the
fake-platform runtime: the icon's pixels and title follow 0 sessions, 2 sessions, paused and a
pending suspend; "Pause for 30 min" clicked in the menu (screenshot checked) really pauses the
runtime and a left click (the default entry, Resume) resumes it; SIGTERM ends the tray with 0.
Skips only when Xvfb or trayer is absent, never under CI=true (ci/install-test-deps.sh installs them)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lidguard.tray.icons import STATE_COLOURS
from lidguard.tray.model import TrayState

XVFB = shutil.which("Xvfb")
TRAYER = shutil.which("trayer")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
if not (XVFB and TRAYER) and not IN_CI:
    pytest.skip("the tray test needs Xvfb and trayer (apt-get install xvfb trayer; bash ci/install-test-deps.sh)",
                allow_module_level=True)

pytestmark = pytest.mark.timeout(240)


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    value = predicate()
    assert value, f"timed out waiting for {what}"
    return value


@pytest.fixture
def display(tmp_path):
    assert XVFB and TRAYER, "Xvfb and trayer are not installed (CI=true: the tray test must run)"
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen([XVFB, "-displayfd", str(write_fd), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    processes = [xvfb]
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()
        assert number.isdigit(), "Xvfb did not report its display"
        name = f":{number}"
        from Xlib import display as xdisplay

        connection = xdisplay.Display(name)
        selection = connection.intern_atom("_NET_SYSTEM_TRAY_S0")

        def start_panel():
            panel = subprocess.Popen([TRAYER, "--edge", "top", "--align", "left", "--widthtype", "pixel", "--width",
                                      "120", "--heighttype", "pixel", "--height", "32", "--SetDockType", "true"],
                                     env={**os.environ, "DISPLAY": name}, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            processes.append(panel)
            _wait(lambda: connection.get_selection_owner(selection) != 0, 30, "trayer to own the tray selection")

        def restart_panel():
            old = processes.pop()
            old.terminate()
            old.wait(10)
            _wait(lambda: connection.get_selection_owner(selection) == 0, 30, "the old tray to let go")
            start_panel()

        start_panel()
        yield name, connection, restart_panel
        connection.close()
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _icon_window(connection, instance="lidguardSystemTrayIcon"):
    """The tray icon's window (WM_CLASS lidguardSystemTrayIcon), docked (mapped) in trayer; or the menu."""
    from Xlib import X

    stack = [connection.screen().root]
    while stack:
        window = stack.pop()
        try:
            wm_class = window.get_wm_class()
            if wm_class and wm_class[0] == instance:
                attributes = window.get_attributes()
                geometry = window.get_geometry()
                if attributes.map_state == X.IsViewable and geometry.width > 4:
                    return window
            stack.extend(window.query_tree().children)
        except Exception:  # a window that went away while walking
            continue
    return None


def _docked(connection) -> bool:
    window = _icon_window(connection)
    return window is not None and window.query_tree().parent.id != connection.screen().root.id


def _shot(connection, window, save: Path):
    from PIL import Image
    from Xlib import X

    root = connection.screen().root
    geometry = window.get_geometry()
    origin = window.translate_coords(root, 0, 0)
    x, y = -origin.x, -origin.y
    raw = root.get_image(x, y, geometry.width, geometry.height, X.ZPixmap, 0xFFFFFFFF)
    image = Image.frombytes("RGB", (geometry.width, geometry.height), raw.data, "raw", "BGRX")
    image.save(save)
    return image, (x + geometry.width // 2, y + geometry.height // 2)


def _share(image, colour, tolerance=40) -> float:
    pixels = [image.getpixel((x, y)) for y in range(image.height) for x in range(image.width)]
    return sum(1 for pixel in pixels if all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=True))) \
        / len(pixels)


def _shows(connection, state: TrayState, title_part: str, shots: Path, name: str):
    """Waits until the icon shows ``state``'s colour (pixels on screen) and its title has ``title_part``."""
    seen: dict[str, object] = {}

    def check():
        window = _icon_window(connection)
        if window is None:
            return None
        image, centre = _shot(connection, window, shots / f"{name}.png")
        title = window.get_wm_name() or ""
        seen.update(title=title, shares={s.value: round(_share(image, c), 3) for s, c in STATE_COLOURS.items()})
        own = _share(image, STATE_COLOURS[state])
        others = max(_share(image, colour) for other, colour in STATE_COLOURS.items() if other is not state)
        return centre if own > 0.03 and own > 3 * others and title_part in title else None

    try:
        return _wait(check, 60, f"the tray to show {state.value}")
    except AssertionError as error:
        raise AssertionError(f"{error}: last seen {seen}") from None


def _click(connection, at, button=1) -> None:
    from Xlib import X
    from Xlib.ext import xtest

    connection.screen().root.warp_pointer(*at)
    connection.sync()
    xtest.fake_input(connection, X.ButtonPress, button)
    xtest.fake_input(connection, X.ButtonRelease, button)
    connection.sync()


def _menu_pick(connection, icon_centre, key: str, shots: Path) -> None:
    """Right-clicks the icon, checks the menu's screenshot, clicks the entry ``key``."""
    from lidguard.tray.xembed import MENU_CLASS, MENU_ROWS_PROPERTY

    _click(connection, icon_centre, button=3)
    menu = _wait(lambda: _icon_window(connection, MENU_CLASS), 30, "the menu window")
    rows = {}
    text = menu.get_full_property(connection.intern_atom(MENU_ROWS_PROPERTY), 0).value.decode()
    for line in text.splitlines():
        entry, top, bottom = line.split()
        rows.setdefault(entry, (int(top), int(bottom)))
    assert {"pause-30m", "pause-2h", "resume", "sleep-now", "change-lid-action", "suspend-mode", "open-status",
            "quit"} <= set(rows)
    top, bottom = rows[key]
    seen: dict[str, object] = {}

    def drawn() -> bool:
        # Pixels: a light menu with dark text in the row (the text is drawn, not just an empty window).
        # The window is mapped before the tray has painted it (its Expose comes after): shoot again until
        # it has; a loaded CI run caught a blank menu (all light, no text) once.
        image, _ = _shot(connection, menu, shots / f"menu-{key}.png")
        row = image.crop((0, top, image.width, bottom))
        dark = sum(1 for y in range(row.height) for x in range(row.width) if sum(row.getpixel((x, y))) < 200)
        seen.update(light=round(_share(image, (246, 246, 246), 10), 3), dark=dark)
        return _share(image, (246, 246, 246), 10) > 0.5 and dark > 20

    try:
        _wait(drawn, 30, f"the menu to be drawn with a dark text in the row {key}")
    except AssertionError as error:
        raise AssertionError(f"{error}: last seen {seen}") from None
    origin = menu.translate_coords(connection.screen().root, 0, 0)
    _click(connection, (-origin.x + 30, -origin.y + (top + bottom) // 2))
    _wait(lambda: _icon_window(connection, MENU_CLASS) is None, 30, "the menu to close")


def test_tray_follows_the_runtime_and_pauses_it(lidguard, display, tmp_path):
    backend = "xembed"
    name, connection, restart_panel = display
    shots = Path(os.environ.get("LIDGUARD_TRAY_SCREENSHOT_DIR") or tmp_path) / backend
    shots.mkdir(parents=True, exist_ok=True)
    lidguard.run("settings", "--change-lid-action", "false", "--post-stop-suspend-delay-seconds", "600", check=True)
    env = {**lidguard.env, "DISPLAY": name, "LIDGUARD_TRAY_BACKEND": backend}
    tray = subprocess.Popen([sys.executable, "-m", "lidguard", "tray"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        # 0 sessions, no runtime yet: idle.
        _shows(connection, TrayState.IDLE, "idle", shots, "0-idle")
        for session in ("one", "two"):
            lidguard.run("start", "--provider", "claude", "--session", session, check=True)
        centre = _shows(connection, TrayState.PROTECTING, "protecting 2 sessions", shots, "1-two-sessions")
        _menu_pick(connection, centre, "pause-30m", shots)  # from the menu: the runtime really pauses
        _wait(lambda: lidguard.json("status").get("paused"), 30, "the runtime to be paused")
        centre = _shows(connection, TrayState.PAUSED, "paused until", shots, "2-paused")
        _click(connection, centre)  # paused, the default entry is Resume
        _wait(lambda: lidguard.json("status").get("paused") is None, 30, "the runtime to resume")
        _shows(connection, TrayState.PROTECTING, "protecting 2 sessions", shots, "3-resumed")
        lidguard.set_machine(lid="closed")
        for session in ("one", "two"):
            lidguard.run("stop", "--provider", "claude", "--session", session, check=True)
        _shows(connection, TrayState.SUSPEND_PENDING, "Sleep in ", shots, "4-pending")
        # The panel restarts: the icon docks with the new tray (MANAGER) and is drawn again.
        restart_panel()
        _shows(connection, TrayState.SUSPEND_PENDING, "Sleep in ", shots, "5-new-panel")
        assert _docked(connection)
        # The runtime exits (as it does 10 minutes after the last session): idle, not the error (issue 33.8).
        lidguard.run("stop-runtime", "--force", check=True)
        _shows(connection, TrayState.IDLE, "the runtime is not running", shots, "6-not-running")
        assert tray.poll() is None
        tray.send_signal(signal.SIGTERM)
        assert tray.wait(30) == 0, tray.stderr.read() if tray.stderr else ""
    except AssertionError as error:
        tray.send_signal(signal.SIGUSR1)  # the tray's threads, for the report
        time.sleep(1)
        tray.kill()
        _, stderr = tray.communicate(timeout=30)
        raise AssertionError(f"{error}\ntray stderr: {stderr[-4000:]}") from None
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait()


def test_the_display_going_away_ends_the_tray_with_one_line(lidguard, tmp_path):
    """Xvfb ends under a running tray: one line on stderr, exit 1, no traceback."""
    assert XVFB and TRAYER, "Xvfb and trayer are not installed (CI=true: the tray test must run)"
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen([XVFB, "-displayfd", str(write_fd), "-screen", "0", "320x240x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        name = f":{pipe.readline().strip()}"
    env = {**lidguard.env, "DISPLAY": name, "LIDGUARD_TRAY_BACKEND": "xembed"}
    tray = subprocess.Popen([sys.executable, "-m", "lidguard", "tray"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        from Xlib import display as xdisplay

        connection = xdisplay.Display(name)
        _wait(lambda: any(w.get_wm_class() == ("lidguardSystemTrayIcon", "lidguard")
                          for w in connection.screen().root.query_tree().children), 30, "the icon window")
        connection.close()
        xvfb.terminate()
        xvfb.wait(10)
        _, stderr = tray.communicate(timeout=60)
        assert tray.returncode == 1, stderr
        assert stderr.count("\n") == 1 and stderr.startswith("lidguard: Tray stopped: "), stderr
    finally:
        if tray.poll() is None:
            tray.kill()
            tray.wait()
        if xvfb.poll() is None:
            xvfb.kill()
            xvfb.wait()
