"""Issue 6: ``run-server`` started directly survives a bad settings file and a pending lid backup."""

from __future__ import annotations

import json


def test_run_server_starts_on_an_invalid_settings_file(lidguard, start_runtime):
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    settings = lidguard.data_dir / "settings.json"
    settings.write_text("{ this is not json")
    runtime = start_runtime()
    runtime.wait_ready()
    runtime.start_session("s1")
    runtime.assert_serving(["s1"])
    assert settings.read_text() == "{ this is not json", "the runtime never rewrites a bad file"
    events = [json.loads(line)["EventName"] for line in (lidguard.data_dir / "session-execution.log").open()]
    assert "settings-load-failed" in events


def test_run_server_starts_with_a_pending_lid_backup_and_restores_it(lidguard, start_runtime):
    # The watchdog would restore the backup after the kill, racing the copy written back below (32.4).
    lidguard.env["LIDGUARD_WATCHDOG"] = "off"
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    assert backup.exists()
    saved = backup.read_bytes()
    lidguard.kill_runtimes()
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    backup.write_bytes(saved)
    # No session to bring back (the journal would restore s1 and protect it again, lid policy included).
    # (the journal is written up to 50 ms after the start, BATCH_SECONDS: a runtime killed sooner left none)
    (lidguard.data_dir / "session-journal.jsonl").unlink(missing_ok=True)
    runtime = start_runtime()
    runtime.wait_ready()
    assert not backup.exists()
    runtime.start_session("s2")
    runtime.assert_serving(["s2"])
    events = [json.loads(line)["EventName"] for line in (lidguard.data_dir / "session-execution.log").open()]
    assert "lid-action-restored-from-pending-backup" in events

