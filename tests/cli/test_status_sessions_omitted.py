"""Issue 32: a status reply lists at most 100 sessions and counts the rest in ``SessionsOmitted``; every
status form keeps that count (``status --json`` once dropped it: 101 sessions listed 100 and said nothing).
In-process on a made-up reply of 101 sessions (the runtime's cut itself: tests/runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lidguard.cli.session_commands import StatusView
from lidguard.platform.fake import FakePlatform
from lidguard.platform.paths import LidGuardPaths


class _Context:
    def __init__(self, root: Path) -> None:
        self.paths = LidGuardPaths(data_dir=root / "data", runtime_dir=root / "run")
        self.platform = FakePlatform()


def _session(number: int) -> dict[str, Any]:
    return {"Provider": "Claude", "SessionIdentifier": f"s{number}", "StartedAt": "2026-11-30T12:00:00.0000000Z",
            "LastActivityAt": "2026-11-30T12:00:00.0000000Z", "SoftLockState": "None", "WorkingDirectory": "/w",
            "Source": "hook"}


def _reply(omitted: int | None) -> dict[str, Any]:
    reply: dict[str, Any] = {"Succeeded": True, "ActiveSessionCount": 100 + (omitted or 0), "LidSwitchState": "Open",
                             "VisibleDisplayMonitorCount": 1, "Sessions": [_session(n) for n in range(100)]}
    if omitted is not None:
        reply["SessionsOmitted"] = omitted
    return reply


def test_status_json_and_the_terminal_table_keep_the_sessions_omitted(tmp_path: Path) -> None:
    view = StatusView(_Context(tmp_path), _reply(1))  # type: ignore[arg-type]
    shown = view.json()
    assert len(shown["sessions"]) == 100 and shown["sessionsOmitted"] == 1
    assert "... and 1 more session(s) not listed" in view.lines(terminal=False)
    assert any("... and 1 more session(s) not listed" in line for line in view.lines(terminal=True))
    complete = StatusView(_Context(tmp_path), _reply(None))  # type: ignore[arg-type]
    assert complete.json()["sessionsOmitted"] == 0
    assert not any("more session(s)" in line for line in complete.lines(terminal=True))
