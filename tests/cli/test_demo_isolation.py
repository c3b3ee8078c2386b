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


def test_the_demo_never_refreshes_the_real_agent_hooks(lidguard: Any) -> None:
    """README's demo (`LIDGUARD_PLATFORM=fake lidguard settings --post-stop-suspend-delay-seconds 0`, outside
    the tests) changes the demo's settings only: the Stop hooks the real agents run read the real settings,
    so their timeout stays what the real settings make it (issue 33; the refresh is issue 32.5)."""
    (lidguard.home / ".claude").mkdir()
    lidguard.run("hook-install", "--provider", "claude", check=True)  # as a real install wrote them
    claude = lidguard.home / ".claude" / "settings.json"
    before = claude.read_bytes()
    demo = {**lidguard.env, "LIDGUARD_TEST_MODE": "0", "LIDGUARD_WATCHDOG": "off"}
    import subprocess
    import sys

    try:
        result = subprocess.run([sys.executable, "-m", "lidguard", "settings", "--post-stop-suspend-delay-seconds",
                                 "0"], env=demo, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result
        assert "Stop hooks refreshed" not in result.stdout, result.stdout
        assert "the demo's settings never change the real agents' Stop hooks" in result.stdout, result.stdout
        assert claude.read_bytes() == before
    finally:
        subprocess.run([sys.executable, "-m", "lidguard", "stop-runtime", "--force"], env=demo,
                       capture_output=True, timeout=60)
    # The same change in the real data folder does refresh them (issue 32.5).
    assert "Stop hooks refreshed" in lidguard.run("settings", "--post-stop-suspend-delay-seconds", "0",
                                                  check=True).stdout
    assert claude.read_bytes() != before
