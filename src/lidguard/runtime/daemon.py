"""Kept for imports of the old path: the runtime lives in ``app.py`` now."""

from .app import Runtime
from .clock import RuntimeClock

__all__ = ["Runtime", "RuntimeClock"]
