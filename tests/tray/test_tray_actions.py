"""The menu actions against the real (fake-platform) runtime: the same IPC commands as the CLI."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from lidguard.platform.paths import resolve_paths
from lidguard.tray.actions import TrayActions


@pytest.fixture(autouse=True)
def fresh_webbrowser(monkeypatch):
    """webbrowser reads BROWSER once per process: each test registers its own stand-in browser."""
    import webbrowser

    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})


def _opened(record) -> str:
    """What the stand-in browser (started in the background by webbrowser) was asked to open."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (record.exists() and record.read_text()):
        time.sleep(0.05)
    return record.read_text()


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
    assert _opened(opened) == page.as_uri()
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    text = page.read_text()
    assert "protecting 1 session" in text and "&lt;script&gt;" in text and "<script>" not in text
    assert os.access(page, os.R_OK)


def test_open_status_opens_the_notify_dashboard_when_configured(lidguard, actions, tmp_path, monkeypatch):
    from lidguard.notify.config import default_config_path

    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    monkeypatch.setenv("BROWSER", f"{sys.executable} {browser} %s")
    config = default_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("{not json")  # an unusable config: the local page instead
    assert actions.run("open-status") == "Status opened."
    assert _opened(opened).startswith("file://")
    opened.unlink()
    result = subprocess.run([sys.executable, "-m", "lidguard.notify.cli", "init", "--public-base-url",
                             "https://notify.example.test", "--config", str(config), "--force"],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:  # the notify extra is part of the test set-up; say what broke
        raise AssertionError(result.stderr)
    assert actions.run("open-status") == "Status opened."
    assert _opened(opened) == "https://notify.example.test/"


def test_an_action_never_raises(actions, monkeypatch):
    monkeypatch.setattr(TrayActions, "request", lambda *args, **kwargs: 1 / 0)
    assert actions.run("pause-30m").startswith("pause-30m failed: division by zero")
    assert actions.run("nonsense") == "Unknown action nonsense."
