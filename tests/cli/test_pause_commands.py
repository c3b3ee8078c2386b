"""pause, resume and emergency-restore as real processes on the fake platform (issue 19 item 4): a pause
releases protection and the lid policy and holds the suspend back while sessions stay; resume brings
protection back; emergency-restore works through a runtime, with no runtime (after a crash) and with a
broken settings file."""

from __future__ import annotations

import json
import os

import pytest

from lidguard.ipc.limits import SESSION_JOURNAL_FILE_NAME


def _names(lidguard) -> list[str]:
    return [action["action"] for action in lidguard.actions()]


def _start(lidguard, session: str) -> None:
    lidguard.run("start", "--provider", "claude", "--session", session, check=True)


def test_pause_and_resume_through_the_runtime(lidguard):
    lidguard.set_machine(lid="closed")
    _start(lidguard, "p1")
    assert _names(lidguard).count("protection-applied") == 1
    paused = lidguard.run("pause", "--for", "2h", check=True)
    assert "Paused for 2 h" in paused.stdout and "Paused until " in paused.stdout
    status = lidguard.json("status")
    assert status["paused"]["untilUtc"] is not None
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["p1"]
    assert any(reason.startswith("lidguard is paused") for reason in status["protectionHeldBack"])
    assert "Paused until " in lidguard.run("status", check=True).stdout
    names = _names(lidguard)
    assert names.count("protection-released") == 1 and "lid-policy-restored" in names
    lidguard.run("stop", "--provider", "claude", "--session", "p1", check=True)
    resumed = lidguard.run("resume", check=True)
    assert resumed.stdout.startswith("Resumed")
    assert lidguard.json("status")["paused"] is None
    assert "suspend-requested" not in _names(lidguard)  # the stop while paused scheduled nothing
    _start(lidguard, "p2")
    assert _names(lidguard).count("protection-applied") == 2
    lidguard.run("stop", "--provider", "claude", "--session", "p2", check=True)


def test_pause_without_a_runtime_starts_a_paused_one_and_resume_without_one_is_fine(lidguard):
    assert lidguard.run("resume", check=True).stdout.strip() == "LidGuard runtime is not running: nothing is paused."
    lidguard.run("pause", check=True)
    assert lidguard.json("status")["paused"] == {"untilUtc": None}
    _start(lidguard, "later")  # a hook while paused: tracked, never protected
    assert "protection-applied" not in _names(lidguard)
    lidguard.run("resume", check=True)
    assert lidguard.wait_until(lambda: "protection-applied" in _names(lidguard))
    lidguard.run("stop-runtime", "--force", check=True)


@pytest.mark.parametrize("value", ["0", "8d", "abc", "30", "1.5h", "-1m", "9" * 50, "\udcff"])
def test_pause_refuses_a_bad_duration_in_one_line(lidguard, value):
    result = lidguard.run("pause", f"--for={value}")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "lidguard: The for option must be a duration such as 30m, 2h or 1h30m (from 1s to 7d)."]
    assert not lidguard.runtime_pids()


def test_emergency_restore_through_a_runtime_clears_sessions_restores_the_lid_and_stays_paused(lidguard):
    lidguard.set_machine(lid="closed")
    _start(lidguard, "e1")
    _start(lidguard, "e2")
    result = lidguard.run("emergency-restore", check=True)
    assert "cleared 2 session(s)" in result.stdout and "Paused until `lidguard resume`" in result.stdout
    status = lidguard.json("status")
    assert status["sessions"] == [] and status["paused"] == {"untilUtc": None}
    assert not (lidguard.data_dir / "pending-lid-action-backup.json").exists()
    names = _names(lidguard)
    assert "lid-policy-restored" in names and names.count("protection-released") == 1
    assert "suspend-requested" not in names
    lidguard.run("stop-runtime", "--force", check=True)


@pytest.mark.parametrize("settings_text", [None, "{not json", '{"SuspendMode": 7, "PowerPolicy": []}', "dir"])
def test_emergency_restore_with_no_runtime_after_a_crash_and_any_settings_file(lidguard, settings_text):
    lidguard.env["LIDGUARD_WATCHDOG"] = "off"  # with a watchdog, it restores at once after the kill (issue 32.4)
    lidguard.set_machine(lid="closed")
    _start(lidguard, "crashed")
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    journal = lidguard.data_dir / SESSION_JOURNAL_FILE_NAME
    assert lidguard.wait_until(lambda: journal.exists() and journal.stat().st_size > 0)
    lidguard.kill_runtimes()
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=20)
    assert backup.exists()
    settings = lidguard.data_dir / "settings.json"
    if settings_text == "dir":
        settings.unlink(missing_ok=True)
        settings.mkdir()
    elif settings_text is not None:
        settings.write_text(settings_text)
    result = lidguard.run("emergency-restore")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "Emergency restore: LidGuard runtime is not running (nothing to pause).",
        "Cleared the session journal (1 record(s)).",
        "Restored the lid policy from the pending backup."]
    assert not backup.exists() and journal.read_bytes() == b""
    assert oct(journal.stat().st_mode & 0o777) == "0o600"
    restored = [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
    assert restored and restored[-1]["pid"] != os.getpid()
    assert not lidguard.runtime_pids()  # it started nothing
    # A hook of the crashed session does not bring it back: the journal is empty.
    lidguard.run("mark-session-active", "--provider", "claude", "--session", "crashed")
    assert not lidguard.runtime_pids()
    again = lidguard.run("emergency-restore", check=True)
    assert "No pending lid-policy backup." in again.stdout


def test_emergency_restore_with_nothing_to_restore(lidguard):
    result = lidguard.run("emergency-restore", check=True)
    assert result.stdout.splitlines() == [
        "Emergency restore: LidGuard runtime is not running (nothing to pause).",
        "No session journal: no sessions to clear.",
        "No pending lid-policy backup."]
    assert json.loads(lidguard.run("status", "--json", check=True).stdout)["runtimeRunning"] is False


def test_stop_runtime_says_plainly_that_it_ends_a_pause(lidguard):
    lidguard.run("pause", check=True)
    stopped = lidguard.run("stop-runtime", check=True)
    assert "This ends the pause" in stopped.stdout
    lidguard.run("pause", check=True)
    lidguard.run("resume", check=True)
    assert "pause" not in lidguard.run("stop-runtime", check=True).stdout
