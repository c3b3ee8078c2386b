"""The built-in panel's brightness through WMI, and the user's idle time through GetLastInputInfo.

Brightness: ``root/wmi`` ``WmiMonitorBrightness`` (``InstanceName``, ``CurrentBrightness`` in percent,
``Active``) exists only for panels whose backlight Windows controls - the built-in display; external
monitors (DDC/CI) have no instance. It is set with ``WmiMonitorBrightnessMethods.WmiSetBrightness
(Timeout, Brightness)`` on the same instance, no elevation needed. Both run as one PowerShell CIM
command through the command runner (like ``thermal.py``), so tests feed recorded outputs.

Idle: ``GetLastInputInfo`` through ``winapi.py`` (milliseconds since this session's last keyboard or
mouse input): the user counts as idle since that input, and the runtime compares that with the setting.
"""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime, timedelta

from ..api import BrightnessLevel, IdleReading, Unsupported
from .thermal import CommandRunner, run_command
from .winapi import WindowsApi, WindowsApiError

__all__ = ["READ_SCRIPT", "WindowsBrightness", "parse_brightness_output", "set_script"]

CIM_TIMEOUT_SECONDS = 15.0
DEVICE_PREFIX = "wmi/"
MAXIMUM = 100  # WmiMonitorBrightness levels are percent
# One "<InstanceName>\t<CurrentBrightness>" line per active instance.
READ_SCRIPT = (
    "$ErrorActionPreference='Stop';"
    "Get-CimInstance -Namespace root/wmi -ClassName WmiMonitorBrightness|Where-Object Active|"
    "ForEach-Object{$_.InstanceName+[char]9+$_.CurrentBrightness}"
)
# Instance names look like DISPLAY\BOE0812\4&2ad6e8ca&0&UID8388688_0: nothing else is ever put in a script.
_INSTANCE_NAME = re.compile(r"^[A-Za-z0-9\\&_.#{}-]{1,200}$")
_MISSING_INSTANCE_EXIT = 3


def set_script(instance: str, value: int) -> str:
    if not _INSTANCE_NAME.match(instance) or type(value) is not int or not 0 <= value <= MAXIMUM:
        raise ValueError(f"refusing to build a brightness script for {instance!r} = {value!r}")
    return ("$ErrorActionPreference='Stop';"
            "$m=Get-CimInstance -Namespace root/wmi -ClassName WmiMonitorBrightnessMethods|"
            f"Where-Object InstanceName -eq '{instance}';"
            f"if(-not $m){{exit {_MISSING_INSTANCE_EXIT}}};"
            f"Invoke-CimMethod -InputObject $m -MethodName WmiSetBrightness "
            f"-Arguments @{{Timeout=[uint32]0;Brightness=[byte]{value}}}|Out-Null")


def parse_brightness_output(text: str) -> list[tuple[str, int]]:
    """(instance, percent) of every well-formed line; anything else is ignored."""
    found = []
    for line in text.splitlines():
        instance, separator, value = line.strip().partition("\t")
        if not separator or not _INSTANCE_NAME.match(instance) or not value.isascii() or not value.isdigit():
            continue
        if int(value) <= MAXIMUM:
            found.append((instance, int(value)))
    return found


def _powershell(script: str) -> tuple[str, ...]:
    return ("powershell.exe", "-NoProfile", "-NonInteractive", "-Command", script)


class WindowsBrightness:
    def __init__(self, api: WindowsApi, runner: CommandRunner = run_command, *,
                 clock: type[datetime] = datetime) -> None:
        self._api = api
        self._runner = runner
        self._clock = clock

    def _run(self, script: str, what: str) -> str:
        try:
            result = self._runner(_powershell(script), CIM_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as error:
            raise OSError(f"{what} did not finish within {CIM_TIMEOUT_SECONDS:g} s") from error
        except OSError as error:
            raise OSError(f"PowerShell could not start ({error})") from error
        if result.returncode == _MISSING_INSTANCE_EXIT:
            raise OSError(f"{what}: the display is not there any more")
        if result.returncode != 0:
            detail = result.stderr.strip().splitlines()[-1:] or ["no error output"]
            raise OSError(f"{what} exited with status {result.returncode}: {detail[0]}")
        return result.stdout

    def read_brightness(self) -> BrightnessLevel:
        found = parse_brightness_output(self._run(READ_SCRIPT, "the WmiMonitorBrightness query"))
        if not found:
            raise Unsupported("brightness", "no active WmiMonitorBrightness instance (no built-in panel whose "
                                            "backlight Windows controls)")
        instance, value = found[0]
        return BrightnessLevel(DEVICE_PREFIX + instance, value, MAXIMUM)

    def set_brightness(self, level: BrightnessLevel) -> None:
        if not level.device.startswith(DEVICE_PREFIX):
            raise OSError(f"not a WMI display: {level.device!r}")
        try:
            script = set_script(level.device.removeprefix(DEVICE_PREFIX), level.value)
        except ValueError as error:
            raise OSError(str(error)) from error
        self._run(script, "WmiSetBrightness")

    def read_idle(self) -> IdleReading:
        try:
            milliseconds = self._api.idle_milliseconds()
        except WindowsApiError as error:
            raise OSError(str(error)) from error
        return IdleReading(True, self._clock.now(UTC) - timedelta(milliseconds=milliseconds))

    def describe(self) -> str:
        try:
            level = self.read_brightness()
        except Unsupported as error:
            return f"unsupported: {error.reason}"
        except OSError as error:
            return f"unavailable: {error}"
        return (f"available ({level.device.removeprefix(DEVICE_PREFIX)} at {level.value} % via WMI "
                "WmiMonitorBrightness; idle from GetLastInputInfo)")
