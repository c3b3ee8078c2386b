"""What a new user meets first: pipes, --version, readable errors, stopping the runtime, what `stop` and
`status` say (pending suspend, power source, a broken settings file), escaped session text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version

import pytest


def run_into_closed_pipe(lidguard, *args: str) -> subprocess.CompletedProcess[bytes]:
    """stdout is a pipe nobody reads any more, like `lidguard status | head -1` once head has exited."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "lidguard", *args], env=lidguard.env, stdout=write_end,
                              stderr=subprocess.PIPE, timeout=30)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("args", [("status",), ("help",), ("help", "settings"), ("status", "--json"),
                                  ("start", "--help"), ("--version",)])
def test_a_closed_pipe_ends_quietly(lidguard, args):
    result = run_into_closed_pipe(lidguard, *args)
    assert result.stderr == b""
    assert result.returncode == 0


def test_a_closed_pipe_after_start_ends_quietly_and_the_session_runs(lidguard):
    result = run_into_closed_pipe(lidguard, "start", "--provider", "claude", "--session", "s")
    assert result.stderr == b"" and result.returncode == 0
    assert lidguard.json("status")["activeSessionCount"] == 1


def test_head_of_status_and_help(lidguard):
    for command in ("lidguard status | head -1", "lidguard help | head -1"):
        python_bin = os.path.dirname(sys.executable)
        env = {**lidguard.env, "PATH": python_bin + os.pathsep + lidguard.env.get("PATH", "")}
        result = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, timeout=30)
        assert result.stderr == "", command
        assert len(result.stdout.splitlines()) == 1


@pytest.mark.parametrize("args", [("--version",), ("version",), ("--VERSION",)])
def test_version(lidguard, args):
    result = lidguard.run(*args)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == f"lidguard {version('lidguard')}\n"


def test_version_is_listed_and_rejects_extra_arguments(lidguard):
    assert "version" in lidguard.run("help").stdout
    result = lidguard.run("version", "now")
    assert result.returncode == 1 and result.stderr == "lidguard: Unexpected argument: now\n"
    detail = lidguard.run("version", "--help")
    assert detail.returncode == 0 and "usage: lidguard version" in detail.stdout


def test_a_required_compiled_module_that_cannot_load_is_one_readable_line(lidguard, tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'lidguard._native._proctree':\n"
        "            raise ImportError('blocked by the test')\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    env = {**lidguard.env, "PYTHONPATH": str(blocker), "LIDGUARD_REQUIRE_EXTENSIONS": "1"}
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "claude", "--parent-pid", "auto"],
                            env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "unexpected error" not in result.stderr
    assert result.stderr.startswith("lidguard: LIDGUARD_REQUIRE_EXTENSIONS is on")
    assert "_proctree" in result.stderr and result.stderr.count("\n") == 1


def test_a_bad_switch_value_is_one_readable_line(lidguard):
    env = {**lidguard.env, "LIDGUARD_NO_EXTENSIONS": "banana"}
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "claude", "--parent-pid", "auto"],
                            env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "unexpected error" not in result.stderr and "LIDGUARD_NO_EXTENSIONS" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("word", ["bogus", "--bogus", "x\x1b[2J"])
def test_an_unknown_command_is_one_short_line(lidguard, word):
    result = lidguard.run(word)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("lidguard: Unknown command: ")
    assert len(result.stderr) < 120 and "\x1b" not in result.stderr


# -- stopping the runtime ----------------------------------------------------------------------------
def test_stop_runtime_when_none_runs(lidguard):
    result = lidguard.run("stop-runtime")
    assert result.returncode == 0 and result.stdout == "LidGuard runtime is not running.\n"
    assert not lidguard.runtime_pids()


