"""What ``lidguard pause`` and the MCP ``pause`` tool share (stdlib only): the duration syntax."""

from __future__ import annotations

import re

__all__ = ["DURATION_MESSAGE", "MAX_PAUSE_SECONDS", "parse_duration"]

MAX_PAUSE_SECONDS = 7 * 24 * 3600  # the runtime's bound (runtime/components/pause.py)
DURATION_MESSAGE = "must be a duration such as 30m, 2h or 1h30m (from 1s to 7d)"
_DURATION = re.compile(r"(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,8})s)?", re.ASCII)


def parse_duration(text: str) -> int:
    """``30m``, ``2h``, ``1h30m``, ``45s``, ``1d`` -> seconds (1 s to 7 days); ``ValueError`` otherwise."""
    match = _DURATION.fullmatch(text.strip().lower()) if len(text) <= 40 else None
    if match is None or not any(match.groups()):
        raise ValueError(DURATION_MESSAGE)
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if not 1 <= total <= MAX_PAUSE_SECONDS:
        raise ValueError(DURATION_MESSAGE)
    return total
