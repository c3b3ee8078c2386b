"""--json on every read command the help footer promises it for (hook-status, hook-events, mcp-status,
settings with no options), and `settings --x` printing only what changed."""

from __future__ import annotations

import json


def test_hook_status_json(lidguard):
    (lidguard.home / ".claude").mkdir()
    lidguard.run("hook-install", "--provider", "claude", check=True)
    report = lidguard.json("hook-status")
    [claude] = report["providers"]
    assert claude["provider"] == "Claude" and claude["status"] == "Installed" and claude["installed"] is True
    assert claude["events"]["Stop"] == "Installed" and claude["configExists"] is True
    assert claude["commandCheck"][0].startswith("ok (")
    assert any(line.startswith("Skipping absent provider: Codex") for line in report["skipped"])


def test_hook_events_json(lidguard):
    (lidguard.data_dir).mkdir(parents=True, exist_ok=True)
    log = lidguard.data_dir / "codex-hook-events.log"
    log.write_text("2026-01-01T00:00:00.000000Z kind=received event=Stop session=s1 workingDirectory=/w\n")
    report = lidguard.json("hook-events", "--provider", "codex")
    assert report["events"] == [{"time": "2026-01-01T00:00:00.000000Z", "kind": "received", "event": "Stop",
                                 "session": "s1", "workingDirectory": "/w"}]
    assert lidguard.json("hook-events", "--provider", "claude")["events"] == []


def test_mcp_status_json(lidguard):
    report = lidguard.json("mcp-status", "--provider", "claude")
    [claude] = report["providers"]
    assert claude["provider"] == "Claude" and claude["installed"] is False and claude["transport"] == ""
    assert claude["message"] == "Not installed. Run: lidguard mcp-install --provider claude"


def test_settings_json_and_changes_only(lidguard):
    report = lidguard.json("settings")
    assert report["settings"]["PostStopSuspendDelaySeconds"] == 10 and report["problems"] == []
    refused = lidguard.run("settings", "--json", "--suspend-mode", "hibernate")
    assert refused.returncode == 1
    assert refused.stderr == "lidguard: The --json option shows the settings; it cannot be combined with changes.\n"
    changed = lidguard.run("settings", "--post-stop-suspend-delay-seconds", "5", check=True).stdout.splitlines()
    assert changed[1:] == ["Changed:", "  Post-stop suspend delay seconds: 10 -> 5",
                           "Runtime is not running; saved settings will be used on the next start."]
    same = lidguard.run("settings", "--post-stop-suspend-delay-seconds", "5", check=True).stdout
    assert "No setting changed" in same and "Suspend mode" not in same
    assert json.loads(lidguard.run("settings", "--json", check=True).stdout)["settings"][
        "PostStopSuspendDelaySeconds"] == 5
