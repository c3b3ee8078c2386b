"""`status` on a terminal: colour (unless NO_COLOR is set or TERM=dumb) and the sessions as a compact
table. Piped or redirected output stays the plain text scripts read (``cli/session_commands.py``)."""

from __future__ import annotations

import os
import shutil
from typing import Any

from ..l10n import _
from ..providers import provider_display, session_label
from .output import escape_control, local_time, omitted_line

__all__ = ["colour_wanted", "display_width", "terminal_status_lines"]

_RESET = "\x1b[0m"
_STYLES = {"good": "\x1b[32m", "warn": "\x1b[33m", "bad": "\x1b[31m", "dim": "\x1b[2m", "bold": "\x1b[1m"}


def display_width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide and full-width characters take two."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(character) in ("W", "F") else 0
               if unicodedata.combining(character) else 1 for character in text)


def colour_wanted() -> bool:
    """https://no-color.org: any non-empty NO_COLOR turns colour off; so does TERM=dumb."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM", "") != "dumb"


class _Painter:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, style: str, text: str) -> str:
        return f"{_STYLES[style]}{text}{_RESET}" if self.colour else text


def _time(value: Any) -> str:
    return local_time(value if isinstance(value, str) else None) or "-"


def _table(rows: list[list[str]], width: int, paint_state: Any) -> list[str]:
    """Left-aligned columns two spaces apart, the state column (index 2) painted after padding; the
    last column is cut to fit ``width``."""
    sizes = [max(display_width(row[index]) for row in rows) for index in range(len(rows[0]) - 1)]
    lines = []
    for number, row in enumerate(rows):
        cells = [cell + " " * (size - display_width(cell)) for cell, size in zip(row[:-1], sizes, strict=True)]
        room = max(8, width - display_width("  ".join(cells)) - 4)
        last = row[-1] if len(row[-1]) <= room else "..." + row[-1][-(room - 3):]
        if number:
            cells[2] = paint_state(row[2], cells[2])
        lines.append(f"  {'  '.join(cells)}  {last}".rstrip())
    return lines


def terminal_status_lines(running: bool, response: dict[str, Any], tail: list[str], *, colour: bool) -> list[str]:
    """Header, one table row per session, then ``tail`` (pending suspend, power, settings) as given."""
    paint = _Painter(colour)
    width = shutil.get_terminal_size((100, 24)).columns
    state = paint("good", _("running")) if running else paint("warn", _("not running"))
    lid = str(response.get("LidSwitchState", "Unknown"))
    lines = [_("{runtime} {state}    sessions: {sessions}    lid: {lid}    displays: {displays}").format(
        runtime=paint("bold", _("LidGuard runtime")), state=state, sessions=response.get("ActiveSessionCount", 0),
        lid=escape_control(lid), displays=response.get("VisibleDisplayMonitorCount", 0))]
    sessions = response.get("Sessions") or []
    if sessions:
        rows = [[_("SESSION"), _("PROCESS"), _("STATE"), _("SOURCE"), _("STARTED"), _("ACTIVE"), _("FOLDER")]]
        for session in sessions:
            display = provider_display(str(session.get("Provider", "")), session.get("ProviderName"))
            soft = session.get("SoftLockState") == "SoftLocked"
            folder = escape_control(str(session.get("WorkingDirectory", "")))
            rows.append([escape_control(session_label(display, str(session.get("SessionIdentifier", "")))),
                         str(session.get("WatchedProcessIdentifier") or "-"),
                         _("soft-locked") if soft else _("working"),
                         "rollout" if session.get("Source") == "rollout" else "hook", _time(session.get("StartedAt")),
                         _time(session.get("LastActivityAt")), folder])
        table = _table(rows, width, lambda state, cell: paint("warn" if state == _("soft-locked") else "good", cell))
        lines.append(paint("dim", table[0]))
        lines += table[1:]
    if omitted_line(response):
        lines.append(paint("dim", omitted_line(response)))
    for line in tail:
        text = escape_control(line)
        if text.startswith((_("Suspend scheduled: {mode} because {because}.").split("{")[0],
                            _("Suspend in progress: {mode} is being requested because {because}.").split("{")[0])):
            text = paint("warn", text)
        elif text.startswith((_("Settings file error: {error}").split("{")[0],
                              _("Settings problem: {problem}").split("{")[0])):
            text = paint("bad", text)
        lines.append(text)
    return lines
