"""The menu actions against the real (fake-platform) runtime: the same IPC commands as the CLI."""

from __future__ import annotations

import json
import os
import stat
import sys
from datetime import datetime, timezone

import pytest

from lidguard.platform.paths import resolve_paths
from lidguard.tray.actions import TrayActions


@pytest.fixture
def actions(lidguard, monkeypatch):
    for name in ("LIDGUARD_FAKE_STATE", "LIDGUARD_FAKE_ACTIONS"):
        monkeypatch.setenv(name, lidguard.env[name])
    return TrayActions(resolve_paths())


def test_pause_starts_the_runtime_and_resume_ends_the_pause(lidguard, actions):
    assert actions.run("resume") == "LidGuard runtime is not running: nothing is paused."
    line = actions.run("pause-30m")
    assert "pause" in line.lower()
    paused = lidguard.json("status")["paused"]
    until = datetime.fromisoformat(paused["untilUtc"].replace("Z", "+00:00"))
    assert 25 * 60 < (until - datetime.now(timezone.utc)).total_seconds() <= 30 * 60
    actions.run("pause-2h")  # a new pause replaces the old one
    until = datetime.fromisoformat(lidguard.json("status")["paused"]["untilUtc"].replace("Z", "+00:00"))
    assert (until - datetime.now(timezone.utc)).total_seconds() > 115 * 60
    actions.run("resume")
    assert lidguard.json("status")["paused"] is None


def test_toggles_change_the_file_and_the_running_runtime(lidguard, actions):
    # No runtime: the stored value (the headless default, on) is turned off in the file.
    assert actions.run("change-lid-action") == "Change lid action: off (used on the next runtime start)."
    stored = json.loads((lidguard.data_dir / "settings.json").read_text())
    assert stored["ChangeLidAction"] is False
    assert stat.S_IMODE((lidguard.data_dir / "settings.json").stat().st_mode) == 0o600
    lidguard.run("start", "--provider", "claude", "--session", "s", check=True)
    status = actions.request("status")
    assert status["Settings"]["ChangeLidAction"] is False
    assert actions.run("change-lid-action", status) == "Change lid action: on."
    assert actions.request("status")["Settings"]["ChangeLidAction"] is True
    assert actions.run("suspend-mode", actions.request("status")) == "Suspend mode: Hibernate."
    assert actions.request("status")["Settings"]["SuspendMode"] == "Hibernate"
    assert json.loads((lidguard.data_dir / "settings.json").read_text())["SuspendMode"] == "Hibernate"


def test_a_broken_settings_file_is_left_alone(lidguard, actions):
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    (lidguard.data_dir / "settings.json").write_text("{not json")
    line = actions.run("change-lid-action")
    assert "settings" in line.lower() and "\n" not in line
    assert (lidguard.data_dir / "settings.json").read_text() == "{not json"


def test_sleep_now_asks_the_platform_for_the_configured_mode(lidguard, actions):
    assert actions.run("sleep-now") == "Fake sleep requested."
    assert actions.run("sleep-now", {"Settings": {"SuspendMode": "Hibernate"}}) == "Fake hibernate requested."
    assert [action["action"] for action in lidguard.actions()] == ["suspend-requested", "hibernate-requested"]


def test_open_status_writes_a_private_page_and_opens_it(lidguard, actions, tmp_path, monkeypatch):
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {browser} %s")
    status = {"Succeeded": True, "ActiveSessionCount": 1, "Settings": {},
              "Sessions": [{"Provider": "Claude", "WorkingDirectory": "/w/<script>", "StartedAt": None}]}
    assert actions.run("open-status", status) == "Status opened."
    page = lidguard.data_dir / "tray-status.html"
    assert opened.read_text() == page.as_uri()
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    text = page.read_text()
    assert "protecting 1 session" in text and "&lt;script&gt;" in text and "<script>" not in text
    assert os.access(page, os.R_OK)


def test_an_action_never_raises(actions, monkeypatch):
    monkeypatch.setattr(TrayActions, "request", lambda *args, **kwargs: 1 / 0)
    assert actions.run("pause-30m").startswith("pause-30m failed: division by zero")
    assert actions.run("nonsense") == "Unknown action nonsense."
