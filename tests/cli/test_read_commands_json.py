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
    assert report["settings"]["postStopSuspendDelaySeconds"] == 10 and report["problems"] == []
    refused = lidguard.run("settings", "--json", "--suspend-mode", "hibernate")
    assert refused.returncode == 1
    assert refused.stderr == "lidguard: The --json option shows the settings; it cannot be combined with changes.\n"
    changed = lidguard.run("settings", "--post-stop-suspend-delay-seconds", "5", check=True).stdout.splitlines()
    assert changed[1:] == ["Changed:", "  Post-stop suspend delay seconds: 10 -> 5",
                           "Runtime is not running; saved settings will be used on the next start."]
    same = lidguard.run("settings", "--post-stop-suspend-delay-seconds", "5", check=True).stdout
    assert "No setting changed" in same and "Suspend mode" not in same
    assert json.loads(lidguard.run("settings", "--json", check=True).stdout)["settings"][
        "postStopSuspendDelaySeconds"] == 5
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())  # the file keeps PascalCase
    assert stored["PostStopSuspendDelaySeconds"] == 5 and "postStopSuspendDelaySeconds" not in stored
    assert camel_keys(report) == []  # settings --json speaks camelCase like status --json (issue 33.14)


def camel_keys(value, path=""):
    """Every object key (recursively) that is not camelCase, with where it is."""
    import re

    if isinstance(value, dict):
        bad = [f"{path}.{key}" for key in value if not re.fullmatch(r"[a-z][A-Za-z0-9]*", str(key))]
        return bad + [item for key, sub in value.items() for item in camel_keys(sub, f"{path}.{key}")]
    if isinstance(value, list):
        return [item for index, sub in enumerate(value) for item in camel_keys(sub, f"{path}[{index}]")]
    return []
