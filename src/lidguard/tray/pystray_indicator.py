"""The indicator through pystray: Windows (Shell_NotifyIcon) and macOS (NSStatusItem). On Linux only
when asked for (``LIDGUARD_TRAY_BACKEND=pystray``: its AppIndicator/GTK backends with PyGObject);
its Xlib backend is not used there (no menu, clicks never selected, and changes from other threads
left unapplied under load: ``tray/xembed.py`` replaces it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .model import MenuEntry

__all__ = ["PystrayIndicator"]


class PystrayIndicator:
    def __init__(self, pystray: Any, on_action: Callable[[str], None], *, image: Any, title: str,
                 entries: tuple[MenuEntry, ...]) -> None:
        self._pystray = pystray
        self._on_action = on_action
        self.icon = pystray.Icon("lidguard", image, title, menu=self._menu(entries))

    @property
    def backend(self) -> str:
        return type(self.icon).__module__.rsplit("._", 1)[-1]

    def _menu(self, entries: tuple[MenuEntry, ...]) -> Any:
        pystray = self._pystray
        items = []
        for entry in entries:
            if entry.key == "separator":
                items.append(pystray.Menu.SEPARATOR)
                continue
            items.append(pystray.MenuItem(entry.label, _handler(self._on_action, entry.key), enabled=entry.enabled,
                                          default=entry.default,
                                          checked=None if entry.checked is None else _const(entry.checked)))
        return pystray.Menu(*items)

    def update(self, *, title: str, images: list[Any] | None, entries: tuple[MenuEntry, ...]) -> None:
        if images is not None:
            self.icon.icon = images[-1]
        self.icon.title = title
        self.icon.menu = self._menu(entries)
        if getattr(self.icon, "HAS_MENU", False):
            self.icon.update_menu()

    def notify(self, message: str) -> None:
        if getattr(self.icon, "HAS_NOTIFICATION", False):
            self.icon.notify(message, "LidGuard")

    def run(self, setup: Callable[[], None]) -> None:
        def start(icon: Any) -> None:
            icon.visible = True
            setup()

        self.icon.run(setup=start)

    def stop(self) -> None:
        self.icon.stop()


def _handler(on_action: Callable[[str], None], key: str) -> Any:
    def run(icon: Any = None, item: Any = None) -> None:
        on_action(key)

    return run


def _const(value: bool) -> Any:
    return lambda item: value
