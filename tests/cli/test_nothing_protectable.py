"""With nothing protectable here (issue 33.6): a hook's start fails (no logind, as in a container), the
hook exits 0, and ``status`` says why - doctor's verdict and the last failed start, readable - and the
runtime whose every start failed exits soon instead of idling for the cleanup delay (10 minutes).
Real processes on the Linux backend with no system bus."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from lidguard import switches
from lidguard.platform.host import host_os_name

pytestmark = pytest.mark.skipif(host_os_name() != "linux", reason="the Linux backend without a system bus")

NO_LOGIND = "no systemd-logind here (a container, or an init without logind?)"


def _no_logind(lidguard: Any, **extra: str) -> dict[str, str]:
    sysfs = lidguard.home / "sysfs"
    sysfs.mkdir(exist_ok=True)
    return {**lidguard.env, "LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(sysfs),
            "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={lidguard.home / 'no-bus'}", "LIDGUARD_WATCHDOG": "off", **extra}


def _run(env: dict[str, str], *args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard", *args], env=env, text=True, capture_output=True,
                          input=input_text, timeout=60)


def test_status_says_why_nothing_is_protected_and_the_failed_runtime_exits_soon(lidguard: Any,
                                                                                load_allowance: Any) -> None:
    env = _no_logind(lidguard, LIDGUARD_FAILED_START_EXIT_SECONDS="5")
    prompt = {"session_id": "c1", "cwd": str(lidguard.home), "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    hook = _run(env, "claude-hook", input_text=json.dumps(prompt))
    assert (hook.returncode, hook.stdout) == (0, ""), hook.stderr
    status = _run(env, "status")
    assert status.returncode == 0, status  # running, or (a loaded machine) already gone: the same lines
    lines = status.stdout.splitlines()
    assert "Active sessions: 0" in lines
    assert ("Verdict: cannot protect anything on this machine: keeping it awake is not possible: " + NO_LOGIND) in lines
    [failed] = [line for line in lines if line.startswith("Last failed start (Claude:c1) at ")]
    assert failed.endswith(f": power is unsupported: {NO_LOGIND}"), failed
    assert "System.Error" not in status.stdout
    report = json.loads(_run(env, "status", "--json").stdout)
    assert report["lastStartFailure"]["reason"] == f"power is unsupported: {NO_LOGIND}"
    assert report["verdict"].startswith("cannot protect anything")
    # Every start failed: the runtime exits after LIDGUARD_FAILED_START_EXIT_SECONDS, not the 10-minute delay.
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=30 + load_allowance())
    after = _run(env, "status")
    assert "LidGuard runtime is not running." in after.stdout and failed in after.stdout.splitlines(), after.stdout
    assert "server-runtime-exit-after-failed-starts" in (lidguard.data_dir / "session-execution.log").read_text()


def test_a_successful_start_clears_the_last_failure(lidguard: Any) -> None:
    env = _no_logind(lidguard)
    assert _run(env, "start", "--provider", "claude", "--session", "c1").returncode == 1  # runtime left up
    assert (lidguard.data_dir / "last-start-failure.json").exists() or lidguard.wait_until(
        lambda: (lidguard.data_dir / "last-start-failure.json").exists())
    _run(env, "stop-runtime", "--force")
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    lidguard.run("start", "--provider", "claude", "--session", "f1", check=True)  # the fake platform protects
    assert lidguard.wait_until(lambda: not (lidguard.data_dir / "last-start-failure.json").exists())
    assert "Last failed start" not in lidguard.run("status", check=True).stdout


def test_the_early_exit_waits_30_seconds_and_only_tests_may_shorten_it() -> None:
    assert switches.FAILED_START_EXIT_SECONDS == 30.0
    assert switches.failed_start_exit_seconds({"LIDGUARD_FAILED_START_EXIT_SECONDS": "1"}) == 30.0
    assert switches.failed_start_exit_seconds({"LIDGUARD_FAILED_START_EXIT_SECONDS": "1",
                                               "LIDGUARD_TEST_MODE": "1"}) == 1.0


def test_doctor_says_there_is_no_logind_in_plain_words(lidguard: Any) -> None:
    for backend in ({}, {"LIDGUARD_LOGIND_BINDING": "off"}):
        result = _run(_no_logind(lidguard, **backend), "doctor")
        assert f"  power: unavailable: {NO_LOGIND}" in result.stdout, result.stdout
        assert result.stdout.splitlines()[-1] == ("Verdict: cannot protect anything on this machine: keeping it "
                                                  f"awake is not possible: {NO_LOGIND}")
        assert "System.Error" not in result.stdout and "ENOENT" not in result.stdout
