"""Kilo Code CLI (npm ``@kilocode/cli`` 7.7.9, an OpenCode fork; AGENT_CLIS_NEW.md section 3): OpenCode-style
in-process plugins only, so lidguard installs the OpenCode plugin (``installers/plugin_file.PluginInstaller``)
into Kilo's config folder (``$KILO_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/kilo``, default ``~/.config/kilo``;
``plugin/lidguard.js``), where it runs ``lidguard kilo-hook --event <event>``.

Payloads are OpenCode 1.18's shapes: the session is ``sessionID`` (``ses_...``), tools pair by ``callID``;
``chat.message`` starts the turn, ``tool.execute.before/after`` and ``permission.replied`` are activity, the
``permission.asked`` bus event waits for the user (answered with the lid closed), ``session.idle`` ends the
turn (the plugin waits for its output: ask-before-sleep re-prompts through the plugin SDK, as for OpenCode) and
``session.drained`` (Kilo's own, right after it) is mapped the same, without waiting. Kilo has no Stop hook and
no session end. Ancestry: the plugin runs inside the native ``kilo`` program (its ``pid`` is the hint; env
``KILO_PID`` is the same). Stdlib only.
"""

from __future__ import annotations

from . import IGNORE, PERMISSION_PROMPT, Action, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.plugin_file import PluginInstaller

KEY = "kilo"
PROVIDER = "KiloCode"
DISPLAY = "Kilo Code"
ALIASES = ("kilocode", "kilo-code")
CONFIG_TEXT = "plugin/lidguard.js ($KILO_CONFIG_DIR, else $XDG_CONFIG_HOME/kilo or ~/.config/kilo)"
STOP_TIMEOUT = False  # the plugin has no Stop hook timeout
HOOK_HELP = ("Kilo Code plugin hook (--event <name>; event JSON on stdin).",
             "Called by the managed Kilo Code plugin (the OpenCode plugin): chat.message starts the session, "
             "tool.execute.* and permission.replied are activity, session.idle ends it; with the lid closed it "
             "answers permission.asked. Always exits 0.")
EVENT_OPTION = True
PID_HINT_KEY = "pid"  # the plugin's process (kilo itself)
PROCESS_COMMANDS = frozenset({"kilo"})
PROCESS_PACKAGES = ("@kilocode/cli", "@kilocode/cli-linux-x64")
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("tool", ("tool", "toolName")), ("permission", ("permission",)), ("reply", ("reply",)))


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "chat.message":
        return Action("start", prompt=payload.text("prompt"))
    if name in ("tool.execute.before", "tool.execute.after"):
        return tool_activity(event, payload.text("tool", "toolName"), QUIET_TOOLS, payload,
                             ("callID", "callId"), "Running" if name == "tool.execute.before" else "Finished")
    if name == "permission.asked":
        return Action("permission", softlock_without_decision=PERMISSION_PROMPT)  # no notification event
    if name == "permission.replied":
        return Action("activity", event)
    if name == "session.idle":
        return stop_action(payload, event, blocking=True)  # the managed plugin waits for the hook's output
    if name == "session.drained":
        return stop_action(payload, event)
    return IGNORE


def permission_output(decision: str) -> dict[str, Any] | None:
    """permission.asked: the flat shape; the plugin answers allow -> "once", deny -> "reject"."""
    from ..hooks.outputs import behavior

    return behavior(decision)


def config_dir() -> Path:
    from ..installers.common import env_dir, home

    return env_dir("KILO_CONFIG_DIR", env_dir("XDG_CONFIG_HOME", home() / ".config") / "kilo")


def installer() -> PluginInstaller:
    from ..installers.plugin_file import PluginInstaller

    return PluginInstaller(KEY, DISPLAY, config_dir)
