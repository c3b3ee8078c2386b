"""setup offers the power permission and uninstall removes it when the rule is missing or installed - and
when it cannot be checked without root (Debian's /etc/polkit-1/rules.d is 0700: a normal user cannot tell),
where the sudo install/remove scripts find out themselves (an unmanaged file is never touched)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lidguard.cli import setup_command, uninstall_command
from lidguard.platform.api import PERMISSION_NEEDS_ROOT

RULE = "polkit rule /etc/polkit-1/rules.d/49-lidguard.rules"


class _Permission:
    def __init__(self, text: str) -> None:
        self.text = text
        self.ran: list[str] = []

    def describe(self) -> str:
        return self.text

    def moot_reason(self) -> None:
        return None

    def run(self, subcommand: str, *, out: object, err: object) -> int:
        self.ran.append(subcommand)
        return 0


def _context(text: str) -> tuple[SimpleNamespace, _Permission]:
    permission = _Permission(f"{RULE}: {text} (see `lidguard linux-permission status`)")
    return SimpleNamespace(platform=SimpleNamespace(name="linux", permission=permission)), permission


UNCHECKED = f"{PERMISSION_NEEDS_ROOT} (/etc/polkit-1/rules.d is closed to alice)"


@pytest.mark.parametrize(("state", "offered"), [("not installed", True), (UNCHECKED, True),
                                                ("installed for current user", False),
                                                ("present but not managed by LidGuard", False)])
def test_setup_offers_the_permission_unless_it_is_known_to_be_there(state, offered, capsys):
    context, permission = _context(state)
    setup_command._offer_permission(context, True)
    assert permission.ran == (["install"] if offered else [])
    if offered:
        assert f"Power permission: {RULE}: {state}" in capsys.readouterr().out


@pytest.mark.parametrize(("state", "removed"), [("installed for current user", True), (UNCHECKED, True),
                                                ("not installed", False),
                                                ("present but not managed by LidGuard", False)])
def test_uninstall_removes_the_permission_unless_it_is_known_to_be_absent(state, removed):
    context, permission = _context(state)
    report = uninstall_command._Report()
    uninstall_command._remove_permission(context, True, report)
    assert permission.ran == (["remove"] if removed else [])
    assert report.removed == (1 if removed else 0) and report.failed == []
