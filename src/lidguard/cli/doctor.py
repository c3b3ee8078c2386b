"""`lidguard doctor`: platform, native modules (active or not, and why), capabilities, power source,
the settings file (unusable, or stored values not used as they are), the installed agent hooks (does
each command still run?), paths, and a one-line verdict (exit 1 when nothing can be protected).

Everything comes through the Platform Protocol (``platform/api.py``); doctor reads, never writes,
and carries on past any one failure so the rest of the report still prints.
"""

from __future__ import annotations

import platform as python_platform
import sys
from pathlib import Path
from typing import Any

from ..l10n import N_, _
from ..platform.api import NativeModuleStatus, Platform, Unsupported
from ..settings import load_settings_report
from .context import CliContext
from .file_health import file_problems
from .output import runtime_text

__all__ = ["capability_objects", "capability_text", "collect_doctor_report", "doctor_exit_code", "fake_platform_text",
           "format_doctor_report", "localized_verdict", "protection_verdict"]

# Capabilities only an option uses (DimDisplayWhenIdleMinutes, off by default): shown, never "missing".
_OPTIONAL = ("brightness",)
# Protection holds the machine awake: without this capability lidguard protects nothing here.
_PROTECTION = "power"


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


def capability_objects(capabilities: dict[str, str]) -> list[dict[str, Any]]:
    """``{"name", "available", "reason"}`` (and ``state``) from the backend's capability texts."""
    result = []
    for name, text in capabilities.items():
        state, _colon, rest = text.partition(":") if text.startswith(("unavailable:", "unsupported:")) \
            else ("", "", "")
        if state:
            result.append({"name": name, "available": False, "state": state, "reason": rest.strip()})
        elif text.startswith("available"):
            reason = text[len("available"):].strip()
            if reason.startswith("(") and reason.endswith(")"):
                reason = reason[1:-1]
            result.append({"name": name, "available": True, "state": "available", "reason": reason})
        else:  # an informational text (permission: "polkit rule ...: not installed")
            result.append({"name": name, "available": "not installed" not in text, "state": "info", "reason": text})
    return result


def _hooks(settings_file: Path) -> list[dict[str, Any]]:
    """Each agent whose configuration folder exists: hook status (the same computation as hook-status,
    issue 32.5) and whether each installed command runs."""
    from ..installers import PROVIDERS, InstallError, available_providers, command_checks, provider_status
    from ..installers.common import hook_runner_line

    present, _absent = available_providers()
    result: list[dict[str, Any]] = []
    for key in present:
        provider = PROVIDERS[key]
        try:
            _status, lines = provider_status(key, None, settings_file)
        except InstallError as error:
            result.append({"provider": provider.display, "status": "Unknown", "config": "",
                           "problem": str(error)})
            continue
        status = lines[0].split(": ", 1)[1]
        config = next((line[len("Config: "):] for line in lines if line.startswith("Config: ")), "")
        checks = command_checks(key, Path(config)) if config else []
        problems = [problem for _, problem in checks if problem]
        runner = hook_runner_line([installed for installed, _ in checks]) if status != "NotInstalled" else None
        result.append({"provider": provider.display, "status": status, "config": config,
                       "problem": problems[0] if problems else None, "runner": runner})
    return result


def _same(message: str) -> str:
    return message


_CANNOT_PROTECT = N_("cannot protect anything on this machine: keeping it awake is not possible: {reason}")


def _verdict(capabilities: list[dict[str, Any]], hooks: list[dict[str, Any]], settings: dict[str, Any],
             translate: Any = _same) -> dict[str, Any]:
    """The verdict (English in the JSON; ``translate``: ``lidguard.l10n._`` for the human line)."""
    t = translate
    by_name = {item["name"]: item for item in capabilities}
    protection = by_name.get(_PROTECTION)
    can_protect = bool(protection and protection["available"])
    missing = [f"{item['name']} ({item['reason']})" for item in capabilities
               if not item["available"] and item["name"] not in (_PROTECTION, *_OPTIONAL)]
    missing += [t(N_("{provider} hooks broken ({problem})")).format(provider=hook["provider"],
                                                                     problem=hook["problem"])
                for hook in hooks if hook["problem"]]
    if settings["error"]:
        missing.append(t(N_("a usable settings file (the defaults are used)")))
    if not any(hook["status"] != "NotInstalled" for hook in hooks):
        missing.append(t(N_("agent hooks (run: lidguard setup)")))
    if not can_protect:
        reason = protection["reason"] if protection else t(N_("the platform has no power capability"))
        text = t(_CANNOT_PROTECT).format(reason=reason)
    elif missing:
        text = t(N_("ready, but missing: {missing}")).format(missing="; ".join(missing))
    else:
        text = t(N_("ready"))
    return {"ready": can_protect and not missing, "canProtect": can_protect, "missing": missing, "text": text}


