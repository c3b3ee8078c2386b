"""The mcp-server's pause, resume and emergency_restore tools (issue 19 item 4) over the SDK's stdio
client against real runtime processes on the fake platform; the status tool shows the pause."""

from __future__ import annotations

from typing import Any

from mcp_harness import camel_keys, error_text, run_client, structured


def _names(lidguard: Any) -> list[str]:
    return [action["action"] for action in lidguard.actions()]


def test_pause_resume_and_emergency_restore_tools(lidguard: Any) -> None:
    lidguard.set_machine(lid="closed")
    lidguard.run("start", "--provider", "claude", "--session", "m1", check=True)

    async def body(session: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["bad"] = await session.call_tool("pause", {"duration": "forever"})
        out["pause"] = structured(await session.call_tool("pause", {"duration": "45m"}))
        out["status"] = structured(await session.call_tool("get_settings_status", {}))
        out["actions_paused"] = _names(lidguard)
        out["resume"] = structured(await session.call_tool("resume", {}))
        out["restore"] = structured(await session.call_tool("emergency_restore", {}))
        return out

    out = run_client(lidguard.env, ["mcp-server"], body)
    assert "The duration must be a duration such as 30m" in error_text(out["bad"])
    for key in ("pause", "status", "resume", "restore"):
        assert camel_keys(out[key]) == [], key
    assert out["pause"]["summary"].startswith("Paused for 45 min")
    snapshot = out["status"]["snapshot"]
    assert snapshot["paused"]["untilUtc"] and snapshot["activeSessionCount"] == 1
    assert snapshot["protectionHeldBack"][0].startswith("lidguard is paused")
    assert out["actions_paused"].count("protection-released") == 1
    assert out["resume"]["snapshot"]["paused"] is None
    restore = out["restore"]
    assert "cleared 1 session(s)" in restore["summary"]
    assert restore["snapshot"]["paused"] == {"untilUtc": None} and restore["snapshot"]["sessions"] == []
    lidguard.run("stop-runtime", "--force", check=True)


def test_emergency_restore_tool_with_no_runtime_and_a_broken_settings_file(lidguard: Any) -> None:
    lidguard.set_machine(lid="closed")
    lidguard.run("start", "--provider", "claude", "--session", "gone", check=True)
    journal = lidguard.data_dir / "session-journal.jsonl"
    assert lidguard.wait_until(lambda: journal.exists() and journal.stat().st_size > 0)
    lidguard.kill_runtimes()
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=20)
    (lidguard.data_dir / "settings.json").write_text('{"SuspendMode": ')

    async def body(session: Any) -> dict[str, Any]:
        return {"restore": structured(await session.call_tool("emergency_restore", {})),
                "resume": structured(await session.call_tool("resume", {}))}

    out = run_client(lidguard.env, ["mcp-server"], body)
    summary = out["restore"]["summary"]
    # (mcp-server itself runs the crash recovery when it starts: the lid policy may be restored already)
    assert "not running" in summary and "Cleared the session journal (1 record(s))." in summary
    assert "lid-policy-restored" in _names(lidguard)
    assert not (lidguard.data_dir / "pending-lid-action-backup.json").exists()
    assert journal.read_bytes() == b"" and not lidguard.runtime_pids()
    assert out["resume"]["summary"] == "LidGuard runtime is not running: nothing is paused."
