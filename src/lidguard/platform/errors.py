"""The one exception every backend raises for a missing capability (stdlib only, hook-path safe)."""

from __future__ import annotations

__all__ = ["Unsupported"]


class Unsupported(Exception):
    """A capability is not available on this machine; ``reason`` says why in one line."""

    def __init__(self, capability: str, reason: str) -> None:
        super().__init__(f"{capability} is unsupported: {reason}")
        self.capability = capability
        self.reason = reason
