"""What polkit refuses an unprivileged user (uid 4242, no logind session) on a real logind 252, and
what lidguard makes of it: a refused lid-switch block never costs keep-awake, and status names what is
missing and the command that grants it."""

from __future__ import annotations

import pytest
from real_logind import TEST_USER, TEST_USER_NAME, grant_rule

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


def test_a_refused_suspend_stays_in_status_and_suspend_history_with_the_command(fresh_logind, inside):
    logind = fresh_logind(handle_lid_switch="ignore")  # only lidguard's own request could suspend
    lg = inside(logind, uid=TEST_USER)
    logind.set_polkit_rules(grant_rule(TEST_USER_NAME, ["inhibit-block-sleep", "inhibit-block-idle",
                                                        "inhibit-handle-lid-switch"]))
    lg.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert lg.wait_until(lambda: kinds(lg) == ["handle-lid-switch", "idle", "sleep"])
    logind.set_lid(True)
    assert logind.wait_for(lambda: logind.prop("LidClosed"), timeout=10)
    reply = lg.request({"Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1",
                        "IsProviderSessionEnd": True, "SessionEndReason": "Stop"})
    assert reply["Succeeded"], reply
    assert lg.wait_until(lambda: lg.json("suspend-history")["entries"])
    [entry] = lg.json("suspend-history")["entries"]
    assert entry["Succeeded"] is False
    assert "InteractiveAuthorizationRequired" in entry["Message"]
    assert "lidguard linux-permission install" in entry["Message"]
    status = lg.json("status")
    failure = status["lastSuspendFailure"]
    assert failure["message"] == entry["Message"] and failure["suspendMode"] == "Sleep", failure
    assert "Last suspend request failed" in lg.run("status", check=True).stdout
    assert logind.sleep_requests() == []