def test_stop_runtime_refuses_while_sessions_are_active_unless_forced(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    refused = lidguard.run("stop-runtime")
    assert refused.returncode == 1
    assert refused.stderr == ("lidguard: 1 active session(s) are still running; use --force to stop the runtime "
                              "anyway.\n")
    assert lidguard.runtime_pids()
    forced = lidguard.run("stop-runtime", "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout == "LidGuard runtime is stopping.\n"
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    assert lidguard.json("status")["runtimeRunning"] is False


def test_stop_runtime_without_sessions_and_a_new_start_after_it(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s", check=True)
    result = lidguard.run("stop-runtime")
    assert result.returncode == 0 and result.stdout == "LidGuard runtime is stopping.\n"
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    lidguard.run("start", "--provider", "claude", "--session", "t", check=True)
    assert lidguard.json("status")["activeSessionCount"] == 1


def test_stop_runtime_is_in_the_help(lidguard):
    summary = lidguard.run("help").stdout
    assert "stop-runtime" in summary
    detail = lidguard.run("help", "stop-runtime")
    assert detail.returncode == 0 and "--force" in detail.stdout


# -- what stop and status say ------------------------------------------------------------------------
def test_stop_says_a_suspend_was_scheduled(lidguard):
    lidguard.set_machine(lid="closed")
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "600", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    stopped = lidguard.run("stop", "--provider", "claude", "--session", "s", check=True)
    [line] = [line for line in stopped.stdout.splitlines() if line.startswith("Suspend scheduled:")]
    match = re.fullmatch(r"Suspend scheduled: Sleep at \d\d:\d\d:\d\d \(in (\d+) s\) because (.+)\.", line)
    assert match and 540 <= int(match.group(1)) <= 600, line
    assert match.group(2) == "the last active session completed"
    status = lidguard.run("status", check=True).stdout
    assert "Suspend scheduled: Sleep at " in status
    pending = lidguard.json("status")["pendingSuspend"]
    assert pending["mode"] == "Sleep" and pending["reason"] == "Completed" and pending["deadlineUtc"].endswith("Z")
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)  # cancels it
    assert lidguard.json("status")["pendingSuspend"] is None
    assert "Pending suspend: none" in lidguard.run("status", check=True).stdout


def test_session_text_is_escaped_in_human_output(lidguard):
    evil = "a\nb\x1b[31mred\x07\u202e"
    started = lidguard.run("start", "--provider", "claude", "--session", evil, "--cwd", "/tmp/x\ty", check=True)
    status = lidguard.run("status", check=True).stdout
    for output in (started.stdout, status):
        assert "\x1b" not in output and "\x07" not in output and "\u202e" not in output and "\t" not in output
        assert "\\x1b[31m" in output and "a\\nb" in output and "\\u202e" in output
    [line] = [line for line in status.splitlines() if line.startswith("- Claude:")]
    assert 'cwd="/tmp/x\\ty"' in line
    assert lidguard.json("status")["sessions"][0]["sessionIdentifier"] == evil  # JSON keeps the real value
    for command in ("mark-session-active", "stop"):
        other = lidguard.run(command, "--provider", "codex", "--session", evil)  # no such session
        assert "\x1b" not in other.stdout + other.stderr and "\n\x07" not in other.stdout + other.stderr


@pytest.mark.parametrize("running", [False, True])
def test_status_with_a_corrupt_settings_file_reports_and_carries_on(lidguard, running):
    if running:
        lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{broken")
    result = lidguard.run("status")
    assert result.returncode == 0, result.stderr
    assert f"Settings file error: The settings file {path} cannot be used: it is not valid JSON" in result.stdout
    assert ("LidGuard runtime is running." if running else "LidGuard runtime is not running.") in result.stdout
    assert f"Active sessions: {1 if running else 0}" in result.stdout
    assert "Settings:" in result.stdout
    status = lidguard.json("status")
    assert status["settingsError"].startswith(f"The settings file {path}")
    assert path.read_bytes() == b"{broken"


def test_status_with_an_unreadable_settings_file(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.mkdir(parents=True)  # unreadable even for root
    result = lidguard.run("status")
    assert result.returncode == 0, result.stderr
    assert f"Settings file error: The settings file {path} cannot be used: it is a directory." in result.stdout
    assert path.is_dir()


def test_status_reports_out_of_range_values_with_their_key(lidguard):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"SessionTimeoutMinutes": 0}))
    result = lidguard.run("status")
    assert result.returncode == 0, result.stderr
    assert "Settings problem: SessionTimeoutMinutes" in result.stdout
    assert any("SessionTimeoutMinutes" in problem for problem in lidguard.json("status")["settingsProblems"])


def test_status_does_not_create_or_rewrite_the_settings_file(lidguard):
    lidguard.run("status", check=True)
    assert not (lidguard.data_dir / "settings.json").exists()


def test_status_shows_the_power_source_when_the_platform_tells(lidguard):
    status = lidguard.json("status")
    assert status["powerSource"] is None
    assert "Power source:" not in lidguard.run("status", check=True).stdout
    lidguard.set_machine(powerSource={"onAc": False, "batteryPercent": 80, "batteryStatus": "Discharging"})
    for args in (("status",), ("start", "--provider", "claude", "--session", "s"), ("status",)):
        lidguard.run(*args, check=True)
        status = lidguard.json("status")
        assert status["powerSource"] == {"onAc": False, "batteryPercent": 80, "batteryStatus": "Discharging"}
        text = lidguard.run("status", check=True).stdout
        assert "Power source: battery, battery 80%, Discharging" in text.splitlines()


def test_a_hook_started_with_stdout_and_stderr_closed_still_protects(lidguard):
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "claude", "--session", "s"],
                            env=lidguard.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30,
                            preexec_fn=lambda: (os.close(1), os.close(2)))
    assert result.returncode == 0
    assert lidguard.json("status")["activeSessionCount"] == 1
