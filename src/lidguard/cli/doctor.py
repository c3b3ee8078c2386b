"""`lidguard doctor`: platform, native modules (active or not, and why), capabilities, power source,
the settings file (unusable, or stored values not used as they are), paths.

Everything comes through the Platform Protocol (``platform/api.py``); doctor reads, never writes,
and carries on past any one failure so the rest of the report still prints.
"""

from __future__ import annotations

import platform as python_platform
import sys
from typing import Any

from ..platform.api import NativeModuleStatus, Platform, Unsupported
from ..settings import load_settings_report
from .context import CliContext
from .file_health import file_problems

__all__ = ["collect_doctor_report", "format_doctor_report"]


def _native_modules(platform: Platform) -> list[dict[str, Any]]:
    from .. import proctree

    modules = {"proctree": NativeModuleStatus("proctree", proctree.native_active(), proctree.native_status_reason())}
    for status in platform.native_module_statuses():
        modules[status.name] = status
    return [status.to_json() for status in modules.values()]


def _power_source(platform: Platform) -> tuple[dict[str, Any] | None, str]:
    """(the camelCase facts or None, the human line)."""
    try:
        source = platform.describe_power_source()
    except Unsupported as error:
        return None, f"unavailable: {error.reason}"
    except OSError as error:
        return None, f"unavailable: {error.strerror or error}"
    return source.to_json(), source.describe()


def _settings(context: CliContext) -> dict[str, Any]:
    path = context.paths.settings_file
    report = load_settings_report(path)
    return {"file": str(path), "exists": report.exists, "error": report.error, "problems": list(report.problems)}


def collect_doctor_report(context: CliContext) -> dict[str, Any]:
    from .. import __version__
    from ..platform.host import host_os_name

    paths = context.paths
    platform = context.platform
    response = context.request("status")
    power_source, power_source_text = _power_source(platform)
    return {
        "version": __version__,
        "python": f"{python_platform.python_implementation()} {python_platform.python_version()}",
        "executable": sys.executable,
        "hostOs": host_os_name(),
        "platform": platform.name,
        "nativeModules": _native_modules(platform),
        "capabilities": platform.describe_capabilities(),
        "runtimeRunning": bool(response.get("Succeeded")),
        "powerSource": power_source,
        "powerSourceText": power_source_text,
        "settings": _settings(context),
        "fileProblems": file_problems(paths),
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


def _settings_lines(settings: dict[str, Any]) -> list[str]:
    if settings["error"]:
        return [f"Settings file: {settings['file']} (unusable; the defaults are used, the file is left as it is)",
                f"  {settings['error']}"]
    if not settings["exists"]:
        return [f"Settings file: {settings['file']} (not created yet; the defaults are used)"]
    problems = settings["problems"]
    if not problems:
        return [f"Settings file: {settings['file']} (ok)"]
    return [f"Settings file: {settings['file']} ({len(problems)} stored value(s) not used as they are)",
            *(f"  {problem}" for problem in problems)]


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
    lines.append(f"Power source: {report['powerSourceText']}")
    lines += _settings_lines(report["settings"])
    lines += [f"File problem: {problem}" for problem in report["fileProblems"]]
    lines.append("Paths:")
    for name, path in report["paths"].items():
        lines.append(f"  {name}: {path}")
    return lines
