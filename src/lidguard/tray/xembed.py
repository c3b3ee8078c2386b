"""The indicator for an X11 tray (XEmbed system tray protocol: trayer, stalonetray, tint2, XFCE's and
MATE's panels), with python-xlib and every X call on one thread.

Why not pystray's Xlib backend: it has no menu, its 0.19 window never selects ButtonPress (a click
does nothing, pystray issue 151), and it hands every change to its event thread through
python-xlib's threaded mode, which under load left changes unapplied (tests/tray saw a title left
behind and a SIGTERM that never ended the tray). Here other threads only queue a command and write a
byte to a pipe; the loop ``select``s on the X socket and that pipe.

The icon window docks with the tray owner of ``_NET_SYSTEM_TRAY_S<screen>`` (again when a new tray
announces itself with MANAGER); it is drawn over its parent's background (ParentRelative), so the
icon's transparency shows the panel. Left click: the default entry; right click: the menu, an
override-redirect window drawn with Pillow (the pointer is grabbed: a click outside closes it).
"""

from __future__ import annotations

import os
import queue
import select
from collections.abc import Callable
from typing import Any

from .model import MenuEntry

__all__ = ["MENU_CLASS", "MENU_ROWS_PROPERTY", "XembedIndicator"]

MENU_CLASS = "lidguardTrayMenu"
MENU_ROWS_PROPERTY = "_LIDGUARD_MENU_ROWS"  # "key top bottom" lines: where each entry is (tests read it)
ICON_CLASS = "lidguardSystemTrayIcon"
ROW_HEIGHT = 22
SEPARATOR_HEIGHT = 7
MENU_PADDING = 10
_REQUEST_DOCK = 0


