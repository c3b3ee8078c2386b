"""Where the native hook client is (``native/hook_client.c``, built by setup.py into ``lidguard/_native/``
as ``lidguard-hook``) and whether it runs here (issue 36). Stdlib only; used by hook-install, hook-status
and doctor, never by the hook path itself.

The installed hook command is ``<client> <python hook argv...>``: the client answers through the
runtime and execs the Python hook words after it whenever it cannot.
"""

from __future__ import annotations

import os
import subprocess

__all__ = ["CLIENT_NAME", "SELF_CHECK_OUTPUT", "HookClientStatus", "client_path", "hook_client_status"]

CLIENT_NAME = "lidguard-hook"
SELF_CHECK_OUTPUT = b"lidguard-hook ok\n"
SELF_CHECK_SECONDS = 5.0


class HookClientStatus:
    """``usable``: the client exists and passed its self-check; ``reason``: one line saying why not."""

    __slots__ = ("path", "reason", "usable")

    def __init__(self, path: str | None, usable: bool, reason: str) -> None:
        self.path = path
        self.usable = usable
        self.reason = reason


def client_path() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(package, "_native", CLIENT_NAME)


def hook_client_status() -> HookClientStatus:
    """Whether hook-install may write the native client (POSIX builds only; Windows has none yet)."""
    if os.name != "posix":
        return HookClientStatus(None, False, "no native hook client on this OS yet (the Windows pipe is not written)")
    path = client_path()
    if not os.path.isfile(path):
        return HookClientStatus(path, False, "this installation has no native hook client (a pure build)")
    if not os.access(path, os.X_OK):
        return HookClientStatus(path, False, f"{path} is not executable")
    try:
        result = subprocess.run([path, "--self-check"], stdin=subprocess.DEVNULL, capture_output=True,
                                timeout=SELF_CHECK_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return HookClientStatus(path, False, f"{path} does not run here: {type(error).__name__}: {error}")
    if result.returncode != 0 or result.stdout != SELF_CHECK_OUTPUT:
        return HookClientStatus(path, False, f"{path} failed its self-check (exit {result.returncode})")
    return HookClientStatus(path, True, "the native hook client passed its self-check")
