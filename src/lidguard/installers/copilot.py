"""GitHub Copilot CLI: one managed file, ``$COPILOT_HOME/hooks/lidguard.json`` (COPILOT_HOME replaces
``~/.copilot``). Copilot runs hooks from ``settings.json`` AND ``hooks/*.json`` (both fire), so our
entries live only in the managed file: install takes any LidGuard entry out of ``settings.json`` /
``config.json`` and drops the older ``lidguard-copilot-cli.json`` when it holds only ours.
The command sits under ``bash`` (``powershell`` on Windows), ``lidguard copilot-hook --event <event>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import (
    DEFAULT_HOOK_TIMEOUT_SECONDS,
    InstallError,
    InstallResult,
    default_shell,
    env_dir,
    home,
    hook_command,
    is_managed_command,
    load_json_object,
    remove_file,
    render_json,
    write_config,
)

__all__ = ["EVENTS", "copilot_home", "foreign_agent_stop_warnings", "install", "managed_file", "remove", "snippet",
           "status_lines"]

SUB = "copilot-hook"
MANAGED_NAME = "lidguard.json"
LEGACY_NAME = "lidguard-copilot-cli.json"
EVENTS = ("sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "permissionRequest", "notification",
          "subagentStart", "subagentStop", "agentStop", "sessionEnd", "errorOccurred")
COMMAND_KEYS = ("bash", "powershell", "command")
SETTINGS_FILES = ("settings.json", "config.json")


def copilot_home() -> Path:
    return env_dir("COPILOT_HOME", home() / ".copilot")


def config_root() -> Path:
    return copilot_home()


def locked_files(config: Path | None) -> list[Path]:
    """The managed file, and without ``--config`` the settings files and the legacy file it cleans up."""
    files = [managed_file(config).absolute()]
    if config is None:
        folder = copilot_home().absolute()
        files += [folder / name for name in SETTINGS_FILES]
        files.append(folder / "hooks" / LEGACY_NAME)
    return files


def managed_file(config: Path | None = None) -> Path:
    return (config if config is not None else copilot_home() / "hooks" / MANAGED_NAME).absolute()


def snippet(stop_timeout: int) -> dict[str, Any]:
    """The whole managed file."""
    shell = default_shell()
    key = "powershell" if shell == "powershell" else "bash"
    hooks = {}
    for event in EVENTS:
        timeout = stop_timeout if event == "agentStop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        hooks[event] = [{"type": "command", key: hook_command(f"{SUB} --event {event}", shell=shell),
                         "timeoutSec": timeout}]
    return {"version": 1, "hooks": hooks}


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and any(is_managed_command(handler.get(key), SUB, "*") for key in COMMAND_KEYS)


def _strip_ours(root: dict[str, Any]) -> bool:
    """Removes our handlers from a Copilot ``{"hooks": {event: [handler, ...]}}`` object."""
    table = root.get("hooks")
    if not isinstance(table, dict):
        return False
    changed = False
    for event in list(table):
        handlers = table[event]
        if not isinstance(handlers, list):
            continue
        kept = [handler for handler in handlers if not _is_ours(handler)]
        if len(kept) != len(handlers):
            changed = True
            if kept:
                table[event] = kept
            else:
                del table[event]
    if changed and not table:
        del root["hooks"]
    return changed


def _ours_in_settings(result: InstallResult | None) -> list[Path]:
    """Settings files holding LidGuard hooks; with ``result``, takes them out (backup first)."""
    found = []
    for name in SETTINGS_FILES:
        path = copilot_home() / name
        try:
            root, original = load_json_object(path, "Copilot CLI settings file")
        except InstallError as error:
            if result is not None:
                result.notes.append(str(error))
            continue
        if not _strip_ours(root):
            continue
        found.append(path)
        if result is not None:
            saved = write_config(path, render_json(root, original), "Copilot CLI settings file")
            result.backups += [saved] if saved else []
            result.notes.append(f"Took the LidGuard hooks out of {path} (the managed file holds them; both would run).")
    return found


def _legacy_only_ours(path: Path) -> bool:
    try:
        root, original = load_json_object(path, "Copilot CLI hooks file")
    except InstallError:
        return False
    table = root.get("hooks")
    if original is None or not isinstance(table, dict):
        return False
    handlers = [handler for value in table.values() if isinstance(value, list) for handler in value]
    return bool(handlers) and all(_is_ours(handler) for handler in handlers)


def install(config: Path | None, stop_timeout: int) -> InstallResult:
    path = managed_file(config)
    current, original = load_json_object(path, "LidGuard Copilot CLI hooks file")
    wanted = snippet(stop_timeout)
    result = InstallResult("GitHubCopilot", path, False, "")
    if original is None or current != wanted:
        saved = write_config(path, render_json(wanted, original), "LidGuard Copilot CLI hooks file")
        result.backups += [saved] if saved else []
        result.changed = True
    if config is None:
        result.changed |= bool(_ours_in_settings(result))
        legacy = copilot_home() / "hooks" / LEGACY_NAME
        if _legacy_only_ours(legacy):
            saved = remove_file(legacy, "Copilot CLI hooks file")
            result.backups += [saved] if saved else []
            result.notes.append(f"Removed the older LidGuard hooks file {legacy}.")
            result.changed = True
    result.message = ("Installed the LidGuard Copilot CLI hooks." if result.changed
                      else "The LidGuard Copilot CLI hooks are already installed.")
    return result


def remove(config: Path | None) -> InstallResult:
    path = managed_file(config)
    load_json_object(path, "LidGuard Copilot CLI hooks file")  # garbage: refused, left alone
    result = InstallResult("GitHubCopilot", path, False, "")
    if path.is_file():
        saved = remove_file(path, "LidGuard Copilot CLI hooks file")
        result.backups += [saved] if saved else []
        result.changed = True
    if config is None:
        result.changed |= bool(_ours_in_settings(result))
        legacy = copilot_home() / "hooks" / LEGACY_NAME
        if _legacy_only_ours(legacy):
            saved = remove_file(legacy, "Copilot CLI hooks file")
            result.backups += [saved] if saved else []
            result.changed = True
    result.message = ("Removed the LidGuard Copilot CLI hooks." if result.changed
                      else "No LidGuard Copilot CLI hooks were installed.")
    return result


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    path = managed_file(config)
    current, original = load_json_object(path, "LidGuard Copilot CLI hooks file")
    wanted = snippet(stop_timeout)
    if original is None:
        status = "NotInstalled"
    else:
        status = "Installed" if current == wanted else "NeedsUpdate"
    table = current.get("hooks") if isinstance(current.get("hooks"), dict) else {}
    lines = [f"Status: {status}", f"Config: {path}", f"Config exists: {original is not None}"]
    for event in EVENTS:
        handlers = table.get(event) if isinstance(table, dict) else None
        present = isinstance(handlers, list) and any(_is_ours(handler) for handler in handlers)
        lines.append(f"{event}: {present}")
    if config is None:
        for duplicate in _ours_in_settings(None):
            lines.append(f"Warning: {duplicate} also holds LidGuard hooks (every event would run twice); "
                         "run `lidguard hook-install --provider copilot` to take them out.")
        settings, _ = _safe_settings()
        if settings.get("disableAllHooks") is True:
            lines.append("Warning: disableAllHooks is true in the Copilot CLI settings; no hook runs.")
        lines += foreign_agent_stop_warnings()
    return lines


def _safe_settings() -> tuple[dict[str, Any], str | None]:
    try:
        return load_json_object(copilot_home() / "settings.json", "Copilot CLI settings file")
    except InstallError:
        return {}, None


# -- foreign agentStop hooks (REFERENCE row 50) --------------------------------------------------------
STOP_EVENTS = ("agentStop", "Stop")
MAX_SCANNED_FILES = 200  # per folder: a hooks folder with more files is not read further


def _stop_hook_files(cwd: Path) -> list[Path]:
    """Every file Copilot CLI may read hooks from, user level first, then the repository at ``cwd``."""
    files: list[Path] = []
    for folder in (copilot_home() / "hooks", cwd / ".github" / "hooks"):
        try:
            files += sorted(folder.glob("*.json"))[:MAX_SCANNED_FILES]
        except OSError:
            continue
    files += [copilot_home() / name for name in SETTINGS_FILES]
    files += [cwd / ".github" / "copilot" / name for name in SETTINGS_FILES]
    return files


def _foreign_stop_commands(path: Path) -> list[tuple[str, str]]:
    """(event, command) of every non-LidGuard agentStop/Stop handler in ``path``; odd files hold none."""
    try:
        if not path.is_file():  # folders, FIFOs, sockets, dangling links: never opened
            return []
        root, _ = load_json_object(path, "Copilot CLI hooks file")
    except (InstallError, OSError, ValueError):
        return []
    table = root.get("hooks")
    if not isinstance(table, dict):
        return []
    found = []
    for event in STOP_EVENTS:
        handlers = table.get(event)
        for handler in handlers if isinstance(handlers, list) else []:
            if not isinstance(handler, dict) or _is_ours(handler):
                continue
            commands = [value for value in (handler.get(key) for key in COMMAND_KEYS) if isinstance(value, str)]
            if commands:
                found.append((event, commands[0]))
    return found


def _printable(text: str, limit: int = 120) -> str:
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def foreign_agent_stop_warnings(cwd: Path | None = None) -> list[str]:
    """One warning per file holding another agentStop/Stop hook: it can answer ``decision: block`` and
    continue the agent after LidGuard's stop (the session restarts; the laptop may stay awake)."""
    if cwd is None:
        try:
            cwd = Path.cwd()
        except OSError:  # the working folder was deleted: the user level is still scanned
            cwd = copilot_home() / "hooks" / "missing-working-folder"
    here = cwd
    warnings = []
    for path in _stop_hook_files(here):
        commands = _foreign_stop_commands(path)
        if not commands:
            continue
        event, command = commands[0]
        more = f" and {len(commands) - 1} more" if len(commands) > 1 else ""
        warnings.append(_printable(
            f"Warning: {path} has a non-LidGuard {event} hook ({command!r}{more}); it can block the stop "
            "(decision: block) and keep the Copilot agent going after LidGuard's stop.", 2000))
    return warnings
