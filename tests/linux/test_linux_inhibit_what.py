"""The ``what`` string of Inhibit, tested on its own: the logind mock does not validate it."""

from __future__ import annotations

import pytest

from lidguard.platform.api import ProtectionRequest
from lidguard.platform.linux.power import build_inhibit_what


@pytest.mark.parametrize(
    ("system", "display", "away", "expected"),
    [
        (True, False, False, "sleep:idle"),
        (True, True, False, "sleep:idle"),
        (False, True, False, "idle"),
        (False, False, False, ""),
        # Away mode is Windows-only: it never adds anything on Linux.
        (False, False, True, ""),
        (True, False, True, "sleep:idle"),
        (False, True, True, "idle"),
    ],
)
def test_build_inhibit_what(system: bool, display: bool, away: bool, expected: str) -> None:
    request = ProtectionRequest(
        prevent_system_sleep=system, prevent_display_sleep=display, prevent_away_mode_sleep=away
    )
    assert build_inhibit_what(request) == expected


def test_every_kind_is_one_logind_knows() -> None:
    # org.freedesktop.login1(5): the colon-separated kinds Inhibit accepts.
    known = {
        "shutdown",
        "sleep",
        "idle",
        "handle-power-key",
        "handle-suspend-key",
        "handle-hibernate-key",
        "handle-lid-switch",
    }
    for system in (True, False):
        for display in (True, False):
            what = build_inhibit_what(
                ProtectionRequest(prevent_system_sleep=system, prevent_display_sleep=display)
            )
            assert what == "" or set(what.split(":")) <= known
            assert len(what.split(":")) == len(set(what.split(":")))
