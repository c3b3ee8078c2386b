"""``lidguard tray``: the indicator process (pystray + Pillow, extra ``lidguard[tray]``).

The main thread runs pystray's loop; one thread reads ``updates.status_updates`` (the runtime's
stream) and redraws; while a suspend is pending a second thread refreshes the countdown in the
tooltip every second. Menu clicks run ``actions.TrayActions`` off the toolkit's thread. Quit, SIGTERM
and SIGINT stop the loop; the process then exits 0.

pystray picks its backend: Windows (Shell_NotifyIcon), macOS (NSStatusItem), Linux AppIndicator
(StatusNotifierItem over D-Bus) or GTK when PyGObject is importable, else the Xlib XEmbed backend,
which has no menu: there a left click runs the default entry (pause 30 min, or resume when paused).
``PYSTRAY_BACKEND`` picks one by name.
"""

from __future__ import annotations

import signal
import sys
import threading
from datetime import datetime, timezone
from typing import Any

from ..platform.paths import LidGuardPaths
from .actions import TrayActions
from .model import MenuEntry, TrayState, TrayView, menu_entries, tray_view
from .updates import status_updates

__all__ = ["TrayApp", "TrayUnavailable", "load_toolkit"]

EXTRA_MISSING = "the tray needs the tray extra: pip install 'lidguard[tray]' ({detail})"


class TrayUnavailable(Exception):
    """One readable sentence: the extra is missing or there is no display."""


def load_toolkit() -> Any:
    """pystray (with Pillow), or ``TrayUnavailable``. Importing pystray opens the display on Linux."""
    try:
        import PIL.Image  # noqa: F401
        import pystray
    except ImportError as error:
        raise TrayUnavailable(EXTRA_MISSING.format(detail=f"cannot import {error.name or error}")) from error
    except Exception as error:  # Xlib's display errors: a bad or unreachable DISPLAY
        raise TrayUnavailable(f"cannot open the display: {type(error).__name__}: {error}".rstrip(": ")) from error
    return pystray


class TrayApp:
    def __init__(self, paths: LidGuardPaths, pystray: Any, *, panel: str = "dark") -> None:
        self.paths = paths
        self.pystray = pystray
        self.panel = panel
        self.actions = TrayActions(paths)
        self.stop_event = threading.Event()
        self.status: dict[str, Any] | None = None
        self.view = tray_view(None, now=datetime.now(timezone.utc))
        self._lock = threading.Lock()
        self._shown: tuple[TrayState, str] | None = None
        self.icon = pystray.Icon("lidguard", self._image(self.view.state), self.view.tooltip,
                                 menu=self._menu(self.view))
        _enable_xembed_clicks(self.icon)

    # -- drawing -----------------------------------------------------------------------------------
    def _image(self, state: TrayState) -> Any:
        from .icons import draw_icon

        return draw_icon(state, self.panel, 64)

    def _menu(self, view: TrayView) -> Any:
        pystray = self.pystray
        items = []
        for entry in menu_entries(view):
            if entry.key == "separator":
                items.append(pystray.Menu.SEPARATOR)
                continue
            items.append(pystray.MenuItem(entry.label, self._handler(entry), enabled=entry.enabled,
                                          default=entry.default,
                                          checked=None if entry.checked is None else _const(entry.checked)))
        return pystray.Menu(*items)

    def _handler(self, entry: MenuEntry) -> Any:
        key = entry.key

        def run(icon: Any = None, item: Any = None) -> None:
            if key == "quit":
                self.stop()
                return
            if key == "session":
                return
            threading.Thread(target=self._run_action, args=(key,), name=f"tray-{key}", daemon=True).start()

        return run

    def _run_action(self, key: str) -> None:
        message = self.actions.run(key, self.status)
        notify = getattr(self.icon, "notify", None)
        if message and notify is not None and getattr(self.icon, "HAS_NOTIFICATION", False):
            try:
                notify(message, "LidGuard")
            except Exception:  # noqa: S110 - a notification is a nicety
                pass

    def show(self, status: dict[str, Any] | None) -> None:
        """Redraws for a new status (None: runtime unreachable); cheap when nothing visible changed."""
        from ..platform.locking import held_by_another_process
        from ..settings import load_settings_report

        report = load_settings_report(self.paths.settings_file)
        running = status is None and held_by_another_process(self.paths.lock_file) is True
        with self._lock:
            self.status = status
            view = tray_view(status, now=datetime.now(timezone.utc), settings_error=report.error,
                             runtime_running=running, stored_settings=report.settings.to_file_json())
            self.view = view
            shown = (view.state, view.tooltip)
            last = self._shown or (None, "")
            try:
                if shown[0] != last[0]:
                    self.icon.icon = self._image(view.state)
                if shown[1] != last[1]:
                    self.icon.title = view.tooltip
                self.icon.menu = self._menu(view)
                if getattr(self.icon, "HAS_MENU", False):
                    self.icon.update_menu()
            except Exception as error:  # the toolkit failed this once: redrawn on the next tick
                self._shown = None
                sys.stderr.write(f"lidguard tray: warning: redraw failed: {type(error).__name__}: {error}\n")
                return
            self._shown = shown

    # -- threads -----------------------------------------------------------------------------------
    def _follow(self) -> None:
        try:
            for status in status_updates(self.paths, self.stop_event):
                if self.stop_event.is_set():
                    break
                self.show(status)
        except Exception as error:  # the stream failed for good: show it, keep the menu usable
            sys.stderr.write(f"lidguard tray: warning: status updates ended: {type(error).__name__}: {error}\n")
            if not self.stop_event.is_set():
                self.show(None)

    def _countdown(self) -> None:
        while not self.stop_event.wait(1.0):
            if self.view.state is TrayState.SUSPEND_PENDING or self._shown is None:
                self.show(self.status)

    def _setup(self, icon: Any) -> None:
        icon.visible = True
        threading.Thread(target=self._follow, name="tray-status", daemon=True).start()
        threading.Thread(target=self._countdown, name="tray-countdown", daemon=True).start()

    def stop(self) -> None:
        if self.stop_event.is_set():
            return
        self.stop_event.set()
        threading.Thread(target=self.icon.stop, name="tray-stop", daemon=True).start()

    def run(self) -> int:
        def on_signal(signum: int, frame: Any) -> None:
            self.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        self.icon.run(setup=self._setup)
        return 0


def _enable_xembed_clicks(icon: Any) -> None:
    """pystray 0.19's Xlib backend handles ButtonPress but never asks X for it (its window selects
    only Exposure and StructureNotify), so a click would do nothing: select it too."""
    if not type(icon).__module__.endswith("._xorg"):
        return
    import Xlib.X

    window, display = getattr(icon, "_window", None), getattr(icon, "_display", None)
    if window is None or display is None:
        return
    window.change_attributes(event_mask=Xlib.X.ExposureMask | Xlib.X.StructureNotifyMask | Xlib.X.ButtonPressMask)
    display.flush()


def _const(value: bool) -> Any:
    return lambda item: value
