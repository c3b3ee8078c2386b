"""Emergency Hibernation and its Sleep fallback through the real logind's refusals (unprivileged user,
HandleLidSwitch=ignore): Hibernate refused -> Sleep; both refused -> both recorded and protection back
for the running session; only what polkit allowed reaches the recorder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ns_host import run_inside
from real_logind import TEST_USER, TEST_USER_NAME, grant_rule

pytestmark = pytest.mark.xdist_group("reallogind-emergency")
SCRIPT = Path(__file__).with_name("emergency_inside.py")
INHIBITORS = ["inhibit-block-sleep", "inhibit-block-idle", "inhibit-handle-lid-switch"]


def hot(lg) -> None:
    for index, value in enumerate((94000, 96000)):
        zone = lg.machine_root / "sys" / "class" / "thermal" / f"thermal_zone{index}"
        zone.mkdir(parents=True, exist_ok=True)
        (zone / "type").write_text("x86_pkg_temp\n")
        (zone / "temp").write_text(f"{value}\n")


def emergency(lg, logind, wanted: int, *extra: str) -> dict:
    hot(lg)
    logind.set_lid(True)  # closed, no external display: where Emergency Hibernation watches
    assert logind.wait_for(lambda: logind.prop("LidClosed"), timeout=10)
    result = run_inside(logind, [sys.executable, str(SCRIPT), str(wanted), *extra], uid=TEST_USER, env=lg.env,
                        timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_hibernate_refused_falls_back_to_a_real_sleep(fresh_logind, inside):
    logind = fresh_logind(handle_lid_switch="ignore")
    lg = inside(logind, uid=TEST_USER)
    logind.set_polkit_rules(grant_rule(TEST_USER_NAME, [*INHIBITORS, "suspend"]))
    outcome = emergency(lg, logind, 2)
    sleep, hibernate = outcome["history"][:2]
    assert hibernate["SuspendMode"] == "Hibernate" and hibernate["Succeeded"] is False
    assert "InteractiveAuthorizationRequired" in hibernate["Message"]
    assert sleep["SuspendMode"] == "Sleep" and sleep["Succeeded"] is True
    assert sleep["Reason"] == hibernate["Reason"] == "EmergencyHibernation"
    assert logind.wait_for(lambda: logind.sleep_requests())
    assert [line.split()[1] for line in logind.sleep_requests()] == ["systemd-suspend.service"]


def test_both_refused_are_recorded_and_protection_comes_back(fresh_logind, inside):
    logind = fresh_logind(handle_lid_switch="ignore")
    lg = inside(logind, uid=TEST_USER)
    logind.set_polkit_rules(grant_rule(TEST_USER_NAME, INHIBITORS))
    outcome = emergency(lg, logind, 2, "reapplied")
    sleep, hibernate = outcome["history"][:2]
    assert (hibernate["SuspendMode"], hibernate["Succeeded"]) == ("Hibernate", False)
    assert (sleep["SuspendMode"], sleep["Succeeded"]) == ("Sleep", False)
    assert "lidguard linux-permission install" in sleep["Message"]
    assert outcome["held"] == ["handle-lid-switch", "idle", "sleep"]
    assert logind.sleep_requests() == []
