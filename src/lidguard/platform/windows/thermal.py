"""Windows thermal-zone temperatures for Emergency Hibernation, through a PowerShell CIM query.

``root/wmi`` ``MSAcpi_ThermalZoneTemperature.CurrentTemperature`` (tenths of a Kelvin) is tried first;
it often needs an elevated process, so ``Win32_PerfFormattedData_Counters_ThermalZoneInformation``
``HighPrecisionTemperature`` (tenths of a Kelvin) is the fallback (REFERENCE 8.1). The query runs
through a command runner (``powershell -NoProfile -NonInteractive``, 15 s), so tests feed recorded
outputs. A missing PowerShell, a failure, a timeout or no positive value is "unavailable" (``[]``),
which never triggers Emergency Hibernation (seed 001).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["CIM_QUERY_SCRIPT", "CommandResult", "WindowsThermalReader", "parse_cim_output", "run_command"]

CIM_TIMEOUT_SECONDS = 15.0
# Prints one "<deci-Kelvin>" line per zone; the first class that answers wins.
CIM_QUERY_SCRIPT = (
    "$ErrorActionPreference='Stop';"
    "try{Get-CimInstance -Namespace root/wmi -ClassName MSAcpi_ThermalZoneTemperature|"
    "ForEach-Object{$_.CurrentTemperature}}catch{"
    "Get-CimInstance -ClassName Win32_PerfFormattedData_Counters_ThermalZoneInformation|"
    "ForEach-Object{$_.HighPrecisionTemperature}}"
)
POWERSHELL_COMMAND = ("powershell.exe", "-NoProfile", "-NonInteractive", "-Command", CIM_QUERY_SCRIPT)
_KELVIN_OFFSET = 273.15


@dataclass(frozen=True, slots=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


CommandRunner = Callable[[Sequence[str], float], CommandResult]


def run_command(argv: Sequence[str], timeout: float) -> CommandResult:
    """subprocess.run without a console window; raises OSError / subprocess.TimeoutExpired."""
    completed = subprocess.run(
        list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    return CommandResult(completed.returncode, completed.stdout, completed.stderr)


def parse_cim_output(text: str) -> list[float]:
    """Celsius values of every positive deci-Kelvin line (other lines are ignored)."""
    values = []
    for line in text.splitlines():
        try:
            deci_kelvin = float(line.strip())
        except ValueError:
            continue
        celsius = round(deci_kelvin / 10.0 - _KELVIN_OFFSET, 2)
        if celsius > 0:
            values.append(celsius)
    return values


class WindowsThermalReader:
    def __init__(self, runner: CommandRunner = run_command) -> None:
        self._runner = runner
        self.last_failure: str | None = None

    def read_temperatures_celsius(self) -> list[float]:
        try:
            result = self._runner(POWERSHELL_COMMAND, CIM_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.last_failure = f"the CIM query did not finish within {CIM_TIMEOUT_SECONDS:g} s"
            return []
        except OSError as error:
            self.last_failure = f"PowerShell could not start ({error})"
            return []
        if result.returncode != 0:
            detail = result.stderr.strip().splitlines()[-1:] or ["no error output"]
            self.last_failure = f"the CIM query exited with status {result.returncode}: {detail[0]}"
            return []
        values = parse_cim_output(result.stdout)
        self.last_failure = None if values else "no thermal zone reported a positive temperature"
        return values

    def describe(self) -> str:
        values = self.read_temperatures_celsius()
        if not values:
            return f"unavailable: {self.last_failure}"
        listed = ", ".join(f"{value:g}" for value in values)
        return f"available ({len(values)} zones: {listed} C via PowerShell CIM)"
