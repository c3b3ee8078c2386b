"""OS backends behind the capability Protocols of :mod:`lidguard.platform.api`.

``LIDGUARD_PLATFORM`` selects one: ``auto`` (default outside tests), ``fake``, ``linux``, ``macos`` or
``windows``. Under pytest the default is ``fake`` so no test can change live power policy.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)
if TYPE_CHECKING:  # the Protocols module is not needed to pick a backend (keeps hooks light)
    from .api import Platform

__all__ = ["PLATFORM_NAMES", "load_platform", "selected_platform_name"]

PLATFORM_NAMES = ("auto", "fake", "linux", "macos", "windows")


def selected_platform_name() -> str:
    """The concrete backend name from ``LIDGUARD_PLATFORM`` (``auto`` resolved)."""
    from .. import switches

    requested = switches.platform_name()
    if not requested:
        under_test = "pytest" in sys.modules or switches.in_test_mode()
        requested = "fake" if under_test else "auto"
    if requested not in PLATFORM_NAMES:
        raise ValueError(
            f"LIDGUARD_PLATFORM must be one of {', '.join(PLATFORM_NAMES)}; got {requested!r}."
        )
    if requested != "auto":
        return requested
    from .host import host_os_name

    host = host_os_name()
    return host if host in ("linux", "macos", "windows") else "unsupported"


def load_platform(name: str | None = None) -> Platform:
    """Builds the backend; imports of OS modules happen here, lazily."""
    resolved = name or selected_platform_name()
    if resolved == "fake":
        from .fake import FakePlatform

        return FakePlatform.from_environment()
    if resolved == "linux":
        from .linux import LinuxPlatform

        return LinuxPlatform.from_environment()
    if resolved == "macos":
        from .macos import MacOSPlatform

        return MacOSPlatform.from_environment()
    if resolved == "windows":
        from .windows.backend import WindowsPlatform

        return WindowsPlatform.from_environment()
    if resolved == "unsupported":
        from .unsupported import UnsupportedPlatform

        return UnsupportedPlatform(resolved)
    from .errors import Unsupported  # lazy: the hook path imports platform.paths without it

    raise Unsupported("platform", f"unknown platform {resolved!r}")
