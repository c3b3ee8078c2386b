"""A test-only agent hook: records each call and, with ``--block-once``, continues the agent once.

    python3 hook_script.py <label> [--block-once]

Appends one JSON line (label, pid, parent pid, stdin) to ``$LIDGUARD_TEST_HOOK_LOG``. With
``--block-once`` it prints ``{"decision": "block", "reason": "continue please"}`` the first time (a
marker file next to the log remembers it), which makes Claude Code, Codex and Copilot send one more
model request carrying the reason - the mechanism ask-before-sleep uses. Stdlib only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

CONTINUATION = "continue please"


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "hook"
    data = sys.stdin.read()
    log = Path(os.environ.get("LIDGUARD_TEST_HOOK_LOG") or "hook-script.log")
    entry = {"label": label, "pid": os.getpid(), "ppid": os.getppid(), "stdin": data}
    with log.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps(entry) + "\n")
    if "--block-once" in sys.argv[2:]:
        marker = log.with_name(log.name + f".{label}.blocked")
        try:
            marker.touch(exist_ok=False)
        except FileExistsError:
            return 0
        print(json.dumps({"decision": "block", "reason": CONTINUATION}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
