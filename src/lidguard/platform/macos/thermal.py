"""macOS temperatures for Emergency Hibernation: IOHID sensors first, ``powermetrics`` second.

1. Apple Silicon: the IOHID event-system temperature services (vendor usage page 0xff00, usage 5),
   one batched snapshot per sample through the cffi binding; kept are the processor sensors (product
   names containing "PMU tdie", "pACC", "eACC" or "CPU") reading 0-150 C (REFERENCE 8.3).
2. Otherwise ``sudo -n powermetrics --samplers smc -n 1 -i 1000`` (8 s; the sudoers rule allows
   exactly that command): Celsius values (``47.42 C``, ``°C``, ``Celsius``) on temperature lines
   of the SMC section, 0 < t < 130. Intel Macs print "CPU die temperature: 47.42 C"; Apple Silicon
   builds often print no SMC temperatures at all.

Unsupported sensors, permission failures, unknown samplers, no numbers and timeouts all give ``[]``
(unavailable), which never triggers Emergency Hibernation.
"""

from __future__ import annotations

import re
import subprocess

from . import _binding
from .commands import RealToolRefused, ToolMissing, describe_tool, run_privileged

__all__ = [
    "HID_PRODUCT_MARKERS",
    "POWERMETRICS_ARGUMENTS",
    "MacThermalReader",
    "parse_powermetrics_temperatures",
    "select_hid_temperatures",
]

HID_PRODUCT_MARKERS = ("PMU tdie", "pACC", "eACC", "CPU")
HID_VALID_RANGE = (0.0, 150.0)
POWERMETRICS_ARGUMENTS = ["--samplers", "smc", "-n", "1", "-i", "1000"]
POWERMETRICS_TIMEOUT_SECONDS = 8.0
_CELSIUS = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:°\s*C\b|C\b|Celsius\b)", re.IGNORECASE)


def select_hid_temperatures(readings: list[tuple[str, float]]) -> list[float]:
    low, high = HID_VALID_RANGE
    return [value for name, value in readings
            if any(marker.lower() in name.lower() for marker in HID_PRODUCT_MARKERS) and low < value <= high]


def parse_powermetrics_temperatures(text: str) -> list[float]:
    """Celsius values of temperature lines (in the SMC section when there is one), 0 < t < 130."""
    lines = text.splitlines()
    start = next((index for index, line in enumerate(lines) if "smc sensors" in line.lower()), None)
    if start is not None:
        lines = lines[start + 1:]
    values: list[float] = []
    for line in lines:
        if line.startswith("****") and start is not None:
            break  # the next sampler's section
        if "temperature" not in line.lower() and "temp" not in line.lower():
            continue
        for match in _CELSIUS.finditer(line):
            value = float(match.group(1))
            if 0 < value < 130:
                values.append(value)
    return values


class MacThermalReader:
    def read_temperatures_celsius(self) -> list[float]:
        values = self.read_hid_temperatures()
        return values if values else self.read_powermetrics_temperatures()

    def read_hid_temperatures(self) -> list[float]:
        if not _binding.binding_status()[0]:
            return []
        try:
            return select_hid_temperatures(_binding.active_binding().read_hid_temperatures())
        except (OSError, _binding.BindingInactive):
            return []

    def read_powermetrics_temperatures(self) -> list[float]:
        try:
            result = run_privileged("powermetrics", POWERMETRICS_ARGUMENTS, capability="thermal",
                                    timeout=POWERMETRICS_TIMEOUT_SECONDS)
        except (ToolMissing, RealToolRefused, subprocess.TimeoutExpired):
            return []
        return parse_powermetrics_temperatures(result.stdout) if result.ok else []

    def describe(self) -> str:
        active, reason = _binding.binding_status()
        if active:
            values = self.read_hid_temperatures()
            if values:
                return f"available (native: IOHID temperature sensors via cffi, {len(values)} sensors)"
        values = self.read_powermetrics_temperatures()
        native = "IOHID sensors gave no reading" if active else f"IOHID binding inactive: {reason}"
        if values:
            listed = ", ".join(f"{value:g}" for value in values)
            return (f"available (command-line: sudo -n powermetrics --samplers smc -n 1 -i 1000: {listed} C; "
                    f"{native})")
        tool = describe_tool("powermetrics")
        return f"unavailable: no temperature from powermetrics ({tool}) and {native}"
