"""A StatusNotifierItem over D-Bus (what KDE, GNOME's AppIndicator extension, XFCE, Cinnamon and
waybar show), with its menu over ``com.canonical.dbusmenu``, in pure Python (jeepney; no PyGObject).

The item is ``/StatusNotifierItem`` (``org.kde.StatusNotifierItem``: the icon as ARGB32 pixmaps, the
title and tooltip, ``Activate`` = the default entry), the menu ``/MenuBar`` (``GetLayout``,
``GetGroupProperties``, ``Event`` "clicked", ``AboutToShow``). It owns
``org.kde.StatusNotifierItem-<pid>-1`` and registers with ``org.kde.StatusNotifierWatcher``, again
whenever a new watcher appears (a panel restarted). One thread reads method calls (jeepney's router
thread hands them over through a queue); updates from other threads send signals under a lock.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from .model import MenuEntry

__all__ = ["ITEM_PATH", "MENU_PATH", "WATCHER_NAME", "SniIndicator", "argb_pixmap", "watcher_present"]

ITEM_PATH = "/StatusNotifierItem"
MENU_PATH = "/MenuBar"
ITEM_INTERFACE = "org.kde.StatusNotifierItem"
MENU_INTERFACE = "com.canonical.dbusmenu"
WATCHER_NAME = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
PIXMAP_SIZES = (22, 32, 64)
_INTROSPECTION = """<node>
 <interface name="org.kde.StatusNotifierItem">
  <property name="Category" type="s" access="read"/><property name="Id" type="s" access="read"/>
  <property name="Title" type="s" access="read"/><property name="Status" type="s" access="read"/>
  <property name="WindowId" type="i" access="read"/><property name="IconName" type="s" access="read"/>
  <property name="IconPixmap" type="a(iiay)" access="read"/>
  <property name="ToolTip" type="(sa(iiay)ss)" access="read"/>
  <property name="ItemIsMenu" type="b" access="read"/><property name="Menu" type="o" access="read"/>
  <method name="Activate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
  <method name="SecondaryActivate"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/>
  </method>
  <method name="ContextMenu"><arg name="x" type="i" direction="in"/><arg name="y" type="i" direction="in"/></method>
  <method name="Scroll"><arg name="delta" type="i" direction="in"/><arg name="orientation" type="s" direction="in"/>
  </method>
  <signal name="NewIcon"/><signal name="NewTitle"/><signal name="NewToolTip"/>
  <signal name="NewStatus"><arg name="status" type="s"/></signal>
 </interface>
 <interface name="com.canonical.dbusmenu">
  <property name="Version" type="u" access="read"/><property name="TextDirection" type="s" access="read"/>
  <property name="Status" type="s" access="read"/><property name="IconThemePath" type="as" access="read"/>
  <method name="GetLayout"><arg type="i" direction="in"/><arg type="i" direction="in"/>
   <arg type="as" direction="in"/><arg type="u" direction="out"/><arg type="(ia{sv}av)" direction="out"/></method>
  <method name="GetGroupProperties"><arg type="ai" direction="in"/><arg type="as" direction="in"/>
   <arg type="a(ia{sv})" direction="out"/></method>
  <method name="GetProperty"><arg type="i" direction="in"/><arg type="s" direction="in"/>
   <arg type="v" direction="out"/></method>
  <method name="Event"><arg type="i" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/>
   <arg type="u" direction="in"/></method>
  <method name="EventGroup"><arg type="a(isvu)" direction="in"/><arg type="ai" direction="out"/></method>
  <method name="AboutToShow"><arg type="i" direction="in"/><arg type="b" direction="out"/></method>
  <method name="AboutToShowGroup"><arg type="ai" direction="in"/><arg type="ai" direction="out"/>
   <arg type="ai" direction="out"/></method>
  <signal name="LayoutUpdated"><arg type="u"/><arg type="i"/></signal>
  <signal name="ItemsPropertiesUpdated"><arg type="a(ia{sv})"/><arg type="a(ias)"/></signal>
 </interface>
 <interface name="org.freedesktop.DBus.Properties">
  <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/>
  </method>
  <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
 </interface>
</node>
"""


def argb_pixmap(image: Any) -> tuple[int, int, bytes]:
    """A Pillow RGBA image as the spec's ARGB32 in network byte order."""
    rgba = image.convert("RGBA").tobytes()
    data = bytearray(len(rgba))
    data[0::4], data[1::4], data[2::4], data[3::4] = rgba[3::4], rgba[0::4], rgba[1::4], rgba[2::4]
    return image.width, image.height, bytes(data)


