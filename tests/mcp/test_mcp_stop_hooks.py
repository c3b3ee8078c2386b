"""Issue 32.5 through the MCP server: `update_settings` changing the post-stop delay or the reply window
rewrites the installed Stop hooks (their timeout must cover the whole window), as `lidguard settings` does,
and says so in its answer; a change that leaves the timeout alone touches no agent's file."""

from __future__ import annotations

import json
from typing import Any

from mcp_harness import run_client, structured


def test_update_settings_refreshes_the_installed_stop_hooks_and_says_so(lidguard: Any) -> None:
    (lidguard.home / ".claude").mkdir()
    lidguard.run("hook-install", "--provider", "claude", check=True)
    claude_settings = lidguard.home / ".claude" / "settings.json"

    async def body(session: Any) -> dict[str, Any]:
        changed = structured(await session.call_tool("update_settings", {
            "postStopSuspendDelaySeconds": 40, "closedLidStopFollowUpDelaySeconds": 60}))
        between = claude_settings.read_bytes()
        same = structured(await session.call_tool("update_settings", {"suspendMode": "hibernate"}))
        return {"changed": changed, "same": same, "between": between}

    out = run_client(lidguard.env, ["mcp-server"], body)
    line = "Stop hooks refreshed (timeout 420 seconds): Claude"
    assert out["changed"]["stopHooks"] == [line] and line in out["changed"]["summary"], out["changed"]
    timeout = json.loads(out["between"])["hooks"]["Stop"][0]["hooks"][0]["timeout"]
    assert timeout == 40 + 60 + 300 + 20
    assert out["same"]["stopHooks"] == [] and claude_settings.read_bytes() == out["between"]
    blocks = {block["provider"]: block["status"] for block in lidguard.json("hook-status")["providers"]}
    assert blocks["Claude"] == "Installed"
