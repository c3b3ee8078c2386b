"""Shared pieces of the hook tests: a stub runtime for in-process runs, the provider output shapes."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from lidguard.hooks.outputs import ASK_USER_DENY_REASON, DENY_MESSAGE, ELICITATION_CANCEL_REASON

# The console dispatch (`python -m lidguard claude-hook`) once cli/__init__.py routes *-hook commands.
ENTRY = ("-m", "lidguard")
HOOK_COMMAND = {"claude": "claude-hook", "codex": "codex-hook", "copilot": "copilot-hook",
                "opencode": "opencode-hook", "gemini": "gemini-hook", "qwen": "qwen-hook"}

_ALLOW = {"behavior": "allow"}
_DENY = {"behavior": "deny", "message": DENY_MESSAGE}
_NESTED = "PermissionRequest"
VALID_OUTPUTS: dict[str, list[dict[str, Any]]] = {
    "claude": [
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": _ALLOW}},
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": {**_DENY, "interrupt": True}}},
        {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"},
         "reason": ELICITATION_CANCEL_REASON},
    ],
    "codex": [
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": _ALLOW}},
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": _DENY}},
    ],
    "copilot": [_ALLOW, _DENY, {"permissionDecision": "deny", "permissionDecisionReason": ASK_USER_DENY_REASON}],
    "opencode": [_ALLOW, _DENY],
    "qwen": [
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": _ALLOW}},
        {"hookSpecificOutput": {"hookEventName": _NESTED, "decision": _DENY}},
    ],
    # Gemini CLI BeforeTool: deny only (nothing can approve a tool there)
    "gemini": [{"decision": "deny", "reason": DENY_MESSAGE}, {"decision": "deny", "reason": ASK_USER_DENY_REASON}],
}


def assert_valid_output(provider: str, stdout: str) -> Any:
    """Empty, or exactly one JSON line of one of the provider's shapes; returns the parsed value."""
    if stdout == "":
        return None
    assert stdout.endswith("\n") and stdout.count("\n") == 1, repr(stdout)
    value = json.loads(stdout)
    assert value in VALID_OUTPUTS[provider], value
    return value


class StubRuntime:
    """Answers like a runtime without sockets; records every request."""

    def __init__(self, *, lid: str = "Open", eligible: bool | None = None, decision: Any = "Deny",
                 available: bool = True, reply: Any = None, raises: bool = False) -> None:
        self.lid = lid
        self.eligible = eligible
        self.decision = decision
        self.available = available
        self.reply = reply  # a fixed (possibly malformed) reply for every request
        self.raises = raises
        self.requests: list[tuple[dict[str, Any], bool, float]] = []

    def __call__(self, message: dict[str, Any], auto_start: bool, reply_timeout: float) -> Any:
        json.dumps(message, ensure_ascii=False).encode("utf-8")  # what the client would send must encode
        self.requests.append((message, auto_start, reply_timeout))
        if self.raises:
            raise OSError("stub transport failure")
        if self.reply is not None:
            return self.reply
        if not self.available:
            return {"Succeeded": False, "RuntimeUnavailable": True, "Message": "LidGuard runtime is not running."}
        reply = {"Succeeded": True, "RuntimeUnavailable": False, "Message": "ok", "ActiveSessionCount": 1,
                 "LidSwitchState": self.lid, "VisibleDisplayMonitorCount": 0,
                 "Settings": {"ClosedLidPermissionRequestDecision": self.decision}}
        if self.eligible is not None:
            reply["ClosedLidSuspendEligible"] = self.eligible
        return reply

    def commands(self) -> list[str]:
        return [message["Command"] for message, _, _ in self.requests]


@pytest.fixture
def stub_environment(isolated_home):
    """A factory: (stub runtime, HookEnvironment) with the real paths of the isolated home."""
    from lidguard.hooks.runner import HookEnvironment
    from lidguard.platform.paths import resolve_paths
    from lidguard.shared.raw_settings import RawSettings

    paths = resolve_paths()

    def make(settings: dict[str, Any] | None = None, agent_pid: int = 4242, agent_arguments: tuple[str, ...] = (),
             **stub: Any):
        runtime = StubRuntime(**stub)
        environment = HookEnvironment(paths, send=runtime, agent_process=lambda provider, hint=0: agent_pid,
                                      settings=lambda: RawSettings(settings if settings is not None else {}),
                                      agent_arguments=lambda provider: agent_arguments)
        return runtime, environment

    return make


def run_hook_process(lidguard, provider: str, stdin: bytes | str, *args: str,
                     timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """``lidguard <provider>-hook ...`` as a real process of the isolated home."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, *ENTRY, HOOK_COMMAND[provider], *args], env=lidguard.env,
                          input=data, capture_output=True, timeout=timeout)
