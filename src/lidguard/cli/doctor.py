"""`lidguard doctor`: platform, native modules (active or not, and why), capabilities, paths."""

from __future__ import annotations

import platform as python_platform
import sys
from typing import Any

from .context import CliContext

__all__ = ["collect_doctor_report", "format_doctor_report"]


def _native_modules(context: CliContext) -> list[dict[str, Any]]:
    from .. import proctree

    modules: dict[str, dict[str, Any]] = {
        "proctree": {"name": "proctree", "active": proctree.native_active(), "reason": proctree.native_status_reason()},
    }
    platform_statuses = getattr(context.platform, "native_module_statuses", None)
    if platform_statuses is not None:
        for status in platform_statuses():
            modules[status["name"]] = status
    return list(modules.values())


def collect_doctor_report(context: CliContext) -> dict[str, Any]:
    from .. import __version__
    from ..platform.host import host_os_name

    paths = context.paths
    platform = context.platform
    response = context.request("status")
    report: dict[str, Any] = {
        "version": __version__,
        "python": f"{python_platform.python_implementation()} {python_platform.python_version()}",
        "executable": sys.executable,
        "hostOs": host_os_name(),
        "platform": platform.name,
        "nativeModules": _native_modules(context),
        "capabilities": platform.describe_capabilities(),
        "runtimeRunning": bool(response.get("Succeeded")),
        "paths": {
            "dataDir": str(paths.data_dir),
            "settingsFile": str(paths.settings_file),
            "sessionLog": str(paths.session_log_file),
            "suspendHistory": str(paths.suspend_history_file),
            "exceptionLog": str(paths.exception_log_file),
            "lidActionBackup": str(paths.lid_backup_file),
            "runtimeDir": str(paths.runtime_dir),
            "socket": str(paths.socket_file),
        },
    }
    power_source = getattr(platform, "describe_power_source", None)
    if power_source is not None:
        report["powerSource"] = power_source()
    return report


def format_doctor_report(report: dict[str, Any]) -> list[str]:
    lines = [
        f"lidguard {report['version']} on {report['python']} ({report['executable']})",
        f"Host OS: {report['hostOs']}    Platform backend: {report['platform']}",
        f"Runtime: {'running' if report['runtimeRunning'] else 'not running'}",
        "Native modules:",
    ]
    for module in report["nativeModules"]:
        state = "active" if module["active"] else "pure-Python fallback"
        lines.append(f"  {module['name']}: {state} ({module['reason']})")
    lines.append("Capabilities:")
    for capability, text in report["capabilities"].items():
        lines.append(f"  {capability}: {text}")
    if "powerSource" in report:
        lines.append(f"Power source: {report['powerSource']}")
    lines.append("Paths:")
    for name, path in report["paths"].items():
        lines.append(f"  {name}: {path}")
    return lines
