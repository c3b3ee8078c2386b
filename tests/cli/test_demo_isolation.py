"""The demo (``LIDGUARD_PLATFORM=fake`` outside the tests) never shares a file or the socket with real
use: its settings, journal and runtime live in ``LidGuard-demo`` (issue 33, items 1 and 2)."""

from __future__ import annotations

import json
from typing import Any


def test_the_demo_writes_its_own_settings_and_its_runtime_is_not_the_real_one(lidguard: Any) -> None:
    lidguard.env.update(LIDGUARD_TEST_MODE="0", LIDGUARD_WATCHDOG="off")
    demo = lidguard.home / "data" / "LidGuard-demo"
    real = lidguard.home / "data" / "LidGuard"
    try:
        lidguard.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
        assert json.loads((demo / "settings.json").read_text())["PostStopSuspendDelaySeconds"] == 0
        assert not (real / "settings.json").exists()
        lidguard.run("start", "--provider", "claude", "--session", "demo-1", check=True)
        assert lidguard.json("status", "--json")["sessions"], "the demo runtime answers the demo"
        real_client = {key: value for key, value in lidguard.env.items() if key != "LIDGUARD_PLATFORM"}
        import subprocess
        import sys

        seen = subprocess.run([sys.executable, "-m", "lidguard", "status", "--json"], env=real_client,
                              capture_output=True, text=True, timeout=60)
        assert "demo-1" not in seen.stdout, "a real client reached the demo's runtime"
        assert (demo / "run").is_dir() and not (real / "run" / "runtime.sock").exists()
    finally:
        lidguard.run("stop-runtime", "--force")


def test_a_misshapen_fake_state_is_named_with_the_shape_it_wants(lidguard: Any) -> None:
    lidguard.state_file.write_text(json.dumps({"lid": "shut", "displays": ["eDP-1"], "temperaturesCelsius": "hot"}))
    result = lidguard.run("status")
    assert result.returncode == 0 and "unexpected error" not in result.stderr, result.stderr
    assert '"displays" must be a list of objects like [{"name": "eDP-1", "internal": true}]' in result.stdout
    assert '"lid" must be "open", "closed" or "unknown"' in result.stdout
    assert '"temperaturesCelsius" must be a list of numbers' in result.stdout
    lidguard.state_file.write_text("[1, 2]")
    assert "must be one JSON object" in lidguard.run("status", check=True).stdout
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)  # the runtime carries on
    lidguard.state_file.write_text(json.dumps({"displays": "eDP-1"}))
    assert lidguard.run("status", check=True).returncode == 0
