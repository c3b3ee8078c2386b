"""OpenCode (AGENT_CLIS.md): a managed plugin (``$XDG_CONFIG_HOME/opencode``, default ``~/.config/opencode``,
``plugin/lidguard.js``; the shared OpenCode-style plugin of ``installers/plugin_file.py``) runs
``lidguard opencode-hook --event <event>`` for its events and waits for the output of ``session.idle`` (a
blocking stop) and ``permission.asked``.

Payloads carry ``sessionID``, ``callID`` and the plugin's own ``pid`` (a hint the engine accepts only when
it is one of the hook's ancestors); the prompt may come as message ``parts``. Ancestry: the plugin runs
inside ``opencode``, so a hook command it spawns has opencode as its parent. Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, PERMISSION_PROMPT, Action, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.plugin_file import PluginInstaller

KEY = "opencode"
PROVIDER = "OpenCode"
DISPLAY = "OpenCode"
ALIASES = ("open-code",)
CONFIG_TEXT = "plugin/lidguard.js ($XDG_CONFIG_HOME/opencode or ~/.config/opencode)"
STOP_TIMEOUT = False  # the plugin has no Stop hook timeout
HOOK_HELP = ("OpenCode plugin hook (--event <name>; event JSON on stdin).",
             "Called by the managed OpenCode plugin: chat.message starts the session, tool.execute.* "
             "and permission.replied are activity, session.idle ends it; with the lid closed it answers "
             "permission.asked. Always exits 0.")
EVENT_OPTION = True
PID_HINT_KEY = "pid"  # the plugin's process (opencode itself)
PROCESS_COMMANDS = frozenset({"opencode"})
PROCESS_PACKAGES = ("opencode-ai",)
QUIET_TOOLS = frozenset({"", "ask_user"})
LOG_DETAILS = (("tool", ("tool", "toolName")), ("permission", ("permission",)), ("reply", ("reply",)))


def _prompt(payload: Payload) -> str:
    prompt = payload.text("prompt")
    if prompt:
        return prompt
    parts = payload.data.get("parts")
    if not isinstance(parts, list):
        parts = payload.nested("output", "parts")
    texts = [part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)] \
        if isinstance(parts, list) else []
    return type(payload)({"prompt": "\n".join(texts)}).text("prompt")


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "chat.message":
        return Action("start", prompt=_prompt(payload))
    if name in ("tool.execute.before", "tool.execute.after"):
        return tool_activity(event, payload.text("tool", "toolName"), QUIET_TOOLS, payload,
                             ("callID", "callId"), "Running" if name == "tool.execute.before" else "Finished")
    if name == "permission.asked":
        # OpenCode has no notification event: an unanswered permission is a wait for the user.
        return Action("permission", softlock_without_decision=PERMISSION_PROMPT)
    if name == "permission.replied":
        return Action("activity", event)
    if name == "session.idle":
        return stop_action(payload, event, blocking=True)  # the managed plugin waits for the hook's output
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """permission.asked: the flat shape; the plugin answers allow -> "once", deny -> "reject"."""
    from ..hooks.outputs import behavior

    return behavior(decision)


def config_dir() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("XDG_CONFIG_HOME", home() / ".config") / "opencode"


def installer() -> PluginInstaller:
    from ..installers.plugin_file import PluginInstaller

    return PluginInstaller(KEY, DISPLAY, config_dir)
