"""GitHub Copilot CLI (AGENT_CLIS.md): ``lidguard copilot-hook --event <event>`` from the managed
``$COPILOT_HOME/hooks/lidguard.json`` (default ``~/.copilot``; its installer is below, with the settings
clean-up and the foreign agentStop warnings of hook-status and doctor).

Payloads are camelCase and mostly lack an event name (``--event`` names it; the PascalCase aliases
``Stop``/``UserPromptSubmit`` are accepted); there is no tool call id, so tool calls pair by tool name.
Issue 35.3: ``subagentStart``/``subagentStop`` keep background work in flight (by the id or name the payload
gives), ``notification`` ``agent_idle`` soft-locks and ``shell_completed`` is activity, ``errorOccurred``
ends the turn like a failed stop unless Copilot recovers (``recoverable``) or it is a tool's error.
Ancestry: ``hook <- copilot`` (native, comm ``MainThread``) ``<- node .../.bin/copilot``; also ``gh copilot``
and the ``gh-copilot`` extension. Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, SOFT_LOCK_NOTIFICATIONS, Action, background_work, stop_action, stop_with_detail, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.common import InstallResult
    from ..platform.process_info import ProcessInfo
    from .keep_awake import OwnKeepAwake

KEY = "copilot"
PROVIDER = "GitHubCopilot"
DISPLAY = "GitHub Copilot CLI"
ALIASES = ("github-copilot", "githubcopilot")
CONFIG_TEXT = "hooks/lidguard.json ($COPILOT_HOME or ~/.copilot)"
HOOK_HELP = ("GitHub Copilot CLI hook (--event <name>; event JSON on stdin).",
             "Copilot CLI command hook: userPromptSubmitted starts the session, tool use is activity, "
             "subagents are work in flight, agent_idle soft-locks, agentStop/errorOccurred end the turn, "
             "sessionEnd the session; with the lid closed it answers permissionRequest and denies "
             "ask_user. Always exits 0.")
EVENT_OPTION = True  # `--event NAME`: the payload mostly lacks one
PROCESS_COMMANDS = frozenset({"copilot"})
PROCESS_PACKAGES = ("@github/copilot",)
QUIET_TOOLS = frozenset({"", "ask_user"})
LOG_DETAILS = (("tool", ("toolName", "tool_name")), ("source", ("source",)),
               ("stopReason", ("stopReason", "stop_reason")), ("sessionEndReason", ("reason",)),
               ("notificationType", ("notificationType", "notification_type")),
               ("errorContext", ("errorContext", "error_context")), ("recoverable", ("recoverable",)))
_ALIASES = {"stop": "agentstop", "userpromptsubmit": "userpromptsubmitted"}
SOFT_LOCKS = SOFT_LOCK_NOTIFICATIONS | {"agent_idle"}
ACTIVITY_NOTIFICATIONS = frozenset({"shell_completed"})  # a background shell ended: the agent is at work
# The subagent's id where the payload gives one, else its name (pairs start and stop like tool names).
_SUBAGENT_KEYS = ("agentId", "agent_id", "toolCallId", "tool_call_id", "agentName", "agent_name", "agentType",
                  "agent_type")


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    name = _ALIASES.get(name, name)
    if name == "userpromptsubmitted":
        return Action("start", prompt=payload.text("prompt"))
    if name == "pretooluse":
        tool = payload.text("toolName", "tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        # Copilot gives no tool call id (AGENT_CLIS.md): pre and post pair by the tool's name.
        return tool_activity(event, tool, QUIET_TOOLS, payload, (), "Running")
    if name == "posttooluse":
        return tool_activity(event, payload.text("toolName", "tool_name"), QUIET_TOOLS, payload, (), "Finished")
    if name == "permissionrequest":
        return Action("permission")
    if name == "notification":
        kind = payload.text("notificationType", "notification_type").lower()
        if kind in SOFT_LOCKS:
            return Action("softlock", kind)
        return Action("activity", kind) if kind in ACTIVITY_NOTIFICATIONS else IGNORE
    if name in ("subagentstart", "subagentstop"):
        return background_work(event, payload, "subagent", _SUBAGENT_KEYS,
                               "Running" if name == "subagentstart" else "Finished")
    if name == "erroroccurred":
        context = payload.text("errorContext", "error_context")
        if payload.flag("recoverable") or context == "tool_execution":  # Copilot goes on (a retry, a tool result)
            return Action("activity", f"{event}:{context or 'recoverable'}")
        return stop_action(payload, f"{event}:{context}" if context else event, provider_session_end=False,
                           turn_end=True)
    if name == "agentstop":
        return stop_with_detail(payload, event, "stopReason", "stop_reason", blocking=True, turn_end=True)
    if name == "sessionend":
        return stop_with_detail(payload, event, "reason")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """permissionRequest: the flat shape (Copilot ignores the nested one)."""
    from ..hooks.outputs import behavior

    return behavior(decision)


def ask_user_output() -> dict[str, Any]:
    """preToolUse of ``ask_user``: ``permissionDecision: deny``."""
    from ..hooks.outputs import ASK_USER_DENY_REASON, permission_decision_deny

    return permission_decision_deny(ASK_USER_DENY_REASON)


def matches_process(process: ProcessInfo, names: set[str]) -> bool:
    """``gh copilot ...`` (the gh command) or the ``gh-copilot`` extension binary."""
    if "gh-copilot" in names:
        return True
    if "gh" not in names:
        return False
    operands = [argument for argument in process.cmdline[1:] if not argument.startswith("-")]
    return operands[:1] == ["copilot"]  # not `gh issue list --search copilot`


# -- its own keep-awake (issue 35.5; AGENT_CLIS_NEW.md, from its docs - not observed in the pinned 1.0.102):
# ``/keep-alive`` is a command typed inside a session, not a setting in a file lidguard could read.
def own_keep_awake(env: Mapping[str, str]) -> OwnKeepAwake:
    from .keep_awake import OwnKeepAwake

    return OwnKeepAwake(DISPLAY, "/keep-alive, typed in a session, keeps the machine awake (not a setting "
                                 "lidguard can read). While it stays on after that session ends it may block "
                                 "lidguard's suspend; the live list above names it when its blocker is held.",
                        True, "/keep-alive", None)


# -- its installer: one managed file, ``$COPILOT_HOME/hooks/lidguard.json`` (COPILOT_HOME replaces ``~/.copilot``).
# Copilot runs hooks from ``settings.json`` AND ``hooks/*.json`` (both fire), so our entries live only in the
# managed file: install takes any LidGuard entry out of ``settings.json`` / ``config.json`` and drops the older
# ``lidguard-copilot-cli.json`` when it holds only ours. The command sits under ``bash`` (``powershell`` on
# Windows), ``lidguard copilot-hook --event <event>``.
MANAGED_NAME = "lidguard.json"
LEGACY_NAME = "lidguard-copilot-cli.json"
EVENTS = ("sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "permissionRequest", "notification",
          "subagentStart", "subagentStop", "agentStop", "sessionEnd", "errorOccurred")
COMMAND_KEYS = ("bash", "powershell", "command")
SETTINGS_FILES = ("settings.json", "config.json")
MANAGED_WHAT = "LidGuard Copilot CLI hooks file"
SETTINGS_WHAT = "Copilot CLI settings file"
HOOKS_WHAT = "Copilot CLI hooks file"


def copilot_home() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("COPILOT_HOME", home() / ".copilot")


def managed_file(config: Path | None = None) -> Path:
    return (config if config is not None else copilot_home() / "hooks" / MANAGED_NAME).absolute()


def snippet(stop_timeout: int) -> dict[str, Any]:
    """The whole managed file."""
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command

    shell = default_shell()
    key = "powershell" if shell == "powershell" else "bash"
    hooks = {}
    for event in EVENTS:
        timeout = stop_timeout if event == "agentStop" else DEFAULT_HOOK_TIMEOUT_SECONDS
        hooks[event] = [{"type": "command", key: hook_command(f"{KEY}-hook --event {event}", shell=shell),
                         "timeoutSec": timeout}]
    return {"version": 1, "hooks": hooks}


def installer() -> _Installer:
    return _Installer()


class _Installer:
    """hook-install / hook-remove / hook-status for the managed file (``config`` names another file; only
    without it are the settings files and the legacy file cleaned up and checked)."""

    EVENTS = EVENTS

    def config_root(self) -> Path:
        return copilot_home()

    def locked_files(self, config: Path | None) -> list[Path]:
        """The managed file, and without ``--config`` the settings files and the legacy file it cleans up."""
        files = [managed_file(config).absolute()]
        if config is None:
            folder = copilot_home().absolute()
            files += [folder / name for name in SETTINGS_FILES]
            files.append(folder / "hooks" / LEGACY_NAME)
        return files

    def install(self, config: Path | None, stop_timeout: int) -> InstallResult:
        from ..installers.common import InstallResult, load_json_object, render_json, write_config

        path = managed_file(config)
        current, original = load_json_object(path, MANAGED_WHAT)
        wanted = snippet(stop_timeout)
        result = InstallResult(PROVIDER, path, False, "")
        if original is None or current != wanted:
            _changed(result, write_config(path, render_json(wanted, original), MANAGED_WHAT))
        _take_ours_out_elsewhere(result, config, say_legacy=True)
        result.message = ("Installed the LidGuard Copilot CLI hooks." if result.changed
                          else "The LidGuard Copilot CLI hooks are already installed.")
        return result

    def remove(self, config: Path | None) -> InstallResult:
        from ..installers.common import InstallResult, load_json_object, remove_file

        path = managed_file(config)
        load_json_object(path, MANAGED_WHAT)  # garbage: refused, left alone
        result = InstallResult(PROVIDER, path, False, "")
        if path.is_file():
            _changed(result, remove_file(path, MANAGED_WHAT))
        _take_ours_out_elsewhere(result, config, say_legacy=False)
        result.message = ("Removed the LidGuard Copilot CLI hooks." if result.changed
                          else "No LidGuard Copilot CLI hooks were installed.")
        return result

    def status_lines(self, config: Path | None, stop_timeout: int) -> list[str]:
        from ..installers.common import load_json_object

        path = managed_file(config)
        current, original = load_json_object(path, MANAGED_WHAT)
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
            if _settings().get("disableAllHooks") is True:
                lines.append("Warning: disableAllHooks is true in the Copilot CLI settings; no hook runs.")
            lines += foreign_agent_stop_warnings()
        return lines


def _is_ours(handler: Any) -> bool:
    from ..installers.common import is_managed_command

    return isinstance(handler, dict) and any(is_managed_command(handler.get(key), f"{KEY}-hook", "*")
                                             for key in COMMAND_KEYS)


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


def _changed(result: InstallResult, saved: Path | None) -> None:
    """A file written or removed: the result changed, with the file's backup when one was made."""
    result.backups += [saved] if saved else []
    result.changed = True


