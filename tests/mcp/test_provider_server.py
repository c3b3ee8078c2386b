"""`lidguard provider-mcp-server --provider-name NAME` through the SDK's stdio client: sessions it starts
show as Mcp:NAME, soft lock / clear / provider-reported end, and two providers sharing a session id."""

from __future__ import annotations

import json
import re
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp_harness import camel_keys, error_text, mcp_client, start_runtime, structured

from lidguard.mcp.tools import ToolContext
from lidguard.platform.paths import resolve_paths

PROVIDER_TOOLS = {"provider_start_session", "provider_set_soft_lock", "provider_clear_soft_lock",
                  "provider_stop_session"}


def _session_log(lidguard: Any) -> list[dict[str, Any]]:
    path = resolve_paths().session_log_file
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_provider_session_life_cycle(lidguard: Any, tmp_path: Any) -> None:
    start_runtime(lidguard)
    project = tmp_path / "project"
    project.mkdir()

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with mcp_client(lidguard.env, "provider-mcp-server", "--provider-name", "Pi Agent") as session:
            out["tools"] = {tool.name: tool for tool in (await session.list_tools()).tools}
            start = structured(await session.call_tool("provider_start_session",
                                                       {"workingDirectory": str(project)}))
            out["start"] = start
            identifier = start["sessionIdentifierToReuse"]
            out["status_started"] = lidguard.json("status")
            out["text_status"] = lidguard.run("status", check=True).stdout
            out["lock"] = structured(await session.call_tool("provider_set_soft_lock", {
                "sessionIdentifier": identifier, "reason": "waiting_for_user_input"}))
            out["status_locked"] = lidguard.json("status")
            out["clear"] = structured(await session.call_tool("provider_clear_soft_lock",
                                                              {"sessionIdentifier": identifier}))
            out["status_cleared"] = lidguard.json("status")
            out["no_reason"] = await session.call_tool("provider_set_soft_lock", {"sessionIdentifier": identifier,
                                                                                  "reason": "  "})
            out["no_id"] = await session.call_tool("provider_stop_session", {})
            out["stop"] = structured(await session.call_tool("provider_stop_session",
                                                             {"sessionIdentifier": identifier}))
            out["status_stopped"] = lidguard.json("status")
            lidguard.run("stop-runtime", "--force", check=True)
            out["stop_when_down"] = structured(await session.call_tool("provider_stop_session",
                                                                       {"sessionIdentifier": identifier}))
            out["lock_when_down"] = await session.call_tool("provider_set_soft_lock", {
                "sessionIdentifier": identifier, "reason": "waiting_for_approval"})
        return out

    out = anyio.run(main)
    tools = out["tools"]
    assert set(tools) == PROVIDER_TOOLS
    # The descriptions tell the model when to call each tool.
    assert "FIRST" in tools["provider_start_session"].description
    assert "wait for the user" in tools["provider_set_soft_lock"].description
    assert "resumes" in tools["provider_clear_soft_lock"].description
    assert "completely finished" in tools["provider_stop_session"].description
    for key in ("start", "lock", "clear", "stop", "stop_when_down"):
        assert camel_keys(out[key]) == [], key

    start = out["start"]
    identifier = start["sessionIdentifierToReuse"]
    assert re.fullmatch(r"[0-9a-f]{8}", identifier)
    assert start["requestedProvider"] == "Mcp" and start["requestedProviderName"] == "Pi Agent"
    assert f"Reuse session id '{identifier}' verbatim" in start["summary"]
    sessions = out["status_started"]["sessions"]
    assert [(item["provider"], item["providerName"], item["sessionIdentifier"]) for item in sessions] == [
        ("Mcp", "Pi Agent", identifier)]
    assert sessions[0]["watchedProcessIdentifier"] is None  # no process watching
    assert sessions[0]["workingDirectory"] == str(project)
    assert f"- Mcp:Pi Agent:{identifier} process=none" in out["text_status"]

    locked = out["status_locked"]["sessions"][0]
    assert locked["softLockState"] == "SoftLocked" and locked["softLockReason"] == "waiting_for_user_input"
    assert out["status_cleared"]["sessions"][0]["softLockState"] == "None"
    assert "reason is required" in error_text(out["no_reason"])
    assert "sessionIdentifier" in error_text(out["no_id"])

    assert out["stop"]["requestedCommand"] == "stop"
    assert out["status_stopped"]["sessions"] == []
    stops = [entry for entry in _session_log(lidguard) if entry["EventName"] == "session-stopped"]
    assert [(entry["ProviderName"], entry["IsProviderSessionEnd"], entry["SessionEndReason"]) for entry in stops] == [
        ("Pi Agent", True, "provider_stop_session")]
    # A runtime that is gone has nothing left to stop: success. A soft lock there is an error.
    assert "not running" in out["stop_when_down"]["summary"]
    assert "LidGuard runtime is not running." in error_text(out["lock_when_down"])


