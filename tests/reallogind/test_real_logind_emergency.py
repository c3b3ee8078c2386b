"""Emergency Hibernation and its Sleep fallback through the real logind's refusals (unprivileged user,
HandleLidSwitch=ignore): Hibernate refused -> Sleep; both refused -> both recorded and protection back
for the running session; only what polkit allowed reaches the recorder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ns_host import popen_inside
from real_logind import TEST_USER, TEST_USER_NAME, grant_rule

from lidguard.platform.linux.permission import render_rule

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
    """Runs emergency_inside.py as the test user; closes the lid once its session started (lidguard's
    lid inhibitor held), then returns its final JSON line."""
    hot(lg)
    process = popen_inside(logind, [sys.executable, str(SCRIPT), str(wanted), *extra], uid=TEST_USER,
                           env=lg.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert json.loads(process.stdout.readline() or "{}").get("started"), process.stderr.read()[-3000:]
    logind.set_lid(True)  # closed, no external display: where Emergency Hibernation watches
    assert logind.wait_for(lambda: logind.prop("LidClosed"), timeout=10)
    try:
        stdout, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        logind.kill(process)
        raise
    assert process.returncode == 0, stderr[-3000:]
    return json.loads(stdout.splitlines()[-1])


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


def test_with_handle_lid_switch_suspend_the_emergency_hibernation_is_not_turned_into_a_suspend(
        fresh_logind, inside):
    # Releasing the lid inhibitor with the lid closed makes logind suspend by itself; before the
    # Hibernate request, that suspend would win over the hibernation.
    logind = fresh_logind(handle_lid_switch="suspend", holdoff_seconds=1)
    lg = inside(logind, uid=TEST_USER)
    logind.set_polkit_rules(render_rule(TEST_USER_NAME), name="49-lidguard.rules")
    logind.wait_out_holdoff()  # logind acts on a closed lid from now on unless an inhibitor holds it
    outcome = emergency(lg, logind, 1)
    [hibernate] = outcome["history"][:1]
    assert (hibernate["SuspendMode"], hibernate["Succeeded"]) == ("Hibernate", True), hibernate
    assert logind.wait_for(lambda: logind.sleep_requests())
    # The first thing logind did is the hibernation (the fake resume is instant, so with the lid still
    # closed logind suspends again once its hold-off is over: later lines are that).
    assert logind.sleep_requests()[0].split()[1] == "systemd-hibernate.service", logind.sleep_requests()