def _take_ours_out_elsewhere(result: InstallResult, config: Path | None, *, say_legacy: bool) -> None:
    """Without ``--config``: our entries out of the settings files, and the older managed file deleted when it
    holds only ours."""
    from ..installers.common import remove_file

    if config is not None:
        return
    result.changed |= bool(_ours_in_settings(result))
    legacy = copilot_home() / "hooks" / LEGACY_NAME
    if _legacy_only_ours(legacy):
        _changed(result, remove_file(legacy, HOOKS_WHAT))
        if say_legacy:
            result.notes.append(f"Removed the older LidGuard hooks file {legacy}.")


def _ours_in_settings(result: InstallResult | None) -> list[Path]:
    """Settings files holding LidGuard hooks; with ``result``, takes them out (backup first)."""
    from ..installers.common import InstallError, load_json_object, render_json, write_config

    found = []
    for name in SETTINGS_FILES:
        path = copilot_home() / name
        try:
            root, original = load_json_object(path, SETTINGS_WHAT)
        except InstallError as error:
            if result is not None:
                result.notes.append(str(error))
            continue
        if not _strip_ours(root):
            continue
        found.append(path)
        if result is not None:
            _changed(result, write_config(path, render_json(root, original), SETTINGS_WHAT))
            result.notes.append(f"Took the LidGuard hooks out of {path} (the managed file holds them; both would run).")
    return found


