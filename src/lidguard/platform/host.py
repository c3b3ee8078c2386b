"""Facts about the host OS that code outside platform/ may ask for (instead of reading sys.platform)."""

from __future__ import annotations

import os
import sys

__all__ = ["away_mode_supported", "current_user_id", "host_os_name"]


def host_os_name() -> str:
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    if sys.platform == "win32":
        return "windows"
    return sys.platform


def away_mode_supported() -> bool:
    """PreventAwayModeSleep exists only on Windows; elsewhere it is hidden and forced off."""
    return sys.platform == "win32"


def current_user_id() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid else None
