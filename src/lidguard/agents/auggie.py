"""Augment's ``auggie`` CLI 0.36 (AGENT_CLIS_NEW.md section 6): ``lidguard auggie-hook`` from the Claude-style
``hooks`` object of ``~/.augment/settings.json`` (written through ``installers/settings_hooks.py``).

auggie runs its model turns through the user's Augment tenant (an Augment login; the tests use a fake tenant,
``tests/agents/fake_augment.py``), and it loads hooks only when the tenant's feature flag ``enable_hooks`` is
on: without it nothing fires, silently. Payloads are snake_case with ``hook_event_name``; the session is
``conversation_id`` (also ``AUGMENT_CONVERSATION_ID`` in the hook's environment), the folder
``workspace_roots[0]`` (the hook's working directory). ``PromptSubmit`` (not UserPromptSubmit) carries the
prompt in ``user_prompt``; ``PreToolUse``/``PostToolUse`` have no tool call id (paired by the tool's name);
``Stop`` ends the turn (``agent_stop_cause``: end_turn, interrupted, max_iterations, empty_completion, error;
the reply in ``_exchange.exchange.response_text``) and ``SessionEnd`` the session. auggie awaits the Stop hook
and discards its output, so a Stop never waits for an ask-before-sleep reply: auggie cannot be continued.
auggie does not wait for its PromptSubmit (nor SessionStart/SessionEnd) hook: the model request goes out at
once, so the first PreToolUse can reach the runtime before the start and is then ignored (seen against the fake
tenant, which answers at once); the tool hooks and Stop are awaited. A Stop payload carries the last exchange
(its request and response nodes): one over the hook's 1 MiB stdin bound is ignored, and the session then ends
with auggie's process or the inactivity timeout. ``timeout`` is in milliseconds; matcher ``*`` matches no tool
(``.*`` does) and a matcher on a lifecycle event makes auggie warn "Some plugin hooks use unsupported
configuration.". The command string is split by auggie itself (no shell); the hook inherits
``AUGMENT_SESSION_AUTH`` (the login: lidguard never logs the environment). Ancestry: ``hook <- node
.../.bin/auggie`` (no shell between). Stdlib only.
"""

from __future__ import annotations

import sys

from . import IGNORE, Action, stop_action, tool_activity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..hooks.payload import Payload
    from ..installers.hooks_json import HookSpec
    from ..installers.settings_hooks import SettingsInstaller

KEY = "auggie"
PROVIDER = "Augment"
DISPLAY = "Augment auggie"
ALIASES = ("augment", "augment-code")
CONFIG_TEXT = "settings.json (~/.augment; hooks run only when the Augment tenant enables them)"
HOOK_HELP = ("Augment auggie hook (reads the event JSON on stdin).",
             "Augment auggie command hook: PromptSubmit starts the session, tool use is activity, Stop ends "
             "the turn and SessionEnd the session (auggie discards a Stop hook's output, so it is never "
             "continued). Runs only when the Augment tenant's enable_hooks flag is on. Always exits 0.")
SESSION_KEYS = ("conversation_id",)
PROCESS_COMMANDS = frozenset({"auggie"})
PROCESS_PACKAGES = ("@augmentcode/auggie",)
STOP_TIMEOUT = False  # its Stop hook never waits for a follow-up reply: the default timeout
QUIET_TOOLS = frozenset({""})
LOG_DETAILS = (("tool", ("tool_name",)), ("stopCause", ("agent_stop_cause",)),
               ("notificationType", ("notification_type",)))
# Stop causes that end the turn without the agent finishing it (the session stays, as after Claude's interrupt)
_CUT_SHORT = frozenset({"interrupted", "error"})


def map_event(event: str, payload: Payload) -> Action:
    name = event.lower()
    if name == "promptsubmit":
        return Action("start", prompt=payload.text("user_prompt"))
    if name in ("pretooluse", "posttooluse"):
        return tool_activity(event, payload.text("tool_name"), QUIET_TOOLS, payload, (),
                             "Running" if name == "pretooluse" else "Finished")
    if name == "stop":
        cause = payload.text("agent_stop_cause")
        action = stop_action(payload, f"{event}:{cause}" if cause else event,
                             provider_session_end=cause.lower() not in _CUT_SHORT, turn_end=True)
        action.last_assistant_message = _reply(payload)
        return action
    if name == "sessionend":
        return stop_action(payload, event)
    return IGNORE


def _reply(payload: Payload) -> str:
    """The turn's last reply: ``_exchange.exchange.response_text``."""
    exchange = payload.nested("_exchange", "exchange")
    if not isinstance(exchange, dict):
        return ""
    from ..hooks.payload import Payload as _Payload  # already loaded on the hook path

    return _Payload(exchange).text("response_text")


def permission_output(decision: str) -> dict[str, Any] | None:
    """No permission event is installed (auggie has none to answer): no output."""
    return None


# -- its installer: the Claude-style hooks table of ~/.augment/settings.json (installers/settings_hooks.py) ----
# event -> matcher: tool events take a tool-name regex (``.*``; ``*`` matches nothing), lifecycle events none.
EVENTS: dict[str, str | None] = {
    "PromptSubmit": None,
    "PreToolUse": ".*",
    "PostToolUse": ".*",
    "Stop": None,
    "SessionEnd": None,
}


def config_root() -> Path:
    from ..installers.common import home

    return home() / ".augment"


def specs(stop_timeout: int) -> list[HookSpec]:
    from ..installers.common import DEFAULT_HOOK_TIMEOUT_SECONDS, default_shell, hook_command
    from ..installers.hooks_json import HookSpec

    command = hook_command(f"{KEY}-hook", shell=default_shell())
    return [HookSpec(event, matcher, {"type": "command", "command": command,
                                      "timeout": 1000 * DEFAULT_HOOK_TIMEOUT_SECONDS})  # milliseconds
            for event, matcher in EVENTS.items()]


def installer() -> SettingsInstaller:
    from ..installers.settings_hooks import SettingsInstaller

    return SettingsInstaller(sys.modules[__name__], _status)


def _status(root: dict[str, Any], head: list[str], events: list[str]) -> list[str]:
    return [*head, *events,
            "Note: auggie runs these hooks only when your Augment tenant turns hooks on (the enable_hooks "
            "feature flag); without it nothing fires and auggie says nothing."]