class XembedIndicator:
    def __init__(self, on_action: Callable[[str], None]) -> None:
        import Xlib.display
        import Xlib.X

        self._X = Xlib.X
        self._on_action = on_action
        self._display = Xlib.display.Display()
        self._screen = self._display.screen()
        self._root = self._screen.root
        atom = self._display.intern_atom
        self._tray_atom = atom(f"_NET_SYSTEM_TRAY_S{self._display.get_default_screen()}")
        self._opcode = atom("_NET_SYSTEM_TRAY_OPCODE")
        self._manager = atom("MANAGER")
        self._xembed_info = atom("_XEMBED_INFO")
        self._net_wm_name = atom("_NET_WM_NAME")
        self._utf8 = atom("UTF8_STRING")
        self._rows_atom = atom(MENU_ROWS_PROPERTY)
        self._commands: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._wake_read, self._wake_write = os.pipe()
        self._image: Any = None
        self._title = "LidGuard"
        self._entries: tuple[MenuEntry, ...] = ()
        self._menu: Any = None
        self._menu_image: Any = None
        self._menu_rows: list[tuple[int, int, MenuEntry]] = []
        self._running = True
        self._root.change_attributes(event_mask=Xlib.X.StructureNotifyMask)
        self._window = self._root.create_window(
            0, 0, 24, 24, 0, self._screen.root_depth, Xlib.X.InputOutput, Xlib.X.CopyFromParent,
            background_pixmap=Xlib.X.ParentRelative,
            event_mask=Xlib.X.ExposureMask | Xlib.X.StructureNotifyMask | Xlib.X.ButtonPressMask)
        self._window.set_wm_class(ICON_CLASS, "lidguard")
        import Xlib.Xutil

        # The tray sizes its socket from these (without them trayer gives the icon one pixel of width).
        self._window.set_wm_normal_hints(flags=Xlib.Xutil.PPosition | Xlib.Xutil.PSize | Xlib.Xutil.PMinSize,
                                         min_width=24, min_height=24)
        self._window.change_property(self._xembed_info, self._xembed_info, 32, [0, 1])
        self._display.flush()

    # -- from any thread -------------------------------------------------------------------------------
    def update(self, *, title: str, images: list[Any] | None, entries: tuple[MenuEntry, ...]) -> None:
        self._post("update", (title, images[-1] if images else None, entries))

    def stop(self) -> None:
        self._post("stop", None)

    def _post(self, command: str, argument: Any) -> None:
        self._commands.put((command, argument))
        try:
            os.write(self._wake_write, b"!")
        except OSError:  # the loop has ended and closed the pipe
            pass

    # -- the loop (one thread) -----------------------------------------------------------------------------
    def run(self, setup: Callable[[], None]) -> None:
        import threading

        self._set_title()
        self._dock()
        threading.Thread(target=setup, name="tray-setup", daemon=True).start()
        display = self._display
        try:
            while self._running:
                while display.pending_events():
                    self._event(display.next_event())
                self._drain()
                if not self._running:
                    break
                display.flush()
                ready, _, _ = select.select([display.fileno(), self._wake_read], [], [])
                if self._wake_read in ready:
                    os.read(self._wake_read, 4096)
        finally:
            for descriptor in (self._wake_read, self._wake_write):
                os.close(descriptor)
            try:
                self._close_menu()
                self._window.destroy()
                display.close()
            except Exception:  # noqa: S110 - the display is gone already
                pass

    def _drain(self) -> None:
        while True:
            try:
                command, argument = self._commands.get_nowait()
            except queue.Empty:
                return
            if command == "stop":
                self._running = False
                return
            title, image, entries = argument
            if image is not None:
                self._image = image
                self._draw()
            if title != self._title:
                self._title = title
                self._set_title()
            self._entries = entries

    def _event(self, event: Any) -> None:
        X = self._X
        if event.type == X.ClientMessage and event.window == self._root and event.client_type == self._manager:
            if event.data[1][1] == self._tray_atom:  # a (new) tray appeared
                self._dock()
        elif event.type in (X.Expose, X.ConfigureNotify, X.MapNotify) and event.window == self._window:
            self._draw()
        elif event.type == X.ButtonPress and event.window == self._window:
            if event.detail == 1:
                self._activate_default()
            elif event.detail == 3:
                self._open_menu(event.root_x, event.root_y)
        elif event.type == X.ButtonPress and self._menu is not None and event.window == self._menu:
            self._menu_click(event.event_x, event.event_y)
        elif event.type == X.Expose and self._menu is not None and event.window == self._menu:
            gc = self._menu.create_gc()
            self._menu.put_pil_image(gc, 0, 0, self._menu_image)
            gc.free()

    # -- the icon ------------------------------------------------------------------------------------------
    def _dock(self) -> None:
        from Xlib.protocol import event as xevent

        owner = self._display.get_selection_owner(self._tray_atom)
        if owner == self._X.NONE:
            return  # no tray yet: docked when one sends MANAGER
        message = xevent.ClientMessage(window=owner, client_type=self._opcode,
                                       data=(32, [self._X.CurrentTime, _REQUEST_DOCK, self._window.id, 0, 0]))
        owner.send_event(message, event_mask=self._X.NoEventMask)
        self._display.flush()

    def _set_title(self) -> None:
        self._window.set_wm_name(self._title.encode("latin-1", "replace"))
        self._window.change_property(self._net_wm_name, self._utf8, 8, self._title.encode("utf-8", "replace"))

    def _draw(self) -> None:
        from PIL import Image

        if self._image is None:
            return
        try:
            geometry = self._window.get_geometry()
            width, height = max(1, geometry.width), max(1, geometry.height)
            self._window.clear_area(0, 0, width, height)
            raw = self._window.get_image(0, 0, width, height, self._X.ZPixmap, 0xFFFFFFFF)
            background = Image.frombytes("RGB", (width, height), raw.data, "raw", "BGRX").convert("RGBA")
        except Exception:  # not mapped yet (BadMatch): drawn on its Expose
            return
        side = min(width, height)
        icon = self._image.resize((side, side), Image.Resampling.LANCZOS)
        background.alpha_composite(icon, ((width - side) // 2, (height - side) // 2))
        gc = self._window.create_gc()
        self._window.put_pil_image(gc, 0, 0, background.convert("RGB"))
        gc.free()

    def _activate_default(self) -> None:
        for entry in self._entries:
            if entry.default and entry.enabled:
                self._on_action(entry.key)
                return

    # -- the menu ------------------------------------------------------------------------------------------
    def _open_menu(self, x: int, y: int) -> None:
        import Xlib.Xatom
        from PIL import Image, ImageDraw, ImageFont

        self._close_menu()
        font = ImageFont.load_default()
        rows: list[tuple[int, int, MenuEntry]] = []
        top = 4
        width = 120
        for entry in self._entries:
            height = SEPARATOR_HEIGHT if entry.key == "separator" else ROW_HEIGHT
            rows.append((top, top + height, entry))
            top += height
            width = max(width, int(font.getlength(_label(entry))) + 2 * MENU_PADDING)
        height = top + 4
        image = Image.new("RGB", (width, height), (246, 246, 246))
        draw = ImageDraw.Draw(image)
        draw.rectangle((0, 0, width - 1, height - 1), outline=(120, 120, 120))
        for row_top, row_bottom, entry in rows:
            if entry.key == "separator":
                middle = (row_top + row_bottom) // 2
                draw.line((4, middle, width - 5, middle), fill=(190, 190, 190))
                continue
            colour = (20, 20, 20) if entry.enabled and entry.key != "session" else (130, 130, 130)
            draw.text((MENU_PADDING, row_top + 5), _label(entry), fill=colour, font=font)
        X = self._X
        x = max(0, min(x, self._screen.width_in_pixels - width))
        y = max(0, min(y, self._screen.height_in_pixels - height))
        menu = self._root.create_window(x, y, width, height, 0, self._screen.root_depth, X.InputOutput,
                                        X.CopyFromParent, override_redirect=True,
                                        background_pixel=self._screen.white_pixel,
                                        event_mask=X.ExposureMask | X.ButtonPressMask)
        menu.set_wm_class(MENU_CLASS, "lidguard")
        menu.change_property(self._rows_atom, Xlib.Xatom.STRING, 8,
                             "\n".join(f"{entry.key} {row_top} {row_bottom}" for row_top, row_bottom, entry in rows
                                       if entry.key != "separator").encode())
        menu.map()
        gc = menu.create_gc()
        menu.put_pil_image(gc, 0, 0, image)
        gc.free()
        menu.grab_pointer(True, X.ButtonPressMask, X.GrabModeAsync, X.GrabModeAsync, X.NONE, X.NONE, X.CurrentTime)
        self._menu, self._menu_rows, self._menu_image = menu, rows, image

    def _menu_click(self, x: int, y: int) -> None:
        width, height = self._menu_image.size
        chosen = None
        if 0 <= x < width and 0 <= y < height:
            chosen = next((entry for top, bottom, entry in self._menu_rows if top <= y < bottom), None)
        self._close_menu()
        if chosen is not None and chosen.enabled and chosen.key not in ("session", "separator"):
            self._on_action(chosen.key)

    def _close_menu(self) -> None:
        if self._menu is None:
            return
        self._display.ungrab_pointer(self._X.CurrentTime)
        self._menu.destroy()
        self._menu = None
        self._menu_rows = []
        self._display.flush()


def _label(entry: MenuEntry) -> str:
    if entry.checked is None:
        return entry.label
    return f"[{'x' if entry.checked else ' '}] {entry.label}"
