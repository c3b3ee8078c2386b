"""Test switches in a real environment (issue 39 item 12): the fake platform is never silent, the actions
file is never written through a symlink, and the path switches are honoured only in test mode."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lidguard import switches

FAKE_LINE = "platform: fake (LIDGUARD_PLATFORM=fake) - protects nothing"


def test_symlinked_actions_file_is_refused_and_its_target_unchanged(tmp_path: Path) -> None:
    from lidguard.platform.fake import FakePlatform

    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    link = tmp_path / "actions.jsonl"
    link.symlink_to(target)
    platform = FakePlatform(actions_path=link)
    platform.record("protection-applied")  # never raises: the line is lost, not written through the link
    assert target.read_text() == "precious\n"
    assert link.is_symlink()
    assert platform.actions and platform.actions[0]["action"] == "protection-applied"


def test_actions_file_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    from lidguard.platform.fake import FakePlatform

    fifo = tmp_path / "actions.jsonl"
    os.mkfifo(fifo)
    FakePlatform(actions_path=fifo).record("protection-applied")  # would block forever on open(O_WRONLY)


def test_regular_actions_file_still_records(tmp_path: Path) -> None:
    from lidguard.platform.fake import FakePlatform

    path = tmp_path / "actions.jsonl"
    FakePlatform(actions_path=path).record("suspend-requested")
    assert json.loads(path.read_text())["action"] == "suspend-requested"
    assert (path.stat().st_mode & 0o777) == 0o600


def test_path_switches_are_ignored_without_test_mode() -> None:
    environ = {"LIDGUARD_SYSFS_ROOT": "/tmp/sys", "LIDGUARD_POLKIT_RULE_PATH": "/tmp/rule.rules"}
    assert switches.sysfs_root(environ) is None
    assert switches.polkit_rule_path(environ) is None
    environ["LIDGUARD_TEST_MODE"] = "1"
    assert switches.sysfs_root(environ) == "/tmp/sys"
    assert switches.polkit_rule_path(environ) == "/tmp/rule.rules"


def test_linux_readers_use_the_real_root_without_test_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from lidguard.platform.linux import permission, sysfs

    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(tmp_path))
    monkeypatch.setenv("LIDGUARD_POLKIT_RULE_PATH", str(tmp_path / "rule.rules"))
    assert sysfs.sysfs_root() == tmp_path
    assert permission.resolve_rule_path() == tmp_path / "rule.rules"
    monkeypatch.delenv("LIDGUARD_TEST_MODE")
    assert sysfs.sysfs_root() == Path("/")
    assert permission.resolve_rule_path() == permission.DEFAULT_RULE_PATH


def test_fake_platform_reason() -> None:
    assert switches.fake_platform_reason({"LIDGUARD_PLATFORM": "fake"}) == "LIDGUARD_PLATFORM=fake"
    assert switches.fake_platform_reason({"LIDGUARD_TEST_MODE": "1"}) == "LIDGUARD_TEST_MODE=1"
    assert switches.fake_platform_reason({"LIDGUARD_PLATFORM": "linux", "LIDGUARD_TEST_MODE": "1"}) is None
    assert switches.fake_platform_reason({}) is None


def test_status_says_fake_with_and_without_a_runtime(lidguard) -> None:
    stopped = lidguard.run("status", check=True)
    assert FAKE_LINE in stopped.stdout.splitlines()
    lidguard.run("start", "--provider", "custom", "--session", "s1", check=True)
    running = lidguard.run("status", check=True)
    assert "LidGuard runtime is running." in running.stdout
    assert FAKE_LINE in running.stdout.splitlines()
    data = lidguard.json("status")
    assert data["fakePlatform"] == {"reason": "LIDGUARD_PLATFORM=fake", "text": FAKE_LINE}


def test_doctor_says_fake(lidguard) -> None:
    result = lidguard.run("doctor")
    assert FAKE_LINE in result.stdout.splitlines()
    report = json.loads(lidguard.run("doctor", "--json").stdout)
    assert report["fakePlatform"]["text"] == FAKE_LINE


def test_every_hook_log_line_says_fake(lidguard) -> None:
    payload = json.dumps({"session_id": "s-hook", "hook_event_name": "UserPromptSubmit", "cwd": str(lidguard.home),
                          "prompt": "hi"})
    lidguard.run("claude-hook", input_text=payload)
    log = lidguard.data_dir / "claude-hook-events.log"
    lines = log.read_text().splitlines()
    assert lines and all(" platform=fake" in line for line in lines), lines


def test_hook_log_line_without_the_fake_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from lidguard.hooks.eventlog import HookEventLog

    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")
    path = tmp_path / "claude-hook-events.log"
    HookEventLog(str(path)).message("hello")
    assert "platform=" not in path.read_text()
    monkeypatch.setenv("LIDGUARD_PLATFORM", "fake")
    HookEventLog(str(path)).message("again")
    assert " workingDirectory=<empty> platform=fake message=again" in path.read_text().splitlines()[-1]
