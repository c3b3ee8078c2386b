"""Copilot CLI foreign agentStop warning (REFERENCE row 50, issue 19 item 6): another agentStop (or Stop)
hook in ``~/.copilot/hooks/*.json``, the Copilot settings files, or a repository's ``.github/hooks/*.json``
/ ``.github/copilot/settings.json`` can answer ``{"decision":"block"}`` and keep the agent going after
LidGuard's stop. hook-status and doctor name each such file; LidGuard's own entries never count, and
odd files (garbage, folders, FIFOs, huge) never break the scan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lidguard.agents import copilot

FOREIGN = {"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "./keep-going.sh", "timeoutSec": 9}]}}


@pytest.fixture
def copilot_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    folder = isolated_home / ".copilot" / "hooks"
    folder.mkdir(parents=True)
    return isolated_home / ".copilot"


def test_no_foreign_hook_no_warning_and_our_own_entries_never_count(copilot_home: Path, tmp_path: Path):
    assert copilot.installer().install(None, 430).changed
    (copilot_home / "hooks" / "other.json").write_text(json.dumps(
        {"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}}))
    assert copilot.foreign_agent_stop_warnings(tmp_path) == []


def test_each_file_with_a_foreign_stop_hook_is_named(copilot_home: Path, tmp_path: Path):
    user = copilot_home / "hooks" / "keep-going.json"
    user.write_text(json.dumps(FOREIGN))
    (copilot_home / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"type": "command", "command": "python judge.py"}]}}))
    repository = tmp_path / "repo"
    (repository / ".github" / "hooks").mkdir(parents=True)
    repo_hooks = repository / ".github" / "hooks" / "ci.json"
    repo_hooks.write_text(json.dumps(FOREIGN))
    warnings = copilot.foreign_agent_stop_warnings(repository)
    assert len(warnings) == 3
    assert all(line.startswith("Warning: ") and "block" in line for line in warnings)
    assert any(str(user) in line and "agentStop" in line for line in warnings)
    assert any(str(copilot_home / "settings.json") in line and "Stop" in line for line in warnings)
    assert any(str(repo_hooks) in line for line in warnings)
    # hook-status shows the same lines
    status = copilot.installer().status_lines(None, 430)
    assert any(str(user) in line for line in status)


def test_odd_files_never_break_the_scan(copilot_home: Path, tmp_path: Path):
    hooks = copilot_home / "hooks"
    (hooks / "garbage.json").write_text("{not json")
    (hooks / "folder.json").mkdir()
    os.mkfifo(hooks / "fifo.json")  # a read would block: never opened
    (hooks / "list.json").write_text("[1, 2]")
    (hooks / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (hooks / "odd-shapes.json").write_text(json.dumps({"hooks": {"agentStop": "x", "Stop": [3, None, {"bash": 5}]}}))
    (hooks / "surrogate.json").write_bytes(b'{"hooks": {"agentStop": [{"bash": "\\ud800"}]}}')
    (hooks / "link.json").symlink_to(tmp_path / "missing-target.json")
    warnings = copilot.foreign_agent_stop_warnings(tmp_path)
    assert [line for line in warnings if "surrogate.json" not in line] == []
    [surrogate] = warnings
    surrogate.encode("utf-8")  # printable whatever the file held


def test_hook_status_and_doctor_print_the_warning(lidguard):
    hooks = lidguard.home / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "keep-going.json").write_text(json.dumps(FOREIGN))
    status = lidguard.run("hook-status", "--provider", "copilot", check=True).stdout
    doctor = lidguard.run("doctor", check=True).stdout
    for output in (status, doctor):
        [line] = [line for line in output.splitlines() if "keep-going.json" in line]
        assert "Warning:" in line and "agentStop" in line
