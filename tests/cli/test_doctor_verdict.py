"""doctor ends with a one-line verdict, exits 1 when nothing can be protected, and --json carries the
verdict and the capabilities as {"name", "available", "reason"} objects."""

from __future__ import annotations

import json


def test_doctor_says_what_is_missing_and_ready_once_hooks_are_installed(lidguard):
    result = lidguard.run("doctor")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Verdict: ready, but missing: agent hooks (run: lidguard setup)"
    (lidguard.home / ".codex").mkdir()
    lidguard.run("hook-install", "--provider", "codex", check=True)
    result = lidguard.run("doctor")
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == "Verdict: ready", result.stdout
    assert "  Codex hooks: installed" in result.stdout


def test_doctor_exits_1_with_the_reason_when_nothing_can_be_protected(lidguard):
    lidguard.env["LIDGUARD_PLATFORM"] = "windows"  # this OS has no Win32 API: nothing keeps it awake
    result = lidguard.run("doctor")
    assert result.returncode == 1
    last = result.stdout.splitlines()[-1]
    assert last.startswith("Verdict: cannot protect anything on this machine: keeping it awake is not possible: ")
    report = json.loads(lidguard.run("doctor", "--json").stdout)
    assert report["verdict"]["canProtect"] is False and report["verdict"]["text"] == last[len("Verdict: "):]


def test_doctor_json_capabilities_are_objects(lidguard):
    report = lidguard.json("doctor")
    assert report["verdict"] == {"ready": False, "canProtect": True, "text": report["verdict"]["text"],
                                 "missing": ["agent hooks (run: lidguard setup)"]}
    power = next(item for item in report["capabilities"] if item["name"] == "power")
    assert power == {"name": "power", "available": True, "state": "available", "reason": "fake platform"}
    assert all(set(item) == {"name", "available", "state", "reason"} and isinstance(item["available"], bool)
               for item in report["capabilities"])


def test_doctor_and_hook_status_agree_right_after_hook_install(lidguard):
    """Issue 32.5: doctor checked every provider against the 30 s default while the Stop hook is written with
    the computed timeout, so it said "needs update" right after a correct hook-install."""
    for folder in (".claude", ".codex", ".gemini", ".qwen", ".copilot"):
        (lidguard.home / folder).mkdir()
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    (lidguard.data_dir / "settings.json").write_text(json.dumps({"PostStopSuspendDelaySeconds": 40}))
    lidguard.run("hook-install", "--provider", "all", check=True)
    report = lidguard.json("doctor")
    statuses = {item["provider"]: item["status"] for item in report["hooks"]}
    hook_status = {block["provider"]: block["status"] for block in lidguard.json("hook-status")["providers"]}
    assert statuses == hook_status
    assert set(statuses.values()) == {"Installed"}, statuses
    assert "needs update" not in lidguard.run("doctor").stdout
