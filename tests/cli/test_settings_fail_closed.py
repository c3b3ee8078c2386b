"""Broken settings fail closed, as real processes on the fake platform (issue 19 item 3): no lid-policy
change and no suspend with the lid closed after the last session; every read command exits 0 with the
same warning; `settings --reset true` keeps a copy of the broken file."""

from __future__ import annotations

import json

import pytest

from lidguard.shared.raw_settings import FAIL_CLOSED


def _names(lidguard) -> list[str]:
    return [action["action"] for action in lidguard.actions()]


@pytest.mark.parametrize("content", [b"{broken", b"[1]", b'{"SuspendMode": "\\ud800"}'])
def test_broken_settings_keep_awake_only_and_every_read_command_says_so(lidguard, content):
    path = lidguard.data_dir / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    lidguard.set_machine(lid="closed")
    first = lidguard.run("start", "--provider", "claude", "--session", "s1")
    assert first.returncode == 0 and len(first.stderr.splitlines()) == 1
    assert FAIL_CLOSED in first.stderr
    problem = first.stderr.removeprefix("lidguard: warning: ").split(f" {FAIL_CLOSED}")[0] + f" {FAIL_CLOSED}"
    assert problem.startswith(f"The settings file {path} cannot be used: ")
    assert "protection-applied" in _names(lidguard) and "lid-policy-changed" not in _names(lidguard)
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)
    log = lidguard.data_dir / "session-execution.log"
    assert lidguard.wait_until(lambda: log.exists() and "stop-suspend-skipped" in log.read_text())
    assert "settings-fail-closed" in log.read_text()
    for command in (("status",), ("status", "--json"), ("doctor",), ("doctor", "--json"), ("suspend-history",),
                    ("current-temperature",), ("current-lid-state",), ("settings", "--json")):
        result = lidguard.run(*command)
        assert result.returncode == 0, (command, result.stderr)
        if command[0] in ("status", "doctor", "suspend-history", "current-temperature", "settings"):
            out = result.stdout + result.stderr
            assert problem in out or json.dumps(problem)[1:-1] in out, (command, out)
    status = lidguard.json("status")  # the runtime applies the fail-closed settings
    assert status["pendingSuspend"] is None and status["settings"]["changeLidAction"] is False
    assert status["settings"]["emergencyHibernationOnHighTemperature"] is False
    assert "suspend-requested" not in _names(lidguard) and "lid-policy-changed" not in _names(lidguard)
    reset = lidguard.run("settings", "--reset", "true", check=True)
    [copy_line] = [line for line in reset.stdout.splitlines() if line.startswith("Kept a copy")]
    copy = copy_line.removeprefix("Kept a copy of the unusable settings file at ").rstrip(".")
    with open(copy, "rb") as handle:
        assert handle.read() == content
    assert oct(__import__("os").stat(copy).st_mode & 0o777) == "0o600"
    assert json.loads(path.read_text())["ChangeLidAction"] is True
    lidguard.run("start", "--provider", "claude", "--session", "s2", check=True)
    assert "lid-policy-changed" in _names(lidguard)  # valid settings: the lid policy follows them again
    lidguard.run("stop-runtime", "--force", check=True)
