"""The POSIX existence check the per-OS readers share (stdlib only, hook path)."""

from __future__ import annotations

import os

__all__ = ["pid_exists"]


def pid_exists(pid: int) -> bool:
    """``kill(pid, 0)`` (kill(2)): True while a process with this pid exists, a zombie included.

    EPERM means it exists but belongs to another user. pid <= 0 addresses process groups, not a
    process, so it never exists here.
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
