"""Whether a graphical session is there for ``lidguard tray`` (Linux: ``DISPLAY`` or
``WAYLAND_DISPLAY``; macOS and Windows always have one when a user is logged in)."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["display_problem"]


def display_problem(os_name: str, environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    if os_name == "linux" and not env.get("DISPLAY", "").strip() and not env.get("WAYLAND_DISPLAY", "").strip():
        return "no graphical display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    return None
