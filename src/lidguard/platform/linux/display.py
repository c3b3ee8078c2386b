"""Connected display outputs from the DRM subsystem's sysfs connectors.

Each connector is ``/sys/class/drm/card<N>-<connector>/status`` holding ``connected``,
``disconnected`` or ``unknown`` (created by drivers/gpu/drm/drm_sysfs.c, ``status_show``; see
https://docs.kernel.org/gpu/drm-kms.html "Connector Abstraction"). Non-connector entries (``card0``,
``renderD128``, ``version``) have no ``status`` and are skipped. Built-in panels use the eDP, LVDS
or DSI connector types (``drm_connector_enum_list`` in drivers/gpu/drm/drm_connector.c).
"""

from __future__ import annotations

from pathlib import Path

from ..api import DisplayConnector
from .sysfs import path_under_root, read_attribute_text, resolve_root

__all__ = ["DRM_CLASS_DIRECTORY", "INTERNAL_CONNECTOR_PREFIXES", "LinuxDisplayReader", "connector_name"]

DRM_CLASS_DIRECTORY = "/sys/class/drm"
INTERNAL_CONNECTOR_PREFIXES = ("edp", "lvds", "dsi")


def connector_name(entry_name: str) -> str:
    """``card0-eDP-1`` -> ``eDP-1`` (the part after the first ``-``); no ``-`` -> unchanged."""
    _, separator, name = entry_name.partition("-")
    return name if separator and name else entry_name


def is_internal_connector(name: str) -> bool:
    return name.lower().startswith(INTERNAL_CONNECTOR_PREFIXES)


class LinuxDisplayReader:
    """Every DRM connector whose status is exactly ``connected``, with its internal flag."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    def _class_directory(self) -> Path:
        return path_under_root(resolve_root(self._root), DRM_CLASS_DIRECTORY)

    def list_connected_displays(self) -> list[DisplayConnector]:
        displays: list[DisplayConnector] = []
        for status_file in sorted(self._class_directory().glob("*/status")):
            if read_attribute_text(status_file) != "connected":
                continue
            name = connector_name(status_file.parent.name)
            displays.append(DisplayConnector(name=name, internal=is_internal_connector(name)))
        return displays

    def describe(self) -> str:
        directory = self._class_directory()
        connectors = [path for path in directory.glob("*/status") if read_attribute_text(path) is not None]
        if not connectors:
            return f"unsupported: no readable {directory}/*/status (no DRM connectors)"
        connected = self.list_connected_displays()
        listed = ", ".join(f"{d.name}{' (internal)' if d.internal else ''}" for d in connected) or "none"
        return f"available ({len(connectors)} DRM connectors; connected: {listed})"
