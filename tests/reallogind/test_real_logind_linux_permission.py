"""``lidguard linux-permission install/remove`` against the real polkitd: the project's own rule, placed
in the instance's rules folder, grants the unprivileged user's Suspend and inhibitors; removed, they are
refused again; doctor's permission line agrees each time."""

from __future__ import annotations

import json

import pytest
from ns_host import client_argv, popen_inside, run_inside
from real_logind import TEST_USER, TEST_USER_NAME

pytestmark = pytest.mark.xdist_group("reallogind-linux-permission")
DENIED = "org.freedesktop.DBus.Error.AccessDenied"


def hold(instance, what: str) -> dict:
    process = popen_inside(instance, client_argv("hold", what, "block"), uid=TEST_USER, stdin=-1, stdout=-1,
                           text=True)
    answer = json.loads(process.stdout.readline())
    instance.kill(process)
    return answer


def can_suspend(instance) -> str:
    return json.loads(run_inside(instance, client_argv("can", "CanSuspend"), uid=TEST_USER).stdout)["CanSuspend"]


def permission_line(lg) -> str:
    doctor = lg.run("doctor").stdout
    return next(line for line in doctor.splitlines() if "polkit rule" in line)


def test_install_grants_and_remove_refuses_again(lidguard_unprivileged, real_logind):
    lg, logind = lidguard_unprivileged, real_logind
    assert "not installed" in permission_line(lg)
    assert can_suspend(logind) == "challenge"
    assert hold(logind, "sleep")["error"] == DENIED

    root_env = {**lg.env, "SUDO_USER": TEST_USER_NAME}
    installed = []
    logind.wait_for_polkit_reload(lambda: installed.append(
        run_inside(logind, [*lg_command(), "linux-permission", "install"], env=root_env)))
    assert installed[0].returncode == 0, installed[0].stderr
    assert "installed for current user" in permission_line(lg)
    assert can_suspend(logind) == "yes"
    for kind in ("sleep", "idle", "handle-lid-switch"):
        assert "held" in hold(logind, kind), kind
    check = lg.run("linux-permission", "check")
    assert "inhibitor acquire/release: ok" in check.stdout, check.stdout
    assert json.loads(run_inside(logind, client_argv("call", "Suspend"), uid=TEST_USER).stdout) == {"ok": True}
    assert logind.wait_for(lambda: [line.split()[1] for line in logind.sleep_requests()] == ["systemd-suspend.service"])

    removed = []
    logind.wait_for_polkit_reload(lambda: removed.append(
        run_inside(logind, [*lg_command(), "linux-permission", "remove"], env=root_env)))
    assert removed[0].returncode == 0, removed[0].stderr
    assert "not installed" in permission_line(lg)
    assert can_suspend(logind) == "challenge"
    assert hold(logind, "sleep")["error"] == DENIED
    assert hold(logind, "handle-lid-switch")["error"] == DENIED


def lg_command() -> list[str]:
    import sys

    return [sys.executable, "-m", "lidguard"]
