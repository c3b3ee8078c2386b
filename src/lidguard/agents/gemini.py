"""Gemini CLI 0.61 (AGENT_CLIS_MORE.md 1): ``lidguard gemini-hook`` from the ``hooks`` object of
``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``; written through ``installers/settings_hooks.py``).

BeforeAgent carries the prompt (again, with the reason, after a blocking AfterAgent), AfterAgent ends the
turn and may block, SessionEnd ends the session. No hook can approve a tool, so BeforeTool is a deny-only
permission for the tools Gemini confirms, never for a tool the command line lets run unasked. No tool
call id: tool calls pair by name. Ancestry: ``hook <- node .../.bin/gemini`` (the relaunched child)
``<- node .../.bin/gemini`` (launcher). Stdlib only.
"""

from __future__ import annotations

import os
import sys

from ..ipc.limits import MAX_TOOL_CALL_ID_CHARS
from . import IGNORE, PERMISSION_PROMPT, Action, stop_action, stop_with_detail, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.settings_hooks import SettingsInstaller

KEY = "gemini"
PROVIDER = "Gemini"
DISPLAY = "Gemini CLI"
ALIASES = ("gemini-cli",)
CONFIG_TEXT = "settings.json ($GEMINI_CLI_HOME/.gemini or ~/.gemini)"
HOOK_HELP = ("Gemini CLI hook (reads the event JSON on stdin).",
             "Gemini CLI command hook: BeforeAgent starts the session, BeforeTool/AfterTool are activity, "
             "a ToolPermission notification soft-locks it, AfterAgent/SessionEnd end it; with the lid "
             "closed and the decision Deny it denies BeforeTool of tools Gemini would confirm (never under "
             "--yolo, --approval-mode auto_edit for edits, or --allowed-tools; nothing can approve a tool "
             "there). Always exits 0.")
PROCESS_COMMANDS = frozenset({"gemini"})
PROCESS_PACKAGES = ("@google/gemini-cli",)
QUIET_TOOLS = frozenset({""})
# Tools its default policy confirms (AGENT_CLIS_MORE.md 1.5); MCP tools (``mcp_context``) too.
CONFIRMED_TOOLS = frozenset({"run_shell_command", "write_file", "replace", "web_fetch"})
LOG_DETAILS = (("tool", ("tool_name",)), ("reason", ("reason",)), ("notificationType", ("notification_type",)),
               ("transcriptPath", ("transcript_path",)))


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "beforeagent":
        return Action("start", prompt=payload.text("prompt"))
    if name == "beforetool":
        tool = payload.text("tool_name")
        if tool.lower() == "ask_user":
            return Action("ask_user")
        if tool in CONFIRMED_TOOLS or isinstance(payload.data.get("mcp_context"), dict):
            # Gemini gives no call id: the tool name pairs BeforeTool with AfterTool (as for Copilot).
            return Action("permission", f"{event}:{tool}", deny_only=True, tool=tool,
                          tool_call_id=f"tool:{tool}"[:MAX_TOOL_CALL_ID_CHARS], tool_state="Running")
        return tool_activity(event, tool, QUIET_TOOLS, payload, (), "Running")
    if name == "aftertool":
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, (), "Finished")
    if name == "notification":
        kind = payload.text("notification_type").lower()
        return Action("softlock", PERMISSION_PROMPT) if kind == "toolpermission" else IGNORE
    if name == "afteragent":
        return stop_action(payload, event, blocking=True, message_keys=("prompt_response",))
    if name == "sessionend":
        return stop_with_detail(payload, event, "reason")
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """BeforeTool: ``{"decision": "deny", ...}`` only; no hook output approves a tool there."""
    from ..hooks.outputs import DENY_MESSAGE, decision_deny

    return decision_deny(DENY_MESSAGE) if decision == "Deny" else None


def ask_user_output() -> dict[str, Any]:
    from ..hooks.outputs import ASK_USER_DENY_REASON, decision_deny

    return decision_deny(ASK_USER_DENY_REASON)


_VALUE_OPTIONS = frozenset({"-p", "--prompt", "-i", "--prompt-interactive", "-m", "--model"})
_EDIT_TOOLS = frozenset({"write_file", "replace"})


def _unasked(arguments: tuple[str, ...]) -> tuple[str, frozenset[str]]:
    """(approval mode, tools allowed without confirmation) from a Gemini CLI command line: ``--yolo``/``-y``,
    ``--approval-mode MODE`` (the last one wins) and ``--allowed-tools NAME...``. YOLO exists only on the
    command line (the settings offer default, auto_edit and plan)."""
    mode = "default"
    allowed: set[str] = set()
    skip = collecting = False
    for index, word in enumerate(arguments):
        if skip:
            skip = False
            continue
        if collecting and not word.startswith("-"):
            allowed.update(word.split(","))
            continue
        collecting = False
        name, equals, value = word.partition("=")
        if word in _VALUE_OPTIONS:
            skip = True  # a prompt or model that happens to read "--yolo"
        elif word in ("--yolo", "-y", "--yolo=true"):
            mode = "yolo"
        elif name == "--approval-mode":
            mode = value.lower() if equals else (arguments[index + 1].lower() if index + 1 < len(arguments) else mode)
            skip = not equals
        elif name == "--allowed-tools":
            allowed.update(value.split(",") if equals else ())
            collecting = not equals
    return mode, frozenset(allowed)


