"""Loader for lidguard's optional compiled modules.

Every compiled module has a pure-Python twin; the compiled one is used only when it imports and its
``ABI_VERSION`` matches what the caller expects (a stale build is refused with a readable reason).
``LIDGUARD_NO_EXTENSIONS=1`` forces the pure fallback; ``LIDGUARD_REQUIRE_EXTENSIONS=1`` turns a
missing or stale module into ``RequiredExtensionError`` (an ImportError whose message names the
module and says why) instead of a fallback. Both switches are read by :mod:`lidguard.switches`, the
same parser ``setup.py`` uses, so the build and the runtime agree on every value.
"""

from __future__ import annotations

import sys
from types import ModuleType

from .. import switches
from ..switches import RequiredExtensionError  # defined there so the CLI can catch it without _native

__all__ = [
    "NativeStatus",
    "RequiredExtensionError",
    "extensions_disabled",
    "extensions_required",
    "load_native_module",
    "native_statuses",
]

_STATUSES: dict[str, NativeStatus] = {}


class NativeStatus:
    __slots__ = ("active", "name", "reason")

    def __init__(self, name: str, active: bool, reason: str) -> None:
        self.name = name
        self.active = active
        self.reason = reason

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "active": self.active, "reason": self.reason}


def extensions_disabled() -> bool:
    """``LIDGUARD_NO_EXTENSIONS`` is on; raises ``switches.SwitchError`` for a value that is neither."""
    return switches.no_extensions()


def extensions_required() -> bool:
    """``LIDGUARD_REQUIRE_EXTENSIONS`` is on; raises ``switches.SwitchError`` for a value that is neither."""
    return switches.require_extensions()


def load_native_module(name: str, expected_abi: int) -> ModuleType | None:
    """Returns ``lidguard._native.<name>`` or None (pure fallback); records why for `doctor`."""
    if extensions_disabled():
        value = switches.raw_value("LIDGUARD_NO_EXTENSIONS")
        _STATUSES[name] = NativeStatus(name, False, f"disabled by LIDGUARD_NO_EXTENSIONS={value}")
        return None
    required = extensions_required()
    try:
        # __import__, not importlib.import_module: the importlib package (with warnings) costs the hook ~0.3 ms
        __import__(f"lidguard._native.{name}")
        module = sys.modules[f"lidguard._native.{name}"]
    except ImportError as error:
        reason = f"not built or not importable ({error})"
        if required:
            raise RequiredExtensionError(name, reason) from error
        _STATUSES[name] = NativeStatus(name, False, reason)
        return None
    found_abi = getattr(module, "ABI_VERSION", None)
    if found_abi != expected_abi:
        reason = f"stale build (ABI {found_abi}, expected {expected_abi})"
        if required:
            raise RequiredExtensionError(name, reason)
        _STATUSES[name] = NativeStatus(name, False, f"{reason}; rebuild lidguard")
        return None
    _STATUSES[name] = NativeStatus(name, True, "compiled module active")
    return module


def native_statuses() -> list[NativeStatus]:
    return list(_STATUSES.values())
