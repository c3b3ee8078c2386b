"""Visible display monitors on Windows: GetSystemMetrics(SM_CMONITORS) refined by QueryDisplayConfig.

``SM_CMONITORS`` counts the monitors on the desktop (a mirrored pair counts once). The active paths
of ``QueryDisplayConfig(QDC_ONLY_ACTIVE_PATHS)`` say which connection each one uses; a path whose
target is not available is an inactive connection and is not counted, and built-in panels are the
output technologies LVDS (6), DisplayPort embedded (11), UDI embedded (13) and INTERNAL
(0x80000000) (REFERENCE 8.1; wingdi.h DISPLAYCONFIG_VIDEO_OUTPUT_TECHNOLOGY). The runtime excludes
internal panels while the lid is closed; the base count is never above the desktop count. When
QueryDisplayConfig fails, the desktop count is used as it is (no panel is known to be internal).
"""

from __future__ import annotations

from ..api import DisplayConnector
from .winapi import INTERNAL_OUTPUT_TECHNOLOGIES, SM_CMONITORS, WindowsApi, WindowsApiError

__all__ = ["WindowsDisplayReader", "connectors_from_paths"]

_TECHNOLOGY_NAMES = {
    0: "VGA", 4: "DVI", 5: "HDMI", 6: "LVDS", 10: "DisplayPort", 11: "eDP", 12: "UDI", 13: "UDI-embedded",
    15: "Miracast", 16: "IndirectWired", 17: "IndirectVirtual", 0x80000000: "Internal",
}


def _technology_name(technology: int) -> str:
    return _TECHNOLOGY_NAMES.get(technology, f"Output{technology}")


def connectors_from_paths(desktop_count: int, paths: list[tuple[int, bool]]) -> list[DisplayConnector]:
    """Active connections, external ones first, at most ``desktop_count`` of them."""
    connectors = [
        DisplayConnector(f"{_technology_name(technology)}-{index + 1}", technology in INTERNAL_OUTPUT_TECHNOLOGIES)
        for index, (technology, available) in enumerate(paths)
        if available
    ]
    connectors.sort(key=lambda connector: connector.internal)  # stable: externals keep their order
    return connectors[: max(desktop_count, 0)]


class WindowsDisplayReader:
    def __init__(self, api: WindowsApi) -> None:
        self._api = api

    def list_connected_displays(self) -> list[DisplayConnector]:
        desktop_count = self._api.get_system_metrics(SM_CMONITORS)
        try:
            paths = self._api.query_active_display_paths()
        except WindowsApiError:
            return [DisplayConnector(f"Monitor-{index + 1}", False) for index in range(max(desktop_count, 0))]
        return connectors_from_paths(desktop_count, paths)

    def describe(self) -> str:
        try:
            displays = self.list_connected_displays()
        except WindowsApiError as error:
            return f"unavailable: {error}"
        listed = ", ".join(f"{d.name}{' (internal)' if d.internal else ''}" for d in displays) or "none"
        return f"available (SM_CMONITORS + QueryDisplayConfig; visible: {listed})"
