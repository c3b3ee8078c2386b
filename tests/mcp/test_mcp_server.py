"""`lidguard mcp-server` through the SDK's stdio client: tools, camelCase structured results, MCP errors,
the CLI's own validation, settings pushed to a running runtime without starting one."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from mcp_harness import camel_keys, error_text, run_client, start_runtime, structured

SETTINGS_TOOLS = {"get_settings_status", "list_sessions", "update_settings", "remove_session",
                  "set_session_soft_lock", "clear_session_soft_lock", "pause", "resume", "emergency_restore"}


def test_tools_without_a_runtime_never_start_one(lidguard: Any) -> None:
    cli_error = lidguard.run("settings", "--session-timeout-minutes", "0")
    assert cli_error.returncode == 1

    async def body(session: Any) -> dict[str, Any]:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        out: dict[str, Any] = {"tools": tools}
        out["status"] = structured(await session.call_tool("get_settings_status", {}))
        out["sessions"] = structured(await session.call_tool("list_sessions", {}))
        out["update"] = structured(await session.call_tool("update_settings", {
            "sessionTimeoutMinutes": "off", "suspendMode": "hibernate", "postStopSuspendDelaySeconds": 30,
            "preventDisplaySleep": True, "powerRequestReason": "Agents at work"}))
        out["same_again"] = structured(await session.call_tool("update_settings", {"suspendMode": "Hibernate"}))
        out["bad_range"] = await session.call_tool("update_settings", {"sessionTimeoutMinutes": 0,
                                                                       "suspendMode": "sleep"})
        out["bad_choice"] = await session.call_tool("update_settings", {"suspendMode": "nap"})
        out["bad_type"] = await session.call_tool("update_settings", {"changeLidAction": "maybe"})
        out["soft_lock_down"] = await session.call_tool("set_session_soft_lock", {
            "provider": "claude", "sessionIdentifier": "s1", "reason": "waiting_for_user_input"})
        out["missing_name"] = await session.call_tool("set_session_soft_lock", {
            "provider": "mcp", "sessionIdentifier": "s1", "reason": "waiting_for_user_input"})
        out["bad_provider"] = await session.call_tool("clear_session_soft_lock", {
            "provider": "vim", "sessionIdentifier": "s1"})
        out["missing_argument"] = await session.call_tool("remove_session", {})
        out["remove_down"] = structured(await session.call_tool("remove_session", {"sessionIdentifier": "s1"}))
        return out

    out = run_client(lidguard.env, ["mcp-server"], body)

    tools = out["tools"]
    assert set(tools) == SETTINGS_TOOLS
    for name in ("get_settings_status", "list_sessions"):
        assert tools[name].annotations.read_only_hint is True and tools[name].annotations.idempotent_hint is True
    assert tools["update_settings"].annotations.idempotent_hint is True
    schema = tools["update_settings"].input_schema["properties"]
    assert {"resetToDefaults", "sessionTimeoutMinutes", "suspendMode", "powerRequestReason",
            "closedLidStopFollowUpDelaySeconds", "preSuspendWebhookUrl"} <= set(schema)

    status, sessions, update = out["status"], out["sessions"], out["update"]
    for result in (status, sessions, update, out["remove_down"]):
        assert camel_keys(result) == []
    snapshot = status["snapshot"]
    assert snapshot["runtimeReachable"] is False and snapshot["runtimeUnavailable"] is True
    assert snapshot["settingsFilePath"].endswith("settings.json")
    assert snapshot["storedSettings"]["sessionTimeoutMinutes"] == 12
    assert sessions["sessions"] == [] and sessions["activeSessionCount"] == 0 and not sessions["runtimeReachable"]

    assert update["hadEffectiveChanges"] is True
    assert set(update["appliedChanges"]) == {"sessionTimeoutMinutes", "suspendMode", "postStopSuspendDelaySeconds",
                                             "preventDisplaySleep", "powerRequestReason"}
    assert update["previousStoredSettings"]["suspendMode"] == "Sleep"
    assert update["updatedStoredSettings"]["suspendMode"] == "Hibernate"
    assert "Runtime is not running; saved settings will be used on the next start." in update["summary"]
    assert out["same_again"]["hadEffectiveChanges"] is False and out["same_again"]["appliedChanges"] == []
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert stored["SessionTimeoutMinutes"] is None and stored["SuspendMode"] == "Hibernate"
    assert stored["PostStopSuspendDelaySeconds"] == 30 and stored["PowerRequest"]["Reason"] == "Agents at work"
    assert stored["PowerRequest"]["PreventDisplaySleep"] is True
    assert os.stat(lidguard.data_dir / "settings.json").st_mode & 0o777 == 0o600

    # The same validation and message as `lidguard settings`; nothing of a refused update is saved.
    assert cli_error.stderr.strip().removeprefix("lidguard: ") in error_text(out["bad_range"])
    assert "sessionTimeoutMinutes" in error_text(out["bad_range"])
    assert "sleep or hibernate" in error_text(out["bad_choice"])
    assert "changeLidAction" in error_text(out["bad_type"])  # refused by the input schema
    assert json.loads((lidguard.data_dir / "settings.json").read_text()) == stored

    assert "LidGuard runtime is not running." in error_text(out["soft_lock_down"])
    assert "providerName is required" in error_text(out["missing_name"])
    assert "Unknown provider: vim" in error_text(out["bad_provider"])
    assert "sessionIdentifier" in error_text(out["missing_argument"])
    assert out["remove_down"]["removedSessions"] == []
    assert out["remove_down"]["summary"] == "LidGuard runtime is not running. No active session was removed."
    assert lidguard.runtime_pids() == []  # nothing above starts the runtime


def test_tools_with_a_running_runtime(lidguard: Any) -> None:
    start_runtime(lidguard)
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("start", "--provider", "mcp", "--provider-name", "pi", "--session", "s1", check=True)

    async def body(session: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["sessions"] = structured(await session.call_tool("list_sessions", {}))
        out["update"] = structured(await session.call_tool("update_settings", {
            "sessionTimeoutMinutes": 30, "closedLidPermissionRequestDecision": "allow"}))
        out["status_after_update"] = lidguard.json("status")
        out["lock"] = structured(await session.call_tool("set_session_soft_lock", {
            "provider": "mcp", "providerName": "pi", "sessionIdentifier": "s1",
            "reason": "waiting_for_approval"}))
        out["status_locked"] = lidguard.json("status")
        out["clear"] = structured(await session.call_tool("clear_session_soft_lock", {
            "provider": "mcp", "providerName": "pi", "sessionIdentifier": "s1",
            "reason": "resumed_after_user_reply"}))
        out["status_cleared"] = lidguard.json("status")
        out["remove"] = structured(await session.call_tool("remove_session", {
            "sessionIdentifier": "s1", "provider": "claude"}))
        out["status"] = structured(await session.call_tool("get_settings_status", {}))
        return out

    out = run_client(lidguard.env, ["mcp-server"], body)
    for key in ("sessions", "update", "lock", "clear", "remove", "status"):
        assert camel_keys(out[key]) == [], key

    sessions = out["sessions"]
    assert sessions["runtimeReachable"] is True and sessions["activeSessionCount"] == 2
    shown = sorted((item["provider"], item["providerName"], item["sessionIdentifier"]) for item in sessions["sessions"])
    assert shown == [("Claude", None, "s1"), ("Mcp", "pi", "s1")]
    assert {item["providerDisplay"] for item in sessions["sessions"]} == {"Claude", "Mcp:pi"}

    assert "Runtime settings updated." in out["update"]["summary"]
    applied = out["status_after_update"]["settings"]
    assert applied["sessionTimeoutMinutes"] == 30 and applied["closedLidPermissionRequestDecision"] == "Allow"
    assert out["update"]["snapshot"]["hasRuntimeSettings"] is True
    assert out["update"]["snapshot"]["runtimeSettings"]["sessionTimeoutMinutes"] == 30

    def mcp_session(status: dict[str, Any]) -> dict[str, Any]:
        return next(item for item in status["sessions"] if item["provider"] == "Mcp")

    assert out["lock"]["requestedCommand"] == "mark-session-softlocked"
    assert out["lock"]["sessionIdentifierToReuse"] == "s1" and out["lock"]["providerDisplay"] == "Mcp:pi"
    assert mcp_session(out["status_locked"])["softLockState"] == "SoftLocked"
    assert mcp_session(out["status_locked"])["softLockReason"] == "waiting_for_approval"
    assert mcp_session(out["status_cleared"])["softLockState"] == "None"

    remove = out["remove"]
    assert remove["hasProviderFilter"] is True and remove["requestedProvider"] == "Claude"
    assert len(remove["removedSessions"]) == 1 and "Claude" in remove["removedSessions"][0]
    assert [item["provider"] for item in remove["snapshot"]["sessions"]] == ["Mcp"]
    assert out["status"]["snapshot"]["activeSessionCount"] == 1


def test_without_the_sdk_one_line_says_how_to_get_it(lidguard: Any, tmp_path: Any) -> None:
    # An `mcp` package without the 2.x server API (none, or 1.x) is shadowed in front of the real one.
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text("")
    # In front of, not instead of, the caller's PYTHONPATH: the lidguard under test stays the one imported.
    env = {**lidguard.env, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), lidguard.env.get("PYTHONPATH")]))}
    for arguments in (["mcp-server"], ["provider-mcp-server", "--provider-name", "pi"]):
        result = _run(env, arguments)
        assert result.returncode == 1
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "lidguard: The MCP server needs the optional 'mcp' packages (missing: mcp 2.3 or newer); "
            "install them with: ") and "[mcp]" in lines[0], lines
    result = _run(lidguard.env, ["provider-mcp-server"])
    assert result.returncode == 1
    assert result.stderr.strip() == "lidguard: The provider-mcp-server command requires --provider-name <name>."


def test_the_sdk_stays_out_of_other_commands() -> None:
    import subprocess

    code = ("import sys; from lidguard.cli.full import build_parser; build_parser(); "
            "import lidguard.mcp.tools, lidguard.mcp.install, lidguard.mcp.config_file; "
            "sys.exit(1 if 'mcp' in sys.modules or 'mcp.server' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def _run(env: dict[str, str], arguments: list[str]) -> Any:
    import subprocess

    return subprocess.run([sys.executable, "-m", "lidguard", *arguments], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
