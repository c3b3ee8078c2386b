"""macOS display monitors from ``system_profiler SPDisplaysDataType -json`` (10 s timeout).

The JSON holds one entry per GPU under ``SPDisplaysDataType``; each lists its displays under
``spdisplays_ndrvs``. A display counts unless ``spdisplays_online`` says no or ``spdisplays_status``
says offline/disconnected/inactive. It is internal when a property name contains builtin/built-in/
internal with an empty or positive value, or any value contains those words (e.g.
``"spdisplays_connection_type": "spdisplays_internal"``, ``"spdisplays_builtin": "spdisplays_yes"``)
- REFERENCE 8.3. With the lid closed on Apple Silicon the built-in panel is usually not listed at all.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from ..api import DisplayConnector
from .commands import describe_tool, run_tool

__all__ = ["SYSTEM_PROFILER_ARGUMENTS", "MacDisplayReader", "parse_displays"]

SYSTEM_PROFILER_ARGUMENTS = ["SPDisplaysDataType", "-json"]
SYSTEM_PROFILER_TIMEOUT_SECONDS = 10.0
_INTERNAL_WORDS = ("builtin", "built-in", "internal")
_NEGATIVE_VALUES = ("no", "false", "0", "spdisplays_no")
_OFFLINE_WORDS = ("offline", "disconnected", "inactive")


def _is_negative(value: Any) -> bool:
    return value is False or str(value).strip().lower() in _NEGATIVE_VALUES


def _is_internal(display: dict[str, Any]) -> bool:
    for key, value in display.items():
        name = key.lower()
        if any(word in name for word in _INTERNAL_WORDS) and (value in ("", None) or not _is_negative(value)):
            return True
        if isinstance(value, str) and any(word in value.lower() for word in _INTERNAL_WORDS):
            return True
    return False


def _is_visible(display: dict[str, Any]) -> bool:
    if "spdisplays_online" in display and _is_negative(display["spdisplays_online"]):
        return False
    status = str(display.get("spdisplays_status", "")).lower()
    return not any(word in status for word in _OFFLINE_WORDS)


def parse_displays(text: str) -> list[DisplayConnector]:
    """Visible displays of every GPU; raises ValueError for output that is not the expected JSON."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("SPDisplaysDataType", []), list):
        raise ValueError("system_profiler printed no SPDisplaysDataType list")
    displays: list[DisplayConnector] = []
    for gpu in data.get("SPDisplaysDataType", []):
        entries = gpu.get("spdisplays_ndrvs", []) if isinstance(gpu, dict) else []
        for index, display in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(display, dict) or not _is_visible(display):
                continue
            name = str(display.get("_name") or f"display {index + 1}")
            displays.append(DisplayConnector(name=name, internal=_is_internal(display)))
    return displays


class MacDisplayReader:
    def list_connected_displays(self) -> list[DisplayConnector]:
        """Raises OSError when system_profiler fails or prints something unreadable."""
        try:
            result = run_tool("system_profiler", SYSTEM_PROFILER_ARGUMENTS, capability="display",
                              timeout=SYSTEM_PROFILER_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as error:
            raise OSError(f"system_profiler did not finish within {SYSTEM_PROFILER_TIMEOUT_SECONDS:g} s") from error
        if not result.ok:
            raise OSError(result.failure_text())
        try:
            return parse_displays(result.stdout)
        except ValueError as error:
            raise OSError(f"system_profiler printed unreadable JSON: {error}") from error

    def describe(self) -> str:
        tool = describe_tool("system_profiler")
        if not tool.startswith("available"):
            return f"unavailable: system_profiler {tool}"
        try:
            displays = self.list_connected_displays()
        except OSError as error:
            return f"unavailable: {error}"
        listed = ", ".join(f"{d.name}{' (internal)' if d.internal else ''}" for d in displays) or "none"
        return f"available (command-line: system_profiler SPDisplaysDataType -json; visible: {listed})"