def localized_verdict(text: str) -> str:
    """``protection_verdict``'s English text in the user's language (``status`` prints it)."""
    head = _CANNOT_PROTECT.split("{", 1)[0]
    return _(_CANNOT_PROTECT).format(reason=text[len(head):]) if text.startswith(head) else text


def protection_verdict(platform: Platform) -> str | None:
    """doctor's verdict when nothing can be protected on this machine (``status`` shows it beside
    ``Active sessions: 0``, issue 33.6), else None."""
    try:
        capabilities = capability_objects(platform.describe_capabilities(only=(_PROTECTION,)))
    except Exception:  # noqa: BLE001 - a platform that cannot describe itself: doctor says why
        return None
    verdict = _verdict(capabilities, [], {"error": None})
    return None if verdict["canProtect"] else str(verdict["text"])


def capability_text(item: dict[str, Any]) -> str:
    """One ``{"name", "available", "state", "reason"}`` capability as doctor's human line shows it."""
    if item["state"] == "available":
        return _("available ({reason})").format(reason=item["reason"]) if item["reason"] else _("available")
    if item["state"] == "info":
        return str(item["reason"])
    state = {"unavailable": _("unavailable"), "unsupported": _("unsupported")}.get(item["state"], item["state"])
    return f"{state}: {item['reason']}"


def doctor_exit_code(report: dict[str, Any]) -> int:
    return 0 if report["verdict"]["canProtect"] else 1


def _copilot_stop_warnings() -> list[str]:
    from ..agents.copilot import foreign_agent_stop_warnings

    try:
        return foreign_agent_stop_warnings()
    except Exception as error:  # noqa: BLE001 - a scan failure never breaks doctor
        return [_("Warning: the Copilot CLI hooks could not be scanned: {error}").format(error=error)]


def collect_doctor_report(context: CliContext) -> dict[str, Any]:
    from .. import __version__
    from ..platform.host import host_os_name

    paths = context.paths
    platform = context.platform
    response = context.request("status")
    power_source, power_source_text = _power_source(platform)
    capabilities = capability_objects(platform.describe_capabilities())
    hooks = _hooks(paths.settings_file)
    settings = _settings(context)
    keep_awake = _agent_keep_awake(context, response)
    return {
        "version": __version__,
        "python": f"{python_platform.python_implementation()} {python_platform.python_version()}",
        "executable": sys.executable,
        "hostOs": host_os_name(),
        "platform": platform.name,
        "fakePlatform": _fake_platform(platform),
        "nativeModules": _native_modules(platform),
        "capabilities": capabilities,
        "runtimeRunning": bool(response.get("Succeeded")),
        "runtimePlatform": _runtime_platform(response),
        "platformMismatch": str(response.get("Message")) if response.get("PlatformMismatch") is True else None,
        "lidPolicyHeldBack": _lid_held_back(response),
        "powerSource": power_source,
        "powerSourceText": power_source_text,
        "settings": settings,
        "hooks": hooks,
        "copilotStopWarnings": _copilot_stop_warnings(),
        "agentKeepAwake": keep_awake,
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
        "verdict": _verdict(capabilities, hooks, settings),
    }


def _agent_keep_awake(context: CliContext, response: dict[str, Any]) -> dict[str, Any]:
    """What the agents hold now (the OS's blockers an agent holds) and what their configs make them hold."""
    from .agent_keep_awake import configured_holders, live_holders, watched_from_reply

    ignores = load_settings_report(context.paths.settings_file).settings.suspend_ignores_other_blockers
    live = live_holders(context.platform, watched_from_reply(response if response.get("Succeeded") else None),
                        ignores_other_blockers=ignores)
    return {"live": live, "configured": configured_holders()}


def _keep_awake_lines(keep_awake: dict[str, Any] | None) -> list[str]:
    if not keep_awake:
        return []
    lines = [_("Agents' own keep-awake:")]
    live = keep_awake.get("live") or []
    lines += [_("  Holding now: {holder}").format(holder=holder["text"]) for holder in live] or \
        [_("  Holding now: no agent holds a sleep blocker")]
    lines += [f"  {item['agent']}: {item['text']}" for item in keep_awake.get("configured") or []]
    return lines


