"""Other programs' sleep blockers on Windows (issue 34.3): the SYSTEM section of ``powercfg /requests``.

powercfg(1) lists the active power requests per type (DISPLAY, SYSTEM, AWAYMODE, EXECUTION, ...); each
entry is ``[PROCESS] <image path>``, ``[SERVICE] <name>`` or ``[DRIVER] <name>``, followed by the reason
the caller gave, or ``None.`` for an empty section. SYSTEM requests keep the machine from sleeping.
lidguard's own request (its reason names LidGuard) is left out. The command needs an elevated prompt on
most machines: its failure is an ``OSError`` (status then says the blockers could not be read).
"""

from __future__ import annotations

import ntpath
import re
import subprocess

from ..api import SuspendBlocker
from .thermal import CommandRunner, run_command

__all__ = ["POWERCFG_REQUESTS", "parse_power_requests", "read_system_requests"]

POWERCFG_REQUESTS = ("powercfg.exe", "/requests")
POWERCFG_TIMEOUT_SECONDS = 15.0
_SECTION = re.compile(r"^([A-Z]+):\s*$")
_ENTRY = re.compile(r"^\[([A-Z]+)\]\s*(.*?)\s*$")
OWN_REASON_WORD = "lidguard"


def parse_power_requests(text: str, section: str = "SYSTEM") -> list[SuspendBlocker]:
    blockers: list[tuple[str, str, list[str]]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header is not None:
            current = header[1]
            continue
        if current != section or not line or line == "None.":
            continue
        entry = _ENTRY.match(line)
        if entry is not None:
            blockers.append((entry[1], entry[2], []))
        elif blockers:
            blockers[-1][2].append(line)
    found = []
    for kind, name, reason_lines in blockers:
        why = " ".join(reason_lines)
        if OWN_REASON_WORD in why.lower():
            continue
        who = ntpath.basename(name) if kind == "PROCESS" else name
        found.append(SuspendBlocker(who or name, why, None, None, section, kind.lower()))
    return found


def read_system_requests(api: object, runner: CommandRunner = run_command) -> list[SuspendBlocker]:
    """``OSError`` when powercfg fails (not elevated) or times out."""
    try:
        result = runner(POWERCFG_REQUESTS, POWERCFG_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise OSError("powercfg /requests timed out") from error
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip() or "no error output"
        raise OSError(f"powercfg /requests failed with exit code {result.returncode}: {detail}")
    return parse_power_requests(result.stdout)
