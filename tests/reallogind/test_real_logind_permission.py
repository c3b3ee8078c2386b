"""What polkit refuses an unprivileged user (uid 4242, no logind session) on a real logind 252, and
what lidguard makes of it: a refused lid-switch block never costs keep-awake, and status names what is
missing and the command that grants it."""

from __future__ import annotations

import pytest
from real_logind import TEST_USER_NAME, grant_rule

pytestmark = pytest.mark.xdist_group("reallogind-permission")


def kinds(inside) -> list[str]:
    return sorted(entry[0] for entry in inside.ours())


def test_a_refused_lid_switch_block_keeps_sleep_and_idle_and_status_names_the_command(
        lidguard_unprivileged, real_logind):
    lg = lidguard_unprivileged
    real_logind.set_polkit_rules(grant_rule(TEST_USER_NAME, ["inhibit-block-sleep", "inhibit-block-idle"]))
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    # Before issue 34 one "sleep:idle" inhibitor was asked for, which logind checks as handle-lid-switch:
    # refused, and keep-awake was lost with the lid change.
    assert lg.wait_until(lambda: kinds(lg) == ["idle", "sleep"], timeout=30), real_logind.inhibitors()
    assert all(entry[4] == 4242 for entry in lg.ours())
    status = lg.run("status", check=True).stdout
    assert "inhibit-handle-lid-switch" in status and "lidguard linux-permission install" in status, status
    lg.run("stop", "--provider", "claude", "--session", "s1", check=True)
    assert lg.wait_until(lambda: kinds(lg) == [])