def watcher_present(timeout: float = 2.0) -> bool:
    """Is a StatusNotifierWatcher (a panel that shows SNI items) on the session bus?"""
    try:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection
    except ImportError:
        return False
    try:
        with open_dbus_connection(bus="SESSION") as connection:
            bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus",
                              interface="org.freedesktop.DBus")
            reply = connection.send_and_get_reply(new_method_call(bus, "NameHasOwner", "s", (WATCHER_NAME,)),
                                                  timeout=timeout)
            return bool(reply.body and reply.body[0])
    except Exception:  # no session bus, refused, timed out: no SNI
        return False


class SniIndicator:
    def __init__(self, on_action: Callable[[str], None]) -> None:
        from jeepney import MatchRule, message_bus
        from jeepney.io.threading import DBusRouter, open_dbus_connection

        self._on_action = on_action
        self._connection = open_dbus_connection(bus="SESSION")
        self._router = DBusRouter(self._connection)
        self._calls: queue.Queue[Any] = queue.Queue(maxsize=256)
        self._calls_filter = self._router.filter(MatchRule(type="method_call"), queue=self._calls)
        owner_rule = MatchRule(type="signal", sender="org.freedesktop.DBus", interface="org.freedesktop.DBus",
                               member="NameOwnerChanged", path="/org/freedesktop/DBus")
        owner_rule.add_arg_condition(0, WATCHER_NAME)
        self._owners_filter = self._router.filter(owner_rule, queue=self._calls)
        self._router.send_and_get_reply(message_bus.AddMatch(owner_rule), timeout=5)
        self.bus_name = f"org.kde.StatusNotifierItem-{os.getpid()}-1"
        self._router.send_and_get_reply(message_bus.RequestName(self.bus_name), timeout=5)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._title = "LidGuard"
        self._pixmaps: list[tuple[int, int, bytes]] = []
        self._entries: tuple[MenuEntry, ...] = ()
        self._revision = 1

    # -- what the app sets ---------------------------------------------------------------------------
    def update(self, *, title: str, images: list[Any] | None, entries: tuple[MenuEntry, ...]) -> None:
        with self._lock:
            signals = []
            if images is not None:
                self._pixmaps = [argb_pixmap(image) for image in images]
                signals.append("NewIcon")
            if title != self._title:
                self._title = title
                signals += ["NewTitle", "NewToolTip"]
            layout_changed = entries != self._entries
            if layout_changed:
                self._entries = entries
                self._revision += 1
            revision = self._revision
        from jeepney import DBusAddress, new_signal

        item = DBusAddress(ITEM_PATH, interface=ITEM_INTERFACE)
        for name in signals:
            self._send(new_signal(item, name))
        if layout_changed:
            self._send(new_signal(DBusAddress(MENU_PATH, interface=MENU_INTERFACE), "LayoutUpdated", "ui",
                                  (revision, 0)))

    def _send(self, message: Any) -> None:
        try:
            self._router.send(message)
        except OSError:  # the bus went away: the run loop ends on its own
            self._stopped.set()

    # -- the loop ------------------------------------------------------------------------------------
    def _register(self) -> None:
        from jeepney import DBusAddress, new_method_call

        watcher = DBusAddress(WATCHER_PATH, bus_name=WATCHER_NAME, interface=WATCHER_NAME)
        try:
            self._router.send_and_get_reply(
                new_method_call(watcher, "RegisterStatusNotifierItem", "s", (self.bus_name,)), timeout=5)
        except Exception:  # noqa: S110 - no watcher yet: registered when one appears (NameOwnerChanged)
            pass

    def run(self, setup: Callable[[], None]) -> None:
        self._register()
        threading.Thread(target=setup, name="tray-setup", daemon=True).start()
        try:
            while not self._stopped.is_set():
                message = self._calls.get()
                if message is None:
                    break
                self._handle(message)
        finally:
            self._calls_filter.close()
            self._owners_filter.close()
            self._router.close()
            self._connection.close()

    def stop(self) -> None:
        self._stopped.set()
        try:
            self._calls.put_nowait(None)
        except queue.Full:
            pass

    # -- method calls --------------------------------------------------------------------------------
    def _handle(self, message: Any) -> None:
        from jeepney import MessageType, new_error, new_method_return

        header = message.header
        if header.message_type is MessageType.signal:
            if message.body[:1] == (WATCHER_NAME,) and len(message.body) == 3 and message.body[2]:
                self._register()  # a (new) panel's watcher appeared
            return
        fields = header.fields
        from jeepney import HeaderFields

        path, interface, member = (fields.get(HeaderFields.path), fields.get(HeaderFields.interface),
                                   fields.get(HeaderFields.member))
        try:
            reply = self._answer(path, interface, member, message.body)
        except _Unknown as error:
            self._send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (str(error),)))
            return
        except Exception as error:  # a bad argument: an error reply, never the end of the tray
            self._send(new_error(message, "org.freedesktop.DBus.Error.InvalidArgs", "s", (str(error)[:200],)))
            return
        if reply is not None:
            self._send(new_method_return(message, *reply))

    def _answer(self, path: Any, interface: Any, member: Any, body: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        if member == "Introspect":
            return "s", (_INTROSPECTION,)
        if interface == PROPERTIES or member in ("Get", "GetAll"):
            values = self._item_properties() if path == ITEM_PATH else self._menu_properties()
            if member == "GetAll":
                return "a{sv}", (values,)
            if member == "Get" and len(body) == 2 and body[1] in values:
                return "v", (values[body[1]],)
            raise _Unknown(f"no property {body[1:2]}")
        if path == ITEM_PATH:
            if member == "Activate":
                self._activate_default()
            elif member not in ("SecondaryActivate", "ContextMenu", "Scroll"):
                raise _Unknown(str(member))
            return "", ()
        if path == MENU_PATH:
            return self._menu_call(str(member), body)
        raise _Unknown(f"{path} {member}")

    def _item_properties(self) -> dict[str, tuple[str, Any]]:
        with self._lock:
            title, pixmaps = self._title, list(self._pixmaps)
        return {"Category": ("s", "ApplicationStatus"), "Id": ("s", "lidguard"), "Title": ("s", title),
                "Status": ("s", "Active"), "WindowId": ("i", 0), "IconName": ("s", ""),
                "IconPixmap": ("a(iiay)", pixmaps), "ToolTip": ("(sa(iiay)ss)", ("", [], "LidGuard", title)),
                "ItemIsMenu": ("b", False), "Menu": ("o", MENU_PATH)}

    @staticmethod
    def _menu_properties() -> dict[str, tuple[str, Any]]:
        return {"Version": ("u", 3), "TextDirection": ("s", "ltr"), "Status": ("s", "normal"),
                "IconThemePath": ("as", [])}

    def _item_props(self, number: int, entry: MenuEntry) -> dict[str, tuple[str, Any]]:
        if entry.key == "separator":
            return {"type": ("s", "separator")}
        props: dict[str, tuple[str, Any]] = {"label": ("s", entry.label.replace("_", "__")),
                                             "enabled": ("b", entry.enabled), "visible": ("b", True)}
        if entry.checked is not None:
            props["toggle-type"] = ("s", "checkmark")
            props["toggle-state"] = ("i", 1 if entry.checked else 0)
        return props

    def _menu_call(self, member: str, body: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        with self._lock:
            entries, revision = self._entries, self._revision
        items = {number: entry for number, entry in enumerate(entries, start=1)}
        if member == "GetLayout":
            children: list[Any] = [("(ia{sv}av)", (number, self._item_props(number, entry), []))
                        for number, entry in items.items()]
            root = (0, {"children-display": ("s", "submenu")}, children)
            return "u(ia{sv}av)", (revision, root)
        if member == "GetGroupProperties":
            wanted = body[0] if body and body[0] else list(items)
            return "a(ia{sv})", ([(number, self._item_props(number, items[number]))
                                  for number in wanted if number in items],)
        if member == "GetProperty":
            props = self._item_props(body[0], items[body[0]]) if body[0] in items else {}
            if body[1] not in props:
                raise _Unknown(f"no property {body[1]} on item {body[0]}")
            return "v", (props[body[1]],)
        if member == "Event":
            if body[1] == "clicked" and body[0] in items and items[body[0]].enabled:
                self._on_action(items[body[0]].key)
            return "", ()
        if member == "EventGroup":
            missing = []
            for number, event, _data, _time in body[0]:
                if number not in items:
                    missing.append(number)
                elif event == "clicked" and items[number].enabled:
                    self._on_action(items[number].key)
            return "ai", (missing,)
        if member == "AboutToShow":
            return "b", (False,)
        if member == "AboutToShowGroup":
            return "aiai", ([], [number for number in body[0] if number not in items])
        raise _Unknown(member)

    def _activate_default(self) -> None:
        with self._lock:
            entries = self._entries
        for entry in entries:
            if entry.default and entry.enabled:
                self._on_action(entry.key)
                return


class _Unknown(Exception):
    pass
