"""The installed wheel works: `lidguard doctor --json` reports every native module of this OS active, and
`lidguard --ui-culture ko help` is Korean (the message catalogs shipped).

    python ci/wheel_smoke.py [EXPECTED_PLATFORM]

Run by ci/check-wheel.sh in a clean venv and by cibuildwheel's test-command on every built wheel (macOS,
Windows, manylinux). doctor exits 1 where the machine cannot be protected (a CI runner or a container
without logind): the report is complete all the same, so 0 and 1 both count; anything else fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

PLATFORMS = {"linux": "linux", "darwin": "macos", "win32": "windows"}


def main() -> int:
    expected = sys.argv[1] if len(sys.argv) > 1 else PLATFORMS.get(sys.platform, sys.platform)
    # The installed wheel's own script, beside this interpreter (a `lidguard` earlier on PATH - another
    # installation - would answer for it otherwise).
    beside = [os.path.join(os.path.dirname(sys.executable), name) for name in ("lidguard", "lidguard.exe")]
    command = next((path for path in beside if os.path.isfile(path)), None) or shutil.which("lidguard") or beside[0]
    with tempfile.TemporaryDirectory() as home:
        env = {key: value for key, value in os.environ.items() if not key.startswith("LIDGUARD_")}
        env.update(HOME=home, USERPROFILE=home, XDG_DATA_HOME=os.path.join(home, "data"),
                   XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_RUNTIME_DIR=os.path.join(home, "run"),
                   LOCALAPPDATA=os.path.join(home, "local"), APPDATA=os.path.join(home, "roaming"))
        result = subprocess.run([command, "doctor", "--json"], capture_output=True, text=True, env=env, timeout=120)
        # The message catalogs are package data: the installed wheel speaks Korean (issue 38.2).
        korean = subprocess.run([command, "--ui-culture", "ko", "help"], capture_output=True, text=True, env=env,
                                timeout=120, encoding="utf-8")
    if result.returncode not in (0, 1):
        print(f"wheel smoke: doctor exited {result.returncode}: {result.stderr.strip()}")
        return 1
    if not korean.stdout.startswith("사용법: lidguard"):
        print("wheel smoke: `lidguard --ui-culture ko help` is not Korean:", repr(korean.stdout[:80]),
              korean.stderr[-200:])
        return 1
    report = json.loads(result.stdout)
    if report.get("platform") != expected:
        print(f"wheel smoke: doctor says platform {report.get('platform')!r}, expected {expected!r}")
        return 1
    modules = report.get("nativeModules", [])
    inactive = [module for module in modules if not module.get("active")]
    if inactive or not modules:
        print(f"wheel smoke: native modules inactive in the installed wheel: {inactive or 'none listed'}")
        return 1
    print("wheel OK:", ", ".join(f"{module['name']} ({module['reason']})" for module in modules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
