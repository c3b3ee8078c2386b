"""The status, doctor and settings lines fit 100 terminal columns in every language (East Asian wide
characters count two): a translation of a line that fits in English fits too, and the "Safe to close the
lid?" answer (status's first line) fits with its head for every fixed reason."""

from __future__ import annotations

import string
import unicodedata

import pytest

from .conftest import CULTURES, catalog, catalog_tool

WIDTH = 100
# The modules whose messages are whole lines of status, doctor, settings and the settings block.
LINE_MODULES = ("lidguard/cli/session_commands.py", "lidguard/cli/output.py", "lidguard/cli/doctor.py",
                "lidguard/cli/pause_commands.py", "lidguard/cli/status_view.py", "lidguard/settings/display.py",
                "lidguard/cli/settings_commands.py", "lidguard/cli/diagnostic_commands.py")
READINESS = "lidguard/shared/readiness.py"


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(character) in ("W", "F") else 1 for character in text)


def filled(text: str) -> str:
    """The message with each field as a one-character value."""
    names = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    return text.format(**{name: "x" for name in names})


def _messages_of(modules: tuple[str, ...]) -> list[str]:
    return [message for message, places in catalog_tool().extract().items()
            if any(place.split(":")[0] in modules for place in places)]


@pytest.mark.parametrize("culture", CULTURES)
def test_a_line_that_fits_in_english_fits_translated(culture: str) -> None:
    entries = catalog(culture)
    too_wide = [(columns(filled(entries[message])), entries[message]) for message in _messages_of(LINE_MODULES)
                if columns(filled(message)) <= WIDTH < columns(filled(entries[message]))]
    assert too_wide == []


@pytest.mark.parametrize("culture", CULTURES)
def test_every_fixed_readiness_answer_fits(culture: str) -> None:
    entries = catalog(culture)
    head = entries["Safe to close the lid: not yet - {answer}"]
    too_wide = []
    for message in _messages_of((READINESS,)):
        if message.startswith("Safe to close the lid"):
            continue
        english = "Safe to close the lid: not yet - " + filled(message)
        line = head.format(answer=filled(entries[message]))
        if columns(line) > max(WIDTH, columns(english)):
            too_wide.append((columns(line), columns(english), line))
    assert too_wide == []
