"""The compiled proctree module for the tests, even when LIDGUARD_NO_EXTENSIONS=1 keeps it out of proctree."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from lidguard import proctree


def compiled_module() -> ModuleType:
    """The built module (skips when it is not built; fails on a stale build)."""
    try:
        module = importlib.import_module("lidguard._native._proctree")
    except ImportError as error:
        pytest.skip(f"the compiled proctree module is not built ({error})")
    assert module.ABI_VERSION == proctree.NATIVE_ABI_VERSION, "stale build: rerun build_ext"
    return module
