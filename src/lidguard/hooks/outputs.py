"""What a hook prints for a closed-lid decision, in each provider's own shape (stdlib only).

Observed (AGENT_CLIS.md) and REFERENCE 5:

* Claude Code PermissionRequest: ``{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
  "decision": {"behavior": "allow"}}}``; a deny carries ``message`` and ``interrupt: true`` in the
  decision (ends the turn: the lid is closed, nobody can answer).
* Codex PermissionRequest: the same nested shape, a deny with ``message`` and no ``interrupt``.
* Copilot CLI permissionRequest: flat ``{"behavior": "allow"}`` / ``{"behavior": "deny", "message":
  ...}`` (the nested shape is ignored by Copilot).
* OpenCode permission.asked: flat like Copilot; the managed plugin answers the permission with it
  (allow -> "once", deny -> "reject").
* Qwen Code PermissionRequest: Claude's nested shape (a deny without ``interrupt``).
* Gemini CLI BeforeTool: ``{"decision": "deny", "reason": ...}`` only; no hook output approves a tool
  there (AGENT_CLIS_MORE.md 1.5), so Allow prints nothing. An ``ask_user`` tool is denied the same way.
* Claude Elicitation: ``{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"},
  "reason": ...}``; Copilot preToolUse of ``ask_user``: ``{"permissionDecision": "deny",
  "permissionDecisionReason": ...}``.

``Ask`` prints nothing (the runner soft-locks the session instead).
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
    "ask_user_output",
    "elicitation_output",
    "permission_output",
]

DECISIONS = ("Allow", "Deny", "Ask")
DENY_MESSAGE = ("LidGuard denied this permission request because the lid is closed and "
                "ClosedLidPermissionRequestDecision is set to Deny. To allow future closed-lid permission "
                "requests, run: lidguard settings --closed-lid-permission-request-decision allow.")
ELICITATION_CANCEL_REASON = "LidGuard canceled this elicitation because the lid is closed."
ASK_USER_DENY_REASON = "LidGuard denied this ask_user request because the lid is closed."


def permission_output(provider: str, decision: str) -> dict[str, Any] | None:
    """The provider's answer for ``Allow``/``Deny``; None for ``Ask`` or anything else."""
    if decision == "Allow":
        behavior: dict[str, Any] = {"behavior": "allow"}
    elif decision == "Deny":
        behavior = {"behavior": "deny", "message": DENY_MESSAGE}
        if provider == "claude":
            behavior["interrupt"] = True
    else:
        return None
    if provider in ("claude", "codex", "qwen"):
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": behavior}}
    if provider == "gemini":
        return {"decision": "deny", "reason": DENY_MESSAGE} if decision == "Deny" else None
    if provider in ("copilot", "opencode"):
        return behavior
    return None


def elicitation_output() -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"},
            "reason": ELICITATION_CANCEL_REASON}


def ask_user_output(provider: str = "copilot") -> dict[str, Any]:
    if provider == "gemini":
        return {"decision": "deny", "reason": ASK_USER_DENY_REASON}
    return {"permissionDecision": "deny", "permissionDecisionReason": ASK_USER_DENY_REASON}
