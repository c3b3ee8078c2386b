"""The tray's menu, tooltip and "Safe to close the lid?" line in ko, ja, zh-Hans and zh-Hant (issue 38.2):
the pure model in each language (the running indicator in Korean: test_tray_sni.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from lidguard import l10n
from lidguard.tray.model import menu_entries, tray_view

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)
CULTURES = ("ko", "ja", "zh-Hans", "zh-Hant")
MENU_WORDS = ("Pause for 30 min", "Pause for 2 h", "Resume", "Sleep now", "Change lid action",
              "Suspend mode: hibernate", "Open status", "Quit tray")


def t(culture: str, message: str) -> str:
    text = l10n.translation(culture).gettext(message)
    assert text != message, (culture, message)  # the catalog has it
    return text


@pytest.fixture(autouse=True)
def english_again() -> Iterator[None]:
    yield
    l10n.reset()


def _status(count: int, **extra):
    sessions = [{"SessionIdentifier": f"s{number}", "Provider": "Claude", "ProviderName": "",
                 "WorkingDirectory": "/home/me/app", "StartedAt": "2026-12-01T11:00:00Z",
                 "SoftLockState": "SoftLocked" if number == 1 else "None", "RunningToolCount": 0}
                for number in range(count)]
    return {"Succeeded": True, "RuntimeUnavailable": False, "ActiveSessionCount": count, "Sessions": sessions,
            "Settings": {"ChangeLidAction": True, "SuspendMode": "Sleep"}, "LidSwitchState": "Open",
            "PendingSuspend": None, "Paused": None, "ProtectionHeldBack": [], **extra}


@pytest.mark.parametrize("culture", CULTURES)
def test_the_menu_and_tooltip_in_each_language(culture: str) -> None:
    l10n.set_culture(culture)
    view = tray_view(_status(2), now=NOW)
    labels = {entry.key: entry.label for entry in menu_entries(view)}
    words = [entry.label for entry in menu_entries(view) if entry.key not in ("session", "separator")]
    assert words == [t(culture, word) for word in MENU_WORDS]
    sessions = [entry.label for entry in menu_entries(view) if entry.key == "session"]
    assert any(t(culture, "waiting for the user") in label for label in sessions), sessions
    assert any(t(culture, "active") in label for label in sessions), sessions
    assert view.tooltip.startswith(t(culture, "LidGuard: protecting {sessions}").format(
        sessions=t(culture, "{count} sessions").format(count=2)))
    assert t(culture, "; closing the lid keeps it awake.") in view.tooltip
    separator = l10n.translation(culture).gettext(", ")
    answer = separator.join([t(culture, "{count} agents protected").format(count=2),
                             t(culture, "lid-close sleep blocked")])
    assert view.readiness == t(culture, "Safe to close the lid: yes - {answer}").format(answer=answer)
    assert labels["quit"] == t(culture, "Quit tray")
    idle = tray_view(None, now=NOW)
    assert [entry.label for entry in menu_entries(idle)][0] == t(culture, "No session")
    assert idle.tooltip == t(culture, "LidGuard: idle, no session (the runtime is not running; it starts with the "
                                      "first agent session).")
    assert t(culture, "lidguard is not running, so no agent is protected") in idle.readiness


def test_english_is_the_source() -> None:
    l10n.set_culture("en")
    view = tray_view(_status(2), now=NOW)
    assert [entry.label for entry in menu_entries(view) if entry.key not in ("session", "separator")] == \
        list(MENU_WORDS)
    assert view.tooltip == "LidGuard: protecting 2 sessions; closing the lid keeps it awake."
