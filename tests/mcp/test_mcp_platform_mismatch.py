"""The MCP status tools show a platform mismatch (issue 33.1): an MCP server on the real platform asking
the demo's (fake-platform) runtime gets its refusal, named, and no status of it."""

from __future__ import annotations

from typing import Any

from mcp_harness import run_client, structured


def test_get_settings_status_of_a_real_server_names_the_demo_runtime(lidguard: Any) -> None:
    lidguard.run("start", "--provider", "claude", "--session", "demo-1", check=True)  # the fake runtime
    sysfs = lidguard.home / "sysfs"
    sysfs.mkdir()
    real = {**lidguard.env, "LIDGUARD_PLATFORM": "linux", "LIDGUARD_SYSFS_ROOT": str(sysfs),
            "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={lidguard.home / 'no-bus'}"}

    async def body(session: Any) -> dict[str, Any]:
        return {"status": structured(await session.call_tool("get_settings_status", {})),
                "sessions": structured(await session.call_tool("list_sessions", {}))}

    out = run_client(real, ["mcp-server"], body)
    snapshot = out["status"]["snapshot"]
    assert snapshot["platformMismatch"] is True and snapshot["runtimePlatform"] == "fake"
    assert "LidGuard runtime is refused (Refused: the running LidGuard runtime uses the test suite's fake platform" \
        in out["status"]["summary"], out["status"]["summary"]
    assert out["sessions"]["sessions"] == [] and out["sessions"]["platformMismatch"] is True
    assert "the real linux platform" in out["sessions"]["summary"], out["sessions"]["summary"]
