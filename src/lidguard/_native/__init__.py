"""Loader for lidguard's optional compiled modules.

Every compiled module has a pure-Python twin; the compiled one is used only when it imports and its
``ABI_VERSION`` matches what the caller expects (a stale build is refused with a readable reason).
``LIDGUARD_NO_EXTENSIONS=1`` forces the pure fallback; ``LIDGUARD_REQUIRE_EXTENSIONS=1`` turns a
missing or stale module into an ImportError instead of a fallback.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["NativeStatus", "extensions_disabled", "extensions_required", "load_native_module", "native_statuses"]

_STATUSES: dict[str, NativeStatus] = {}


class NativeStatus:
    __slots__ = ("active", "name", "reason")

    def __init__(self, name: str, active: bool, reason: str) -> None:
        self.name = name
        self.active = active
        self.reason = reason

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "active": self.active, "reason": self.reason}


def _flag(variable: str) -> bool:
    return os.environ.get(variable, "").strip() not in ("", "0", "false", "no")


def extensions_disabled() -> bool:
    return _flag("LIDGUARD_NO_EXTENSIONS")


def extensions_required() -> bool:
    return _flag("LIDGUARD_REQUIRE_EXTENSIONS")


def load_native_module(name: str, expected_abi: int) -> ModuleType | None:
    """Returns ``lidguard._native.<name>`` or None (pure fallback); records why for `doctor`."""
    if extensions_disabled():
        _STATUSES[name] = NativeStatus(name, False, "disabled by LIDGUARD_NO_EXTENSIONS=1")
        return None
    try:
        module = importlib.import_module(f"lidguard._native.{name}")
    except ImportError as error:
        reason = f"not built or not importable ({error})"
        if extensions_required():
            raise ImportError(f"lidguard native module {name} is required but {reason}") from error
        _STATUSES[name] = NativeStatus(name, False, reason)
        return None
    found_abi = getattr(module, "ABI_VERSION", None)
    if found_abi != expected_abi:
        reason = f"stale build (ABI {found_abi}, expected {expected_abi}); rebuild lidguard"
        if extensions_required():
            raise ImportError(f"lidguard native module {name} is a {reason}")
        _STATUSES[name] = NativeStatus(name, False, reason)
        return None
    _STATUSES[name] = NativeStatus(name, True, "compiled module active")
    return module


def native_statuses() -> list[NativeStatus]:
    return list(_STATUSES.values())