def _legacy_only_ours(path: Path) -> bool:
    from ..installers.common import InstallError, load_json_object

    try:
        root, original = load_json_object(path, HOOKS_WHAT)
    except InstallError:
        return False
    table = root.get("hooks")
    if original is None or not isinstance(table, dict):
        return False
    handlers = [handler for value in table.values() if isinstance(value, list) for handler in value]
    return bool(handlers) and all(_is_ours(handler) for handler in handlers)


def _settings() -> dict[str, Any]:
    """``settings.json`` as an object; one that cannot be read is empty."""
    from ..installers.common import InstallError, load_json_object

    try:
        return load_json_object(copilot_home() / "settings.json", SETTINGS_WHAT)[0]
    except InstallError:
        return {}


# -- foreign agentStop hooks (REFERENCE row 50): hook-status and doctor name them ---------------------------
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
    from ..installers.common import InstallError, load_json_object

    try:
        if not path.is_file():  # folders, FIFOs, sockets, dangling links: never opened
            return []
        root, _ = load_json_object(path, HOOKS_WHAT)
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
    from pathlib import Path

    if cwd is None:
        try:
            cwd = Path.cwd()
        except OSError:  # the working folder was deleted: the user level is still scanned
            cwd = copilot_home() / "hooks" / "missing-working-folder"
    warnings = []
    for path in _stop_hook_files(cwd):
        commands = _foreign_stop_commands(path)
        if not commands:
            continue
        event, command = commands[0]
        more = f" and {len(commands) - 1} more" if len(commands) > 1 else ""
        warnings.append(_printable(
            f"Warning: {path} has a non-LidGuard {event} hook ({command!r}{more}); it can block the stop "
            "(decision: block) and keep the Copilot agent going after LidGuard's stop.", 2000))
    return warnings
