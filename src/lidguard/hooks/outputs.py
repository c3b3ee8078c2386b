"""The decision output shapes agents share, and lidguard's texts in them (stdlib only; loaded only when a
closed-lid decision is printed). Which agent prints which shape is the agent module's business
(``agents/<agent>.py`` ``permission_output``/``ask_user_output``); observed shapes (AGENT_CLIS.md,
REFERENCE 5):

* nested (Claude Code, Codex, Qwen Code PermissionRequest): ``{"hookSpecificOutput": {"hookEventName":
  "PermissionRequest", "decision": {"behavior": "allow"}}}``; a deny carries ``message`` (Claude also
  ``interrupt: true``: ends the turn, the lid is closed and nobody can answer);
* flat (Copilot CLI permissionRequest, the OpenCode plugin): ``{"behavior": "allow"}`` /
  ``{"behavior": "deny", "message": ...}``;
* ``decision`` (Gemini CLI BeforeTool): ``{"decision": "deny", "reason": ...}``; nothing approves there;
* Claude Elicitation: ``{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"},
  "reason": ...}``; Copilot preToolUse of ``ask_user``: ``{"permissionDecision": "deny",
  "permissionDecisionReason": ...}``.

``Ask`` prints nothing (the engine soft-locks the session instead).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the hook path ~2 ms (a fresh interpreter does not load it)
if TYPE_CHECKING:
    from typing import Any


__all__ = [
    "ASK_USER_DENY_REASON",
    "DECISIONS",
    "DENY_MESSAGE",
    "ELICITATION_CANCEL_REASON",
    "behavior",
    "decision_deny",
    "elicitation_output",
    "nested_permission",
    "permission_decision_deny",
]

DECISIONS = ("Allow", "Deny", "Ask")
DENY_MESSAGE = ("LidGuard denied this permission request because the lid is closed and "
                "ClosedLidPermissionRequestDecision is set to Deny. To allow future closed-lid permission "
                "requests, run: lidguard settings --closed-lid-permission-request-decision allow.")
ELICITATION_CANCEL_REASON = "LidGuard canceled this elicitation because the lid is closed."
ASK_USER_DENY_REASON = "LidGuard denied this ask_user request because the lid is closed."


def behavior(decision: str, *, interrupt: bool = False) -> dict[str, Any] | None:
    """The flat ``{"behavior": ...}`` for ``Allow``/``Deny``; None for ``Ask`` or anything else."""
    if decision == "Allow":
        return {"behavior": "allow"}
    if decision == "Deny":
        result: dict[str, Any] = {"behavior": "deny", "message": DENY_MESSAGE}
        if interrupt:
            result["interrupt"] = True
        return result
    return None


def nested_permission(decision: str, *, interrupt: bool = False) -> dict[str, Any] | None:
    """Claude's PermissionRequest shape around :func:`behavior`."""
    inner = behavior(decision, interrupt=interrupt)
    return None if inner is None else {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                              "decision": inner}}


def decision_deny(reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}


def permission_decision_deny(reason: str) -> dict[str, Any]:
    return {"permissionDecision": "deny", "permissionDecisionReason": reason}


def elicitation_output() -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"},
            "reason": ELICITATION_CANCEL_REASON}
