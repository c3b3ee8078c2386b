"""The real-logind fixture itself: it boots, what it refuses is what logind 252 + polkitd refuse, a
"suspend" only writes the recorder's line, and a stopped instance leaves nothing on the host."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from ns_host import client_argv, popen_inside, run_inside
from real_logind import HIERARCHIES, TEST_USER, RealLogind, grant_rule

pytestmark = pytest.mark.xdist_group("reallogind-fixture")

def hold(instance: RealLogind, what: str, mode: str = "block", *, uid: int | None = None,
         who: str = "test-holder") -> dict[str, object]:
    """Holds an inhibitor inside (until the instance's reset); its first JSON line."""
    process = popen_inside(instance, client_argv("hold", what, mode, who), uid=uid, stdin=-1, stdout=-1, text=True)
    return json.loads(process.stdout.readline())


def test_boots_with_the_recipe_settings(real_logind_session):
    instance = real_logind_session
    print(f"[real logind boot {instance.boot_seconds:.3f} s]")
    assert instance.prop("HandleLidSwitch") == "suspend"
    assert instance.prop("InhibitDelayMaxUSec") == 3_000_000
    assert instance.prop("LidClosed") is False


def test_a_caller_outside_the_pid_namespace_cannot_inhibit(real_logind):
    from jeepney import DBusAddress, new_method_call
    from jeepney.wrappers import DBusErrorResponse, unwrap_msg

    address = DBusAddress("/org/freedesktop/login1", bus_name="org.freedesktop.login1",
                          interface="org.freedesktop.login1.Manager")
    message = new_method_call(address, "Inhibit", "ssss", ("idle", "outside", "test", "block"))
    with pytest.raises(DBusErrorResponse) as refused:
        unwrap_msg(real_logind._bus().send_and_get_reply(message, timeout=10))
    assert refused.value.name == "System.Error.EPROTO", refused.value


def test_unprivileged_user_without_a_rule_is_refused_like_logind_252(real_logind):
    assert hold(real_logind, "sleep", uid=TEST_USER)["error"] == "org.freedesktop.DBus.Error.AccessDenied"
    assert hold(real_logind, "handle-lid-switch", uid=TEST_USER)["error"] == "org.freedesktop.DBus.Error.AccessDenied"
    assert "held" in hold(real_logind, "idle", uid=TEST_USER)
    assert "held" in hold(real_logind, "sleep", "delay", uid=TEST_USER)
    can = json.loads(run_inside(real_logind, client_argv("can", "CanSuspend"), uid=TEST_USER).stdout)
    assert can == {"CanSuspend": "challenge"}
    refused = json.loads(run_inside(real_logind, client_argv("call", "Suspend"), uid=TEST_USER).stdout)
    assert refused["error"] == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    assert real_logind.sleep_requests() == []


def test_a_polkit_rule_grants_suspend_and_a_combined_inhibitor_is_checked_as_lid_switch(real_logind):
    real_logind.set_polkit_rules(grant_rule("lgtest", ["suspend", "inhibit-block-sleep", "inhibit-block-idle"]))
    assert "held" in hold(real_logind, "sleep", uid=TEST_USER)
    # logind 252 checks a "what" naming more than one kind against inhibit-handle-lid-switch.
    combined = hold(real_logind, "sleep:idle", uid=TEST_USER)
    assert combined["error"] == "org.freedesktop.DBus.Error.AccessDenied", combined
    # A caller's own uid's block never stops its own Suspend.
    assert json.loads(run_inside(real_logind, client_argv("call", "Suspend"), uid=TEST_USER).stdout) == {"ok": True}
    assert real_logind.wait_for(lambda: real_logind.sleep_requests() == [_line(real_logind, "systemd-suspend")])


def _line(instance: RealLogind, unit: str) -> str:
    lines = instance.sleep_requests()
    return lines[0] if lines and lines[0].endswith(f" {unit}.service") else f"<no {unit} line in {lines}>"


def test_lid_close_suspends_unless_a_lid_inhibitor_is_held(real_logind):
    assert "held" in hold(real_logind, "handle-lid-switch")
    real_logind.set_lid(True)
    assert real_logind.wait_for(lambda: real_logind.prop("LidClosed"), timeout=10)
    assert not real_logind.wait_for(lambda: real_logind.sleep_requests(), timeout=0.5)
    assert "handle-lid-switch is inhibited" in real_logind.log_text("logind.log")
    real_logind.reset()  # the holder ends and the lid opens
    real_logind.set_lid(True)
    assert real_logind.wait_for(lambda: real_logind.sleep_requests(), timeout=10)


def _mounts(instance: RealLogind) -> dict[str, str]:
    """Mount point -> "fstype options" as the instance sees them."""
    found = {}
    for line in Path(f"/proc/{instance.nspid}/mountinfo").read_text().splitlines():
        fields = line.split()
        separator = fields.index("-")
        found[fields[4]] = f"{fields[separator + 1]} {fields[5]}"
    return found


def _host_snapshot() -> dict[str, str]:
    """What a leak would change on the host: /run's tree, /etc's fixture-relevant files."""
    run = sorted(str(path) for path in Path("/run").rglob("*") if not path.is_symlink())
    digest = hashlib.sha256()
    for name in ("passwd", "group", "shadow", "gshadow"):
        digest.update(Path("/etc", name).read_bytes())
    etc = [str(p) for p in sorted(Path("/etc/systemd").rglob("*")) + sorted(Path("/etc/polkit-1").rglob("*"))]
    return {"run": "\n".join(run), "etc": digest.hexdigest() + "\n".join(etc)}


def test_a_suspend_only_writes_the_recorder_line_and_a_stopped_instance_leaves_nothing(fresh_logind):
    before = _host_snapshot()
    host_power_state = Path("/sys/power/state").read_text()
    began = time.monotonic()
    instance = fresh_logind()
    print(f"[fresh real logind boot {time.monotonic() - began:.3f} s]")
    mounts = _mounts(instance)
    assert mounts["/sys/power"].startswith("tmpfs"), mounts["/sys/power"]
    assert mounts["/"].split()[1].startswith("ro"), mounts["/"]
    assert mounts["/run"].startswith("tmpfs")
    for verb, unit in (("Suspend", "systemd-suspend"), ("Hibernate", "systemd-hibernate"),
                       ("PowerOff", "systemd-poweroff"), ("Reboot", "systemd-reboot")):
        count = len(instance.sleep_requests())
        assert json.loads(run_inside(instance, client_argv("call", verb)).stdout) == {"ok": True}
        assert instance.wait_for(lambda count=count: len(instance.sleep_requests()) > count, timeout=15), verb
        assert instance.sleep_requests()[-1].endswith(f" {unit}.service")
        if verb in ("Suspend", "Hibernate"):
            assert instance.wait_for(lambda: not instance.prop("PreparingForSleep"), timeout=15)
    # Still the same machine: nothing slept, nothing rebooted, /sys/power untouched.
    assert Path("/sys/power/state").read_text() == host_power_state
    nspid, folder, instance_id = instance.nspid, instance.folder, instance.id
    began = time.monotonic()
    assert instance.stop() == []
    print(f"[real logind stop {time.monotonic() - began:.3f} s]")
    assert not Path(f"/proc/{nspid}").exists() or "Z" in Path(f"/proc/{nspid}/stat").read_text().split()[2]
    assert not folder.exists()
    assert [h for h in HIERARCHIES if Path("/sys/fs/cgroup", h, instance_id).exists()] == []
    assert _host_snapshot() == before
    assert not os.path.exists("/run/mount/utab") or "utab" in before["run"]


def test_the_start_up_sweep_ends_an_instance_whose_pytest_process_is_gone(fresh_logind):
    from real_logind import sweep_stale

    instance = fresh_logind()
    (instance.folder / "owner").write_text(str(_dead_pid()))
    nspid = instance.nspid
    assert instance.id in sweep_stale()
    assert not instance.folder.exists()
    assert [h for h in HIERARCHIES if Path("/sys/fs/cgroup", h, instance.id).exists()] == []
    assert instance.wait_for(lambda: not Path(f"/proc/{nspid}").exists()
                             or "Z" in Path(f"/proc/{nspid}/stat").read_text().split()[2], timeout=10)


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid
