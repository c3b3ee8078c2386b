"""Text checks every boundary shares (stdlib only): the IPC requests, the MCP wire, lidguard-notify."""

from __future__ import annotations

from typing import Any

__all__ = ["has_lone_surrogate"]


def has_lone_surrogate(value: Any) -> bool:
    """A string anywhere in ``value`` (dict keys too) that is not valid Unicode (``"\\ud800"`` unpaired).
    Iterative: a deeply nested value cannot exhaust the stack."""
    if type(value) is str and value.isascii():  # nearly every key and value: ASCII holds no surrogate
        return False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False
