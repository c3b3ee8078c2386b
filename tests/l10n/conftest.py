"""Shared by the localisation tests: the catalogs as the .po files hold them, a clean choice per test."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CULTURES = ("ko", "ja", "zh-Hans", "zh-Hant")


def catalog_tool() -> ModuleType:
    """``ci/l10n_catalogs.py`` (not a package: loaded from its path)."""
    name = "l10n_catalogs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "ci" / "l10n_catalogs.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def catalog(culture: str) -> dict[str, str]:
    tool = catalog_tool()
    return tool.read_po(tool.po_path(culture))


def translated(culture: str, message: str, **values: object) -> str:
    """``message`` as the catalog of ``culture`` has it (formatted when ``values`` are given)."""
    text = catalog(culture)[message]
    assert text and text != message or message.startswith("{"), (culture, message)
    return text.format(**values) if values else text


def prefix(culture: str, message: str) -> str:
    """The translated text of a template up to its first field."""
    return catalog(culture)[message].split("{", 1)[0]


@pytest.fixture(autouse=True)
def fresh_choice() -> Iterator[None]:
    from lidguard import l10n

    l10n.reset()
    yield
    l10n.reset()
