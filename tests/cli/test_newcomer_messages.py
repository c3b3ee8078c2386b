"""Messages a newcomer meets on the first start: the default session id shown once, a --parent-pid that
names no process refused, and `--provider custom --parent-pid auto` watching the script that ran it."""

from __future__ import annotations

import subprocess
import sys


def test_a_start_without_session_shows_the_provider_once(lidguard, tmp_path):
    result = subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "claude"], env=lidguard.env,
                            cwd=tmp_path, text=True, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Started Claude:{tmp_path}. No watched process was resolved; a stop hook is required."
    assert f"- Claude:{tmp_path} process=none" in result.stdout and "Claude:Claude:" not in result.stdout


def test_a_parent_pid_that_names_no_process_is_refused(lidguard):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    result = lidguard.run("start", "--provider", "codex", "--session", "s", "--parent-pid", str(gone.pid))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"lidguard: No process {gone.pid} is running: --parent-pid names a running process "
                             "whose exit ends the session (or 'auto').\n")


def test_custom_auto_watches_the_script_that_ran_lidguard_and_says_so_in_plain_words(lidguard):
    script = (f"{sys.executable} -m lidguard start --provider custom --session job --parent-pid auto\n"
              "echo script=$$\n")
    result = subprocess.run(["/bin/sh", "-c", script], env=lidguard.env, text=True, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    shell = int(result.stdout.rsplit("script=", 1)[1])
    assert f"Started Custom:job. Watching process {shell}." in result.stdout
    assert (f"The session ends when process {shell} (sh) exits, or with "
            "`lidguard stop --provider custom --session job`.") in result.stdout
    # The script has exited: the runtime ends the session on its own.
    assert lidguard.wait_until(lambda: lidguard.json("status")["sessions"] == [], timeout=30)


def test_run_server_while_one_runs_says_so(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    result = lidguard.run("run-server", timeout=60)
    assert result.returncode == 0
    assert result.stdout == "LidGuard runtime is already running for this user; this run-server exits.\n"
    assert len(lidguard.runtime_pids()) == 1


def test_status_says_a_pending_suspend_will_be_skipped_once_the_lid_is_open(lidguard):
    lidguard.set_machine(lid="closed")
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "600", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s", check=True)
    assert "will be skipped" not in lidguard.run("status", check=True).stdout
    assert lidguard.json("status")["pendingSuspend"]["skippedBecauseLidOpen"] is False
    lidguard.set_machine(lid="open")
    [line] = [line for line in lidguard.run("status", check=True).stdout.splitlines()
              if line.startswith("Suspend scheduled:")]
    assert line.endswith("because the last active session completed. The lid is open now, so it will be "
                         "skipped unless the lid is closed again before then."), line
    assert lidguard.json("status")["pendingSuspend"]["skippedBecauseLidOpen"] is True
