"""The files a hook-driven start touches and the faults each one can have, for test_fault_injection.

To cover one more file, append a ``FaultFile`` to ``FAULT_FILES`` (its path relative to the data
folder, and what "corrupt" and "NaN" mean for it); every fault in ``FAULTS`` then runs against it.
A fault that fails only because of another part's pending work goes in ``KNOWN_FAILURES`` with the
reason (the test marks it ``xfail(strict=True)``, so it turns red the day it passes).

ENOSPC is injected at the file layer in every process the test starts (``enospc/sitecustomize.py``
on ``PYTHONPATH``): a write to the file, or to a temp file named after it, fails with ENOSPC.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENOSPC_SITE", "FAULTS", "FAULT_FILES", "KNOWN_FAILURES", "FaultFile", "apply_fault", "enospc_env"]

ENOSPC_SITE = Path(__file__).resolve().parent / "enospc"
HUGE_BYTES = 64 * 1024 * 1024  # sparse: costs no disk, far past every bound lidguard reads up to


@dataclass(frozen=True)
class FaultFile:
    name: str  # the row of the results table
    relative_path: str  # inside the data folder (``<XDG_DATA_HOME>/LidGuard``)
    corrupt: bytes = b"{\x00\xff not json"
    nan: bytes = b'{"Value": NaN, "Other": Infinity, "Big": 1e400}\n'


FAULT_FILES: list[FaultFile] = [
    FaultFile("settings.json", "settings.json",
              nan=b'{"PostStopSuspendDelaySeconds": NaN, "Unknown": -Infinity, "SessionTimeoutMinutes": 1e400}'),
    FaultFile("lid-action backup", "pending-lid-action-backup.json",
              nan=b'{"PowerSchemeIdentifier": "fake", "IncludesAlternatingCurrent": true, '
                  b'"AlternatingCurrentAction": NaN, "IncludesDirectCurrent": true, "DirectCurrentAction": 1e400}'),
    FaultFile("session log", "session-execution.log", corrupt=b"\x00\xff{{{\n", nan=b'{"Timestamp": NaN}\n'),
    FaultFile("exception log", "log/exceptions.log"),
    FaultFile("hook event log", "claude-hook-events.log"),
    FaultFile("session journal", "session-journal.jsonl", corrupt=b"\x00\xff{{{\n",
              nan=b'{"Kind": "session", "StartedAt": NaN, "Pid": 1e400}\n'),
    FaultFile("runtime lock", "runtime.lock"),
    FaultFile("socket path", "run/runtime.sock"),
    FaultFile("runtime heartbeat", "runtime.heartbeat"),
    FaultFile("brightness backup", "pending-brightness-backup.json",
              nan=b'{"Device": "backlight/fake", "Brightness": NaN, "MaxBrightness": 1e400, "DimmedTo": 1}'),
    FaultFile("last start failure", "last-start-failure.json",
              nan=b'{"At": NaN, "Session": 1e400, "Reason": Infinity}\n'),
]

FAULTS = ("missing", "empty", "corrupt", "NaN", "huge", "FIFO", "directory", "symlink", "unreadable", "ENOSPC")

# (file name, fault) -> why it fails today, when the fix belongs to another part of the work.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def apply_fault(data_dir: Path, fault_file: FaultFile, fault: str, elsewhere: Path) -> Path | None:
    """Puts ``fault`` in place of the file; returns the symlink's target for "symlink" (else None)."""
    path = data_dir / fault_file.relative_path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if fault in ("missing", "ENOSPC"):
        return None
    if fault == "empty":
        path.write_bytes(b"")
    elif fault == "corrupt":
        path.write_bytes(fault_file.corrupt)
    elif fault == "NaN":
        path.write_bytes(fault_file.nan)
    elif fault == "huge":
        with open(path, "wb") as handle:
            handle.truncate(HUGE_BYTES)
    elif fault == "FIFO":
        os.mkfifo(path, 0o600)
    elif fault == "directory":
        path.mkdir(mode=0o700)
        (path / "keep").write_text("a directory that is not empty")
    elif fault == "symlink":
        target = elsewhere / f"target-of-{path.name}"
        target.write_bytes(b"{}\n")
        path.symlink_to(target)
        return target
    elif fault == "unreadable":
        path.write_bytes(b"{}\n")
        path.chmod(0)  # root reads it anyway: then the row checks a mode-000 file changes nothing
    else:
        raise ValueError(fault)
    return None


def enospc_env(env: dict[str, str], fault_file: FaultFile) -> dict[str, str]:
    """``env`` with the file-layer ENOSPC injection for writes to ``fault_file`` (and its temp files)."""
    python_path = os.pathsep.join(part for part in (str(ENOSPC_SITE), env.get("PYTHONPATH", "")) if part)
    return {**env, "PYTHONPATH": python_path, "LIDGUARD_TEST_ENOSPC_NAME": Path(fault_file.relative_path).name}
