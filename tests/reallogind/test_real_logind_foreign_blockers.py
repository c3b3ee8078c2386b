"""Another program's sleep blocker against a real logind 252 + polkitd (issue 34.3's acceptance).

Another uid (lgother, 4243) holds a ``sleep`` block inhibitor; lidguard runs as the unprivileged user
lgtest (4242) with its own polkit rule (``render_rule``, as ``linux-permission install`` writes it) and
HandleLidSwitch=ignore. Its session stops with the lid closed: before this work the Suspend was refused
(InteractiveAuthorizationRequired) and forgotten. Now the blocker is named in status and suspend-history,
the emergency thermal monitor runs, and exactly one suspend is recorded within seconds of the blocker's
release (logind's BlockInhibited PropertiesChanged wakes the wait). With SuspendIgnoresOtherBlockers on
and the rule granting suspend-ignore-inhibit, logind lets the suspend through at once.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pytest
from ns_host import client_argv, popen_inside
from real_logind import OTHER_USER, OTHER_USER_NAME, TEST_USER, TEST_USER_NAME, RealLogind, grant_rule

from lidguard.platform.linux.permission import render_rule

pytestmark = pytest.mark.xdist_group("reallogind-blockers")

STOP = {"Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1", "IsProviderSessionEnd": True,
        "SessionEndReason": "Stop", "LastAssistantMessage": "Done."}


def _uptime() -> float:
    with open("/proc/uptime", encoding="ascii") as uptime:
        return float(uptime.read().split()[0])


def _rules(*, ignore_inhibit: bool) -> str:
    """lidguard's own rule for lgtest, and the other user's right to hold a sleep block."""
    return render_rule(TEST_USER_NAME, ignore_inhibit=ignore_inhibit) + grant_rule(OTHER_USER_NAME,
                                                                                   ["inhibit-block-sleep"])


def _hold_sleep(instance: RealLogind) -> subprocess.Popen[Any]:
    holder = popen_inside(instance, client_argv("hold", "sleep", "block", "backup-tool"), uid=OTHER_USER,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    first = json.loads(holder.stdout.readline())
    assert "held" in first, first
    return holder


def _stop_with_the_lid_closed(instance: RealLogind, lg: Any) -> None:
    lg.run("settings", "--post-stop-suspend-delay-seconds", "1", check=True)
    lg.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert lg.wait_until(lambda: any(entry[0].startswith("sleep") for entry in lg.ours()))
    instance.set_lid(True)
    assert instance.wait_for(lambda: instance.prop("LidClosed"), timeout=10)
    reply = lg.request(STOP)
    assert reply["Succeeded"], reply


def test_a_foreign_sleep_block_is_named_and_one_suspend_follows_its_release(fresh_logind, inside):
    logind = fresh_logind(handle_lid_switch="ignore")
    logind.set_polkit_rules(_rules(ignore_inhibit=False))
    lg = inside(logind, uid=TEST_USER)
    holder = _hold_sleep(logind)
    _stop_with_the_lid_closed(logind, lg)
    assert lg.wait_until(lambda: lg.json("suspend-history")["entries"], timeout=30)
    [entry] = lg.json("suspend-history")["entries"]
    assert entry["Succeeded"] is False and entry["EventName"] == "stop-suspend-blocked", entry
    [blocker] = entry["Blockers"]
    assert blocker["Who"] == "backup-tool" and blocker["Uid"] == OTHER_USER and blocker["What"] == "sleep"
    assert blocker["Why"] == "held by a test" and isinstance(blocker["Pid"], int) and blocker["Pid"] > 1
    status = lg.json("status")
    assert status["suspendBlocked"]["waiting"] is True
    assert [b["who"] for b in status["suspendBlocked"]["blockers"]] == ["backup-tool"]
    assert status["suspendBlocked"]["blockers"][0]["uid"] == OTHER_USER
    assert status["thermalMonitorRunning"] is True
    text = lg.run("status", check=True).stdout
    assert "Suspend blocked by: backup-tool (held by a test)" in text and f"uid {OTHER_USER}" in text
    assert "Emergency thermal monitor: running" in text
    # Still blocked a while later: nothing recorded, nothing asked of logind that it would refuse.
    assert not logind.wait_for(lambda: logind.sleep_requests(), timeout=2.0)
    released = _uptime()
    logind.kill(holder)
    assert logind.wait_for(lambda: logind.sleep_requests(), timeout=30)
    [line] = logind.sleep_requests()
    latency = float(line.split()[0]) - released
    print(f"[suspend recorded {latency:.3f} s after the blocker's release]")
    assert line.split()[1] == "systemd-suspend.service" and latency < 5.0
    assert not logind.wait_for(lambda: len(logind.sleep_requests()) > 1, timeout=3.0)  # exactly one
    newest = lg.json("suspend-history")["entries"][0]
    assert newest["Succeeded"] is True and "Blockers" not in newest, newest
    assert lg.json("status")["suspendBlocked"] is None


def test_suspend_ignores_other_blockers_with_the_ignore_inhibit_grant_suspends_at_once(fresh_logind, inside):
    logind = fresh_logind(handle_lid_switch="ignore")
    logind.set_polkit_rules(_rules(ignore_inhibit=True))
    lg = inside(logind, uid=TEST_USER)
    lg.run("settings", "--suspend-ignores-other-blockers", "true", check=True)
    holder = _hold_sleep(logind)
    began = time.monotonic()
    _stop_with_the_lid_closed(logind, lg)
    assert logind.wait_for(lambda: logind.sleep_requests(), timeout=30), logind.log_tail()
    assert holder.poll() is None  # the blocker is still held: logind let lidguard through it
    assert [line.split()[1] for line in logind.sleep_requests()] == ["systemd-suspend.service"]
    [entry] = lg.json("suspend-history")["entries"]
    assert entry["Succeeded"] is True, entry
    assert time.monotonic() - began < 30


def test_status_and_doctor_name_an_agents_own_block_inhibitor(fresh_logind, inside):
    """Issue 35.5: the other user's ``sleep`` block inhibitor with who="Qwen Code" (what Qwen Code 0.24's
    ``systemd-inhibit --what=sleep --who="Qwen Code" --mode=block`` holds while it streams or runs a tool) is
    named as the agent's by status and doctor, with what lidguard's suspend does about it."""
    logind = fresh_logind(handle_lid_switch="ignore")
    logind.set_polkit_rules(_rules(ignore_inhibit=False))
    lg = inside(logind, uid=TEST_USER)
    holder = popen_inside(logind, client_argv("hold", "sleep", "block", "Qwen Code"), uid=OTHER_USER,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    first = json.loads(holder.stdout.readline())
    assert "held" in first, first
    try:
        [held] = lg.json("status")["agentKeepAwake"]
        assert (held["agent"], held["who"], held["what"], held["mode"]) == ("Qwen Code", "Qwen Code", "sleep",
                                                                            "block"), held
        line = (f"Qwen Code (pid {held['pid']}) holds a sleep block inhibitor: while it holds it after its "
                "session ends, lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)")
        assert f"Agent keep-awake: {line}" in lg.run("status", check=True).stdout.splitlines()
        assert f"  Holding now: {line}" in lg.run("doctor").stdout.splitlines()
    finally:
        logind.kill(holder)
    assert lg.wait_until(lambda: lg.json("status")["agentKeepAwake"] == [], timeout=30)
