"""A demo never talks to real use (issue 33.1): a client on the fake platform and a runtime on a real one
(or the reverse) refuse each other, naming both; nothing is applied. Real processes: a runtime of one
platform, CLI commands and hooks of the other (both in test mode, so they share one data folder)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest


def _linux_env(lidguard: Any) -> dict[str, str]:
    """A real-platform (Linux backend) client or runtime of this test: no bus, an empty /sys."""
    sysfs = lidguard.home / "sysfs"
    sysfs.mkdir(exist_ok=True)
    return {**lidguard.env, "LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(sysfs),
            "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={lidguard.home / 'no-bus'}", "LIDGUARD_WATCHDOG": "off"}


def _run(env: dict[str, str], *args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard", *args], env=env, text=True, capture_output=True,
                          input=input_text, timeout=60)


@pytest.fixture
def real_runtime(lidguard: Any) -> Iterator[dict[str, str]]:
    """A runtime on the Linux backend; yields the environment of its own (real) clients."""
    env = _linux_env(lidguard)
    process = subprocess.Popen([sys.executable, "-m", "lidguard", "run-server"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # bounded by the runtime: the readiness line or its startup failure
        assert "runtime ready" in line, line
        yield env
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _one_refusal(result: subprocess.CompletedProcess[str], runtime: str, client: str) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lidguard: Refused: "), result.stderr
    assert runtime in lines[0] and client in lines[0], lines[0]
    return lines[0]


def test_a_fake_client_is_refused_by_a_real_runtime_naming_both(lidguard: Any, real_runtime: dict[str, str]) -> None:
    real, fake = real_runtime, lidguard.env
    for command in (("status",), ("status", "--json"), ("start", "--provider", "claude", "--session", "demo"),
                    ("stop-runtime",)):
        _one_refusal(_run(fake, *command), "the real linux platform", "fake platform (LIDGUARD_PLATFORM=fake)")
    status = json.loads(_run(real, "status", "--json").stdout)
    assert status["sessions"] == [] and status["runtimePlatform"] == {"name": "linux", "use": "test"}
    doctor = _run(fake, "doctor").stdout
    assert "Runtime: Refused: the running LidGuard runtime uses the real linux platform" in doctor, doctor


def test_a_fake_hook_is_logged_and_applies_nothing_on_a_real_runtime(lidguard: Any,
                                                                     real_runtime: dict[str, str]) -> None:
    prompt = {"session_id": "h1", "cwd": str(lidguard.home), "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    result = _run(lidguard.env, "claude-hook", input_text=json.dumps(prompt))
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert "Refused: the running LidGuard runtime uses the real linux platform" in log, log
    assert json.loads(_run(real_runtime, "status", "--json").stdout)["sessions"] == []


def test_a_real_client_is_refused_by_the_demo_runtime_and_changes_nothing(lidguard: Any) -> None:
    lidguard.run("start", "--provider", "claude", "--session", "demo-1", check=True)  # the fake runtime
    real = _linux_env(lidguard)
    refusal = _one_refusal(_run(real, "status"), "fake platform (protects nothing)", "the real linux platform")
    assert "LIDGUARD_PLATFORM=fake lidguard stop-runtime" in refusal
    _one_refusal(_run(real, "remove-session", "--provider", "claude", "--session", "demo-1"),
                 "fake platform", "the real linux platform")
    _one_refusal(_run(real, "stop-runtime"), "fake platform", "the real linux platform")
    stop = {"session_id": "demo-1", "cwd": str(lidguard.home), "hook_event_name": "SessionEnd", "reason": "exit"}
    result = _run(real, "claude-hook", input_text=json.dumps(stop))
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    assert "Refused: the running LidGuard runtime uses the test suite's fake platform" in \
        (lidguard.data_dir / "claude-hook-events.log").read_text()
    status = lidguard.json("status")
    assert [session["sessionIdentifier"] for session in status["sessions"]] == ["demo-1"], "nothing was applied"
    assert status["runtimePlatform"] == {"name": "fake", "use": "test"}
    assert "Runtime platform: fake (test)" in lidguard.run("status", check=True).stdout
    assert "Runtime: running on platform fake (test)" in lidguard.run("doctor").stdout


def test_status_watch_of_a_fake_client_ends_with_the_refusal(lidguard: Any, real_runtime: dict[str, str],
                                                             load_allowance: Any) -> None:
    began = time.monotonic()
    result = _run(lidguard.env, "status", "--watch")
    _one_refusal(result, "the real linux platform", "fake platform")
    assert time.monotonic() - began < 10 + load_allowance()
