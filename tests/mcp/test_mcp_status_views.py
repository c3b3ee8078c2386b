"""The real `lidguard mcp-server` over stdio: the tools that return status and settings never show a webhook
URL (each is "set" / "not set"; a stored problem about one names the key, not the value), and they carry
`sessionsOmitted` and `lidPolicyHeldBack` as `lidguard status --json` does (issue 39)."""

from __future__ import annotations

import json
from typing import Any

from mcp_harness import run_client, structured

from lidguard.ipc.client import send_request

SECRET = "https://notify.user.example/hook?token=s3cr3t-t0ken"
BAD_SECRET = "ftp://leaked-s3cr3t@example"  # stored by hand: a problem line used to quote it
HINT = "grant the lid permission (test)"
SESSIONS = 104  # the reply lists 100


def _no_secret(value: Any) -> None:
    text = json.dumps(value)
    assert "s3cr3t" not in text and "notify.user.example" not in text, text[:2000]


def test_status_and_settings_tools_redact_webhook_urls_and_carry_what_status_json_carries(lidguard: Any) -> None:
    lidguard.run("settings", "--pre-suspend-webhook-url", SECRET, "--closed-lid-stop-follow-up-webhook-url",
                 SECRET, check=True)
    settings_file = lidguard.data_dir / "settings.json"
    stored = json.loads(settings_file.read_text())
    stored["PostSessionEndWebhookUrl"] = BAD_SECRET
    settings_file.write_text(json.dumps(stored))
    lidguard.set_machine(lidPolicyRefusal=HINT)
    lidguard.run("start", "--provider", "custom", "--session", "s0", check=True)
    for index in range(1, SESSIONS):
        reply = send_request(lidguard.socket, {"v": 1, "Command": "start", "Provider": "Custom",
                                               "SessionIdentifier": f"s{index}"})
        assert reply["Succeeded"], reply
    status = lidguard.json("status")
    assert status["sessionsOmitted"] == SESSIONS - 100 and status["lidPolicyHeldBack"] == f"keeping awake; {HINT}"

    async def body(session: Any) -> dict[str, Any]:
        return {
            "settings": structured(await session.call_tool("get_settings_status", {})),
            "sessions": structured(await session.call_tool("list_sessions", {})),
            "update": structured(await session.call_tool("update_settings", {"sessionTimeoutMinutes": 30})),
            "soft": structured(await session.call_tool("set_session_soft_lock", {
                "provider": "custom", "sessionIdentifier": "s1", "reason": "waiting"})),
        }

    out = run_client(lidguard.env, ["mcp-server"], body)
    for name, result in out.items():
        _no_secret(result)
        snapshot = result.get("snapshot", result)
        assert snapshot["sessionsOmitted"] == SESSIONS - 100, name
        assert snapshot["lidPolicyHeldBack"] == f"keeping awake; {HINT}", name
    snapshot = out["settings"]["snapshot"]
    for view in (snapshot["storedSettings"], snapshot["runtimeSettings"], out["update"]["previousStoredSettings"],
                 out["update"]["updatedStoredSettings"]):
        assert (view["preSuspendWebhookUrl"], view["closedLidStopFollowUpWebhookUrl"]) == ("set", "set")
        assert view["postSessionEndWebhookUrl"] == "not set"  # the bad one is off
    assert any(problem.startswith("PostSessionEndWebhookUrl:") for problem in snapshot["settingsProblems"])
    assert "not listed" in out["sessions"]["summary"]
    assert json.loads(settings_file.read_text())["PreSuspendWebhookUrl"] == SECRET  # the file keeps it
    lidguard.run("stop-runtime", "--force", check=True)
