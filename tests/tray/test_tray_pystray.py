"""The pystray indicator (Windows and macOS) maps the menu model onto pystray's items: labels,
enabled, checked and the default entry; a click reaches the app's action callback. pystray's own
base Icon (its dummy backend) with no-op platform methods stands in for the OS toolkit."""

from __future__ import annotations

import os
import types
from datetime import datetime, timezone

import pytest

from lidguard.tray.model import menu_entries, tray_view


@pytest.fixture
def pystray(monkeypatch):
    monkeypatch.setenv("PYSTRAY_BACKEND", "dummy")
    import importlib
    import sys

    for name in [name for name in sys.modules if name == "pystray" or name.startswith("pystray.")]:
        monkeypatch.delitem(sys.modules, name)
    module = importlib.import_module("pystray")

    class Icon(module.Icon):  # the platform half: what a backend implements, here nothing shown
        HAS_MENU = True
        updates: list[str] = []

        def _update_icon(self):
            self.updates.append("icon")

        def _update_title(self):
            self.updates.append("title")

        def _update_menu(self):
            self.updates.append("menu")

        def _show(self):
            pass

        def _hide(self):
            pass

    return types.SimpleNamespace(Icon=Icon, Menu=module.Menu, MenuItem=module.MenuItem)


def test_menu_items_follow_the_model_and_clicks_reach_the_app(pystray):
    from lidguard.tray.icons import draw_icon
    from lidguard.tray.pystray_indicator import PystrayIndicator

    status = {"Succeeded": True, "ActiveSessionCount": 0, "Sessions": [], "Paused": {"UntilUtc": None},
              "Settings": {"ChangeLidAction": True, "SuspendMode": "Sleep"}}
    view = tray_view(status, now=datetime.now(timezone.utc))
    clicked: list[str] = []
    indicator = PystrayIndicator(pystray, clicked.append, image=draw_icon(view.state), title=view.tooltip,
                                 entries=menu_entries(view))
    items = {item.text: item for item in indicator.icon.menu.items if item is not pystray.Menu.SEPARATOR}
    assert items["Resume"].enabled and items["Resume"].default and not items["Pause for 30 min"].default
    assert items["Change lid action"].checked is True and items["Suspend mode: hibernate"].checked is False
    assert items["Pause for 30 min"].checked is None and not items["No session"].enabled
    items["Pause for 2 h"](indicator.icon)
    indicator.icon()  # a click on the icon: the default entry
    assert clicked == ["pause-2h", "resume"]
    indicator.icon.visible = True
    image = draw_icon(view.state, "light")
    indicator.update(title="new title", images=[image], entries=menu_entries(view))
    assert indicator.icon.title == "new title" and indicator.icon.icon is image
    assert {"title", "menu"} <= set(indicator.icon.updates)
    assert os.environ["PYSTRAY_BACKEND"] == "dummy"
