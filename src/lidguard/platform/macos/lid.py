"""macOS lid (clamshell) state from the IOPMrootDomain registry entry.

``ioreg -r -k AppleClamshellState -d 4`` prints the registry entries that carry the key, one
``"AppleClamshellState" = Yes|No`` property line each (ioreg(8); the key is published by
IOPMrootDomain on portables). Yes/true -> Closed, No/false -> Open; no such line (desktops, or a
failed/timed-out ioreg) -> Unknown (REFERENCE 8.3, 3 s timeout).
"""

from __future__ import annotations

import re
import subprocess

from ..api import LidState
from .commands import RealToolRefused, ToolMissing, describe_tool, run_tool

__all__ = ["IOREG_ARGUMENTS", "MacLidStateReader", "parse_clamshell_state"]

IOREG_ARGUMENTS = ["-r", "-k", "AppleClamshellState", "-d", "4"]
IOREG_TIMEOUT_SECONDS = 3.0
_CLAMSHELL_LINE = re.compile(r'"AppleClamshellState"\s*=\s*(\S+)')


def parse_clamshell_state(text: str) -> LidState:
    """The first ``"AppleClamshellState" = X`` line: Yes/true -> Closed, No/false -> Open."""
    match = _CLAMSHELL_LINE.search(text)
    if match is None:
        return LidState.UNKNOWN
    value = match.group(1).strip().lower()
    if value in ("yes", "true", "1"):
        return LidState.CLOSED
    if value in ("no", "false", "0"):
        return LidState.OPEN
    return LidState.UNKNOWN


class MacLidStateReader:
    def read_lid_state(self) -> LidState:
        try:
            result = run_tool("ioreg", IOREG_ARGUMENTS, capability="lid", timeout=IOREG_TIMEOUT_SECONDS)
        except (ToolMissing, RealToolRefused, subprocess.TimeoutExpired):
            return LidState.UNKNOWN
        return parse_clamshell_state(result.stdout) if result.ok else LidState.UNKNOWN

    def describe(self) -> str:
        tool = describe_tool("ioreg")
        if not tool.startswith("available"):
            return f"unavailable: ioreg {tool} (lid state reads Unknown)"
        return f"available (command-line: ioreg {' '.join(IOREG_ARGUMENTS)}: {self.read_lid_state().value})"
