"""Qwen Code 0.24 (AGENT_CLIS_MORE.md 2): Claude-shaped - ``lidguard qwen-hook`` from the Claude-style
``hooks`` object of ``~/.qwen/settings.json`` (``$QWEN_HOME`` *is* the .qwen folder; installer:
``installers/qwen.py``); Claude's payload mapping with its own quiet tools, and a UserPromptSubmit with an
empty prompt (sent again for every tool-result turn) is activity, not a start. Headless runs send no
SessionEnd (Stop ends the turn). Ancestry: ``hook <- node .../@qwen-code/qwen-code/cli.js`` (the relaunched
child) ``<- node cli.js <- node .bin/qwen``. Stdlib only.
"""

from __future__ import annotations

from . import Action, claude

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from ..hooks.payload import Payload

KEY = "qwen"
PROVIDER = "Qwen"
DISPLAY = "Qwen Code"
ALIASES = ("qwen-code",)
CONFIG_TEXT = "settings.json ($QWEN_HOME or ~/.qwen)"
HOOK_HELP = ("Qwen Code hook (reads the event JSON on stdin).",
             "Qwen Code command hook: UserPromptSubmit with a prompt starts the session, tool use is "
             "activity, a permission_prompt notification soft-locks it, Stop/SessionEnd end it; with the lid "
             "closed it answers PermissionRequest. Always exits 0.")
EVENT_OPTION = False
PID_HINT_KEY = ""
PROCESS_COMMANDS = frozenset({"qwen"})
PROCESS_PACKAGES = ("@qwen-code/qwen-code",)
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = claude.LOG_DETAILS


def map_event(event: str, payload: Payload) -> Action:
    if event.lower() == "userpromptsubmit" and not payload.text("prompt"):
        return Action("activity", f"{event}:tool-result")  # the tool result going back to the model
    return claude.map_event(event, payload, QUIET_TOOLS)


def permission_output(decision: str) -> dict[str, Any] | None:
    """PermissionRequest: Claude's nested shape, a deny without ``interrupt``."""
    from ..hooks.outputs import nested_permission

    return nested_permission(decision)


def installer() -> ModuleType:
    from ..installers import qwen

    return qwen