def _fake_platform(platform: Platform) -> dict[str, str] | None:
    """The fake platform protects nothing: doctor says which switch chose it."""
    from .. import switches

    if platform.name != "fake":
        return None
    reason = switches.fake_platform_reason() or "chosen by the caller"
    return {"reason": reason, "text": switches.fake_platform_line(reason)}


def _runtime_platform(response: dict[str, Any]) -> str | None:
    """The running runtime's platform and its use (``linux (real)``, ``fake (demo)``), from its reply."""
    name, use = response.get("Platform"), response.get("PlatformUse")
    if not isinstance(name, str):
        return None
    return f"{name} ({use})" if isinstance(use, str) and use else name


def _lid_held_back(response: dict[str, Any]) -> str | None:
    """Why the running runtime leaves the lid-close action alone while it keeps awake (a permission)."""
    note = response.get("LidPolicyHeldBack") if response.get("Succeeded") else None
    return note if isinstance(note, str) and note else None


def _settings_lines(settings: dict[str, Any]) -> list[str]:
    path = settings["file"]
    if settings["error"]:
        return [_("Settings file: {path} (unusable; the defaults are used, the file is left as it is)").format(
            path=path), f"  {settings['error']}"]
    if not settings["exists"]:
        return [_("Settings file: {path} (not created yet; the defaults are used)").format(path=path)]
    problems = settings["problems"]
    if not problems:
        return [_("Settings file: {path} (ok)").format(path=path)]
    return [_("Settings file: {path} ({count} stored value(s) not used as they are)").format(
        path=path, count=len(problems)), *(f"  {problem}" for problem in problems)]


def _runtime_line(report: dict[str, Any]) -> str:
    if report.get("platformMismatch"):
        return _("Runtime: {mismatch}").format(mismatch=report["platformMismatch"])
    if not report["runtimeRunning"]:
        return _("Runtime: not running")
    platform = report.get("runtimePlatform")
    return _("Runtime: running on platform {platform}").format(platform=platform) if platform \
        else _("Runtime: running")


def format_doctor_report(report: dict[str, Any]) -> list[str]:
    lines = [
        _("lidguard {version} on {python} ({executable})").format(
            version=report["version"], python=report["python"], executable=report["executable"]),
        _("Host OS: {host}    Platform backend: {platform}").format(host=report["hostOs"], platform=report["platform"]),
        _runtime_line(report),
    ]
    if report.get("fakePlatform"):
        lines.append(fake_platform_text(report["fakePlatform"]))
    if report.get("lidPolicyHeldBack"):
        lines.append(_("Lid-close action held back: {note}").format(note=runtime_text(report["lidPolicyHeldBack"])))
    lines.append(_("Native modules:"))
    for module in report["nativeModules"]:
        state = _("active") if module["active"] else _("pure-Python fallback")
        lines.append(f"  {module['name']}: {state} ({module['reason']})")
    lines.append(_("Capabilities:"))
    lines += [f"  {item['name']}: {capability_text(item)}" for item in report["capabilities"]]
    lines.append(_("Power source: {source}").format(source=report["powerSourceText"]))
    lines += _settings_lines(report["settings"])
    lines.append(_("Agent hooks:") if report["hooks"] else _("Agent hooks: no agent CLI configuration folder found"))
    for hook in report["hooks"]:
        state = {"Installed": _("installed"),
                 "NeedsUpdate": _("installed, needs update (run: lidguard hook-install)"),
                 "NotInstalled": _("not installed")}.get(hook["status"], hook["status"])
        if hook["problem"]:
            state = _("broken: {problem}").format(problem=hook["problem"])
        lines.append(_("  {provider} hooks: {state}").format(provider=hook["provider"], state=state))
        if hook.get("runner"):
            lines.append(_("    runs: {runner}").format(runner=hook["runner"]))
    lines += report.get("copilotStopWarnings", [])
    lines += _keep_awake_lines(report.get("agentKeepAwake"))
    lines += [_("File problem: {problem}").format(problem=problem) for problem in report["fileProblems"]]
    lines.append(_("Paths:"))
    for name, path in report["paths"].items():
        lines.append(f"  {name}: {path}")
    verdict = _verdict(report["capabilities"], report["hooks"], report["settings"], translate=_)["text"]
    lines.append(_("Verdict: {verdict}").format(verdict=verdict))
    return lines


def fake_platform_text(fake: dict[str, str]) -> str:
    """``switches.fake_platform_line`` (English in the JSON) in the user's language."""
    from .. import switches

    if fake.get("text") != switches.fake_platform_line(fake.get("reason")):
        return str(fake.get("text"))
    return _("platform: fake ({reason}) - protects nothing").format(reason=fake.get("reason") or
                                                                     _("chosen by the caller"))