def approved_without_asking(arguments: tuple[str, ...], tool: str) -> bool:
    """Whether the agent started with ``arguments`` runs ``tool`` without asking anyone: a closed-lid Deny
    would only stop work nobody had to approve (``--yolo``, ``auto_edit`` for file edits, a tool named in
    ``--allowed-tools``). A mode switched inside the TUI later is not visible here; a headless run never
    registers a tool that would ask."""
    mode, allowed = _unasked(arguments)
    return mode == "yolo" or tool in allowed or (mode == "auto_edit" and tool in _EDIT_TOOLS)


# -- its installer: the ``hooks`` object of its settings.json (installers/settings_hooks.py) -------------------
# Observed in 0.61.0 (AGENT_CLIS_MORE.md 1): ``timeout`` is in milliseconds; ``hooksConfig.enabled: false``
# turns every hook off and ``hooksConfig.disabled`` lists handler names it skips; folder trust is on by
# default, and in a folder Gemini does not trust it runs no hooks at all, the user's own included.
# hook-status says so for the current folder (``trustedFolders.json``: the longest matching rule wins;
# ``TRUST_PARENT`` trusts the rule's parent; ``GEMINI_CLI_TRUST_WORKSPACE`` overrides it).
HOOK_NAME = "lidguard"
# event -> matcher (BeforeTool/AfterTool take a tool-name regex; lifecycle events take none)
EVENTS: dict[str, str | None] = {
    "BeforeAgent": None,
    "BeforeTool": "*",
    "AfterTool": "*",
    "Notification": None,
    "AfterAgent": None,
    "SessionEnd": None,
}
_TRUSTING = ("TRUST_FOLDER", "TRUST_PARENT")


def config_root() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("GEMINI_CLI_HOME", home()) / ".gemini"


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook", shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "name": HOOK_NAME, "command": command,
                                      "timeout": 1000 * (stop_timeout if event == "AfterAgent"
                                                         else DEFAULT_HOOK_TIMEOUT_SECONDS)})
            for event, matcher in EVENTS.items()]


def installer() -> SettingsInstaller:
    from ..installers.settings_hooks import SettingsInstaller

    return SettingsInstaller(sys.modules[__name__], _status)


def _trusted_folders_file() -> Path:
    from pathlib import Path

    value = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH", "").strip()
    return Path(value) if value else config_root() / "trustedFolders.json"


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def _inside(folder: str, parent: str) -> bool:
    return folder == parent or folder.startswith(parent.rstrip(os.sep) + os.sep)


def folder_trust(settings: dict[str, Any], folder: str) -> tuple[bool | None, str]:
    """(trusted: True/False/None = Gemini asks, the reason) for ``folder``, as Gemini CLI 0.61 decides it."""
    workspace = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE", "").strip()
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or workspace == "false":
        return False, "GEMINI_RESTRICTED_MODE/GEMINI_CLI_TRUST_WORKSPACE distrust every folder"
    if workspace == "true":
        return True, "GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder"
    security = settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return True, "folder trust is off (security.folderTrust.enabled is false)"
    from ..installers.common import InstallError, load_json_object

    rules_file = _trusted_folders_file()
    try:
        rules, _ = load_json_object(rules_file, "Gemini CLI trusted folders file")
    except InstallError as error:
        return False, f"{error} Gemini CLI refuses to start until it is fixed"
    location = _real(folder)
    best, level = -1, ""
    for rule, value in rules.items():
        if value not in (*_TRUSTING, "DO_NOT_TRUST"):
            continue
        effective = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        if _inside(location, _real(effective)) and len(rule) > best:
            best, level = len(rule), value
    if level in _TRUSTING:
        return True, f"{level} in {rules_file}"
    if level:
        return False, f"DO_NOT_TRUST in {rules_file}"
    return None, f"no rule in {rules_file}; Gemini CLI asks on start (a headless run exits 55)"


def _status(root: dict[str, Any], head: list[str], events: list[str]) -> list[str]:
    hooks_config = root.get("hooksConfig")
    if not isinstance(hooks_config, dict):
        hooks_config = {}
    enabled = hooks_config.get("enabled") is not False
    disabled = hooks_config.get("disabled")
    named_off = isinstance(disabled, list) and HOOK_NAME in disabled
    folder = os.getcwd()
    trusted, why = folder_trust(root, folder)
    word = {True: "trusted", False: "not trusted", None: "not decided"}[trusted]
    lines = [*head, f"Hooks enabled: {enabled and not named_off}", f"Current folder: {folder}",
             f"Current folder trust: {word} ({why})", *events]
    if not enabled:
        lines.append("Warning: hooksConfig.enabled is false in this settings file; Gemini CLI runs no hooks.")
    if named_off:
        lines.append(f"Warning: hooksConfig.disabled lists \"{HOOK_NAME}\"; Gemini CLI skips LidGuard's hooks.")
    if trusted is not True:
        lines.append("Warning: Gemini CLI runs no hooks at all, user hooks included, in a folder it does not "
                     "trust; trust each project folder (Gemini's trust dialog or trustedFolders.json), or run it "
                     "with --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true.")
    return lines
