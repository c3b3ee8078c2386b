"""Gemini CLI: the ``hooks`` object of ``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``: that variable
replaces the home folder, not the .gemini folder), each handler running ``lidguard gemini-hook``.

Observed in 0.61.0 (AGENT_CLIS_MORE.md 1): ``timeout`` is in milliseconds; ``hooksConfig.enabled: false``
turns every hook off and ``hooksConfig.disabled`` lists handler names it skips; folder trust is on by
default, and in a folder Gemini does not trust it runs no hooks at all, the user's own included.
hook-status says so for the current folder (``trustedFolders.json``: the longest matching rule wins;
``TRUST_PARENT`` trusts the rule's parent; ``GEMINI_CLI_TRUST_WORKSPACE`` overrides it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .common import (
    DEFAULT_HOOK_TIMEOUT_SECONDS,
    InstallError,
    default_shell,
    env_dir,
    home,
    hook_command,
    load_json_object,
)
from .hooks_json import HookSpec
from .settings_hooks import SettingsHooks

__all__ = ["EVENTS", "HOOK_NAME", "folder_trust", "gemini_dir", "install", "remove", "specs", "status_lines"]

SUB = "gemini-hook"
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


def gemini_dir() -> Path:
    return env_dir("GEMINI_CLI_HOME", home()) / ".gemini"


def specs(stop_timeout: int) -> list[HookSpec]:
    command = hook_command(SUB, shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "name": HOOK_NAME, "command": command,
                                      "timeout": 1000 * (stop_timeout if event == "AfterAgent"
                                                         else DEFAULT_HOOK_TIMEOUT_SECONDS)})
            for event, matcher in EVENTS.items()]


FILE = SettingsHooks("Gemini", "Gemini CLI", SUB, tuple(EVENTS), lambda: gemini_dir() / "settings.json", specs)
install = FILE.install
remove = FILE.remove
config_root = gemini_dir


def locked_files(config: Path | None) -> list[Path]:
    """The files install/remove change (``installers.locks``)."""
    return [FILE.path(config)]


def _trusted_folders_file() -> Path:
    value = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH", "").strip()
    return Path(value) if value else gemini_dir() / "trustedFolders.json"


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


def status_lines(config: Path | None, stop_timeout: int) -> list[str]:
    root, head, events = FILE.status(config, stop_timeout)
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
