"""Issue 39 item 1: the settings that send data off the machine or feed text back to the agent (the webhook
destinations - the ask-before-sleep one among them - and the previews of prompts and replies in webhook bodies)
are the user's alone. The real `lidguard mcp-server`, spoken to over stdio through the SDK's client, refuses
them with the CLI command that sets them, says so in its tool descriptions, and leaves settings.json as it was
(a reset to defaults keeps them too)."""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_harness import error_text, run_client, structured

# tool field -> the `lidguard settings` option that sets it, and a value a model might send
USER_ONLY = {
    "preSuspendWebhookUrl": ("--pre-suspend-webhook-url", "https://attacker.example/pre"),
    "postSessionEndWebhookUrl": ("--post-session-end-webhook-url", "https://attacker.example/end"),
    "closedLidStopFollowUpWebhookUrl": ("--closed-lid-stop-follow-up-webhook-url", "https://attacker.example/ask"),
    "webhookPreviews": ("--webhook-previews", True),
    # Issue 34.3: suspending over other programs' sleep blockers overrides their protection.
    "suspendIgnoresOtherBlockers": ("--suspend-ignores-other-blockers", True),
}
USER_URL = "https://notify.user.example/hook"


def test_mcp_refuses_user_only_settings_and_leaves_the_file_unchanged(lidguard: Any) -> None:
    lidguard.run("settings", "--pre-suspend-webhook-url", USER_URL, "--post-session-end-webhook-url", USER_URL,
                 "--closed-lid-stop-follow-up-webhook-url", USER_URL, "--webhook-previews", "false",
                 "--suspend-ignores-other-blockers", "true", "--session-timeout-minutes", "45", check=True)
    settings_file = lidguard.data_dir / "settings.json"
    before = settings_file.read_bytes()

    async def body(session: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {tool.name: tool for tool in (await session.list_tools()).tools}}
        for name, (_option, value) in USER_ONLY.items():
            out[name] = await session.call_tool("update_settings", {name: value})
            cleared = False if isinstance(value, bool) else "off"
            out[f"{name}-cleared"] = await session.call_tool("update_settings", {name: cleared})
        # Mixed with an allowed setting: the whole call is refused, nothing of it is saved.
        out["mixed"] = await session.call_tool("update_settings", {
            "sessionTimeoutMinutes": 30, "closedLidStopFollowUpWebhookUrl": "https://attacker.example/x"})
        out["file_after_refusals"] = settings_file.read_bytes()
        out["reset"] = structured(await session.call_tool("update_settings", {"resetToDefaults": True}))
        return out

    out = run_client(lidguard.env, ["mcp-server"], body)
    assert out["file_after_refusals"] == before, "an MCP tool changed a user-only setting"

    tool = out["tools"]["update_settings"]
    assert "user-only" in tool.description.lower() and "lidguard settings" in tool.description, tool.description
    schema = tool.input_schema["properties"]
    for name, (option, _value) in USER_ONLY.items():
        described = schema[name]["description"]
        assert "user-only" in described.lower() and f"lidguard settings {option}" in described, (name, described)
        for key in (name, f"{name}-cleared"):
            text = error_text(out[key])
            assert name in text and f"lidguard settings {option}" in text and "user-only" in text.lower(), text
    mixed = error_text(out["mixed"])
    assert "closedLidStopFollowUpWebhookUrl" in mixed and "lidguard settings --closed-lid-stop-follow-up-webhook-url" \
        in mixed, mixed

    # A reset to defaults resets the rest and keeps what only the user sets.
    stored = json.loads(settings_file.read_text())
    for key in ("PreSuspendWebhookUrl", "PostSessionEndWebhookUrl", "ClosedLidStopFollowUpWebhookUrl"):
        assert stored[key] == USER_URL, key
    assert stored["WebhookPreviews"] is False
    assert stored["SuspendIgnoresOtherBlockers"] is True  # kept by the reset, as the user set it
    assert stored["SessionTimeoutMinutes"] == 12  # the default again
    reset = out["reset"]
    assert reset["updatedStoredSettings"]["closedLidStopFollowUpWebhookUrl"] == "set"  # kept, never shown
    assert not {"preSuspendWebhookUrl", "postSessionEndWebhookUrl", "closedLidStopFollowUpWebhookUrl",
                "webhookPreviews", "suspendIgnoresOtherBlockers"} & set(reset["appliedChanges"])
    assert "user-only" in reset["summary"].lower()

    # The remove command a refusal names is the CLI's own.
    remove = re.search(r"lidguard (remove-closed-lid-stop-follow-up-webhook)\b",
                       error_text(out["closedLidStopFollowUpWebhookUrl"]))
    assert remove is not None
    lidguard.run(remove.group(1), check=True)
    assert json.loads(settings_file.read_text())["ClosedLidStopFollowUpWebhookUrl"] == ""
    assert lidguard.runtime_pids() == []
