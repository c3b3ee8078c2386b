"""ci/check-wheel.sh: an installed wheel's hook-install writes the native hook client (``client``) or, in the pure
wheel, the Python hook (``python``); the written command then answers a hook event from ``sh -c`` (issue 36).

    python ci/hook_client_smoke.py <venv>/bin/lidguard <empty HOME> client|python
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def main(lidguard: str, home: str, expect: str) -> int:
    root = Path(home)
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LIDGUARD_", "XDG_"))}
    env.update(HOME=str(root), LIDGUARD_PLATFORM="fake", LIDGUARD_TEST_MODE="1")
    subprocess.run([lidguard, "hook-install", "--provider", "claude"], env=env, check=True, capture_output=True,
                   timeout=120)
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    commands = {handler["command"] for groups in settings["hooks"].values() for group in groups
                for handler in group["hooks"]}
    client = [command for command in commands if "lidguard-hook" in command]
    if (expect == "client") != (len(client) == len(commands)) or not commands:
        print(f"hook-install wrote {sorted(commands)[:2]}, expected the {expect} hook", file=sys.stderr)
        return 1
    status = subprocess.run([lidguard, "hook-status", "--provider", "claude"], env=env, capture_output=True,
                            text=True, timeout=120).stdout
    runner = next((line.strip() for line in status.splitlines() if "Hook runner:" in line), "")
    if ("native client" in runner) != (expect == "client"):
        print(f"hook-status says {runner!r}, expected the {expect} hook", file=sys.stderr)
        return 1
    payload = json.dumps({"hook_event_name": "SessionEnd", "session_id": "smoke", "cwd": str(root)})
    hook = subprocess.run(["/bin/sh", "-c", sorted(commands)[0]], input=payload, env=env, capture_output=True,
                          text=True, timeout=120)
    if hook.returncode != 0 or hook.stdout or hook.stderr:
        print(f"the installed hook failed: {hook.returncode} {hook.stdout!r} {hook.stderr!r}", file=sys.stderr)
        return 1
    subprocess.run([lidguard, "stop-runtime", "--force"], env=env, capture_output=True, timeout=120)
    print(f"hook-install ({expect}): {runner}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:4]))