def test_two_providers_with_the_same_session_id_do_not_collide(lidguard: Any) -> None:
    start_runtime(lidguard)

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with AsyncExitStack() as stack:
            alpha = await stack.enter_async_context(
                mcp_client(lidguard.env, "provider-mcp-server", "--provider-name", "alpha"))
            beta = await stack.enter_async_context(
                mcp_client(lidguard.env, "provider-mcp-server", "--provider-name", "beta"))
            identifier = structured(await alpha.call_tool("provider_start_session", {}))["sessionIdentifierToReuse"]
            out["id"] = identifier
            # beta reuses alpha's id (the CLI path an MCP provider's own hook would take).
            lidguard.run("start", "--provider", "mcp", "--provider-name", "beta", "--session", identifier, check=True)
            out["both"] = lidguard.json("status")
            structured(await beta.call_tool("provider_set_soft_lock", {"sessionIdentifier": identifier,
                                                                      "reason": "waiting_for_approval"}))
            out["beta_locked"] = lidguard.json("status")
            structured(await alpha.call_tool("provider_stop_session", {"sessionIdentifier": identifier}))
            out["after_alpha_stop"] = lidguard.json("status")
        return out

    out = anyio.run(main)
    identifier = out["id"]

    def sessions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
        assert all(item["sessionIdentifier"] == identifier for item in status["sessions"])
        return {item["providerName"]: item for item in status["sessions"]}

    assert set(sessions(out["both"])) == {"alpha", "beta"}
    locked = sessions(out["beta_locked"])
    assert locked["beta"]["softLockState"] == "SoftLocked" and locked["alpha"]["softLockState"] == "None"
    remaining = sessions(out["after_alpha_stop"])
    assert set(remaining) == {"beta"} and remaining["beta"]["softLockState"] == "SoftLocked"


def test_provider_start_session_auto_starts_the_runtime_and_watches_no_process(lidguard: Any) -> None:
    calls: list[tuple[str, bool, dict[str, Any]]] = []

    def fake(command: str, *, auto_start: bool = False, **fields: Any) -> dict[str, Any]:
        calls.append((command, auto_start, fields))
        return {"Succeeded": True, "RuntimeUnavailable": False, "Message": "ok", "Sessions": []}

    result = ToolContext(resolve_paths(), fake).provider_start_session("pi")
    command, auto_start, fields = calls[0]
    assert (command, auto_start) == ("start", True)
    assert fields["Provider"] == "Mcp" and fields["ProviderName"] == "pi"
    assert fields["WatchedProcessIdentifier"] == 0
    assert fields["HasSettings"] is True  # the settings file (created with the defaults) travels with start
    assert fields["SessionIdentifier"] == result["sessionIdentifierToReuse"]
    assert [call[1] for call in calls[1:]] == [False] * (len(calls) - 1)  # the snapshot never starts it
