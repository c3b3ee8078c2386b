"""Runtime-side request validation (PascalCase wire fields, REFERENCE 3.1). Replies: ``responses.py``.

The runtime never trusts a client: ``check_wire_message`` refuses, with "The request field <Field>
..." messages, lone UTF-16 surrogates anywhere in a request (they cannot be written to a log or a
reply as UTF-8), strings longer than ``ipc/limits.py`` allows and process identifiers outside a C
int. The server runs it before the runtime sees a message and says so (``wire_checked``); for any other
caller ``parse_request`` runs it, so the runtime is safe whoever calls it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ipc.limits import (
    MAX_ASSISTANT_MESSAGE_CHARS,
    MAX_PATH_CHARS,
    MAX_PROCESS_IDENTIFIER,
    MAX_PROMPT_PREVIEW_CHARS,
    MAX_PROVIDER_NAME_CHARS,
    MAX_REASON_CHARS,
    MAX_REQUEST_ID_CHARS,
    MAX_SENT_AT_MILLISECONDS,
    MAX_SESSION_IDENTIFIER_CHARS,
    MAX_TOOL_CALL_ID_CHARS,
    MAX_TURN_ID_CHARS,
)
from ..providers import PROVIDER_CHOICES_TEXT
from ..settings.model import Settings, validate_raw_settings
from ..shared.text import has_lone_surrogate
from .components.pause import MAX_PAUSE_SECONDS
from .sessions import AgentProvider, SessionKey, parse_provider

__all__ = ["RequestError", "RuntimeRequest", "check_wire_message", "parse_request"]

MAX_SETTINGS_PROBLEM_CHARS = MAX_PATH_CHARS + 2048  # "The settings file <path> cannot be used: ..."
_MAX_CHARS = {
    "Command": 64,
    "Provider": MAX_PROVIDER_NAME_CHARS,
    "ProviderName": MAX_PROVIDER_NAME_CHARS,
    "SessionIdentifier": MAX_SESSION_IDENTIFIER_CHARS,
    "SessionEndReason": MAX_REASON_CHARS,
    "SessionStateReason": MAX_REASON_CHARS,
    "WorkingDirectory": MAX_PATH_CHARS,
    "TranscriptPath": MAX_PATH_CHARS,
    "InputPromptPreview": MAX_PROMPT_PREVIEW_CHARS,
    "LastAssistantMessage": MAX_ASSISTANT_MESSAGE_CHARS,
    "RequestId": MAX_REQUEST_ID_CHARS,
    "TurnId": MAX_TURN_ID_CHARS,
    "ToolCallId": MAX_TOOL_CALL_ID_CHARS,
    "SettingsProblem": MAX_SETTINGS_PROBLEM_CHARS,
    "ClientPlatform": 64,
}

TOOL_CALL_STATES = ("", "Running", "Finished")
_PROCESS_IDENTIFIER_MESSAGE = (f"The request field WatchedProcessIdentifier must be a non-negative integer "
                               f"of at most {MAX_PROCESS_IDENTIFIER}.")


class RequestError(ValueError):
    """A request the runtime answers with a failure (it never dies of one)."""


def _field_name(key: Any) -> str:
    return str(key)[:64].encode("ascii", "backslashreplace").decode("ascii")


def check_wire_message(message: dict[str, Any]) -> None:
    """Raises ``RequestError`` naming the first field a runtime must not accept (the server's quick look
    before the runtime reads a request)."""
    for key, value in message.items():
        if has_lone_surrogate(key) or has_lone_surrogate(value):
            raise RequestError(f"The request field {_field_name(key)} contains a lone UTF-16 surrogate "
                               "(not valid Unicode text).")
        limit = _MAX_CHARS.get(key)
        if limit is not None and isinstance(value, str) and len(value) > limit:
            raise RequestError(f"The request field {key} is longer than {limit} characters.")
    pid = message.get("WatchedProcessIdentifier")
    if pid is not None and (type(pid) is not int or not 0 <= pid <= MAX_PROCESS_IDENTIFIER):
        raise RequestError(_PROCESS_IDENTIFIER_MESSAGE)


# The fields parse_request reads, by wire key (PascalCase, REFERENCE 3.1); a missing key or null is the default.
# Text: field (its bound is ``_MAX_CHARS``'s, or ``_TEXT_BOUNDS``'s for a field the wire check leaves alone).
_TEXT_FIELDS: dict[str, str] = {
    "ProviderName": "provider_name",
    "SessionIdentifier": "session_identifier",
    "SessionEndReason": "session_end_reason",
    "SessionStateReason": "session_state_reason",
    "WorkingDirectory": "working_directory",
    "TranscriptPath": "transcript_path",
    "InputPromptPreview": "input_prompt_preview",
    "LastAssistantMessage": "last_assistant_message",
    "RequestId": "request_id",
    "TurnId": "turn_id",
    "ToolCallId": "tool_call_id",
    "ToolCallState": "tool_call_state",
    "SettingsProblem": "settings_problem",
}
_TEXT_BOUNDS = {**_MAX_CHARS, "ToolCallState": 16}
# Flags: field.
_FLAG_FIELDS: dict[str, str] = {
    "IsProviderSessionEnd": "is_provider_session_end",
    "MatchAllSessions": "match_all_sessions",
    "HasSettings": "has_settings",
    "HasPendingProviderWork": "has_pending_provider_work",
    "Force": "force",
    "StopHookActive": "stop_hook_active",
    "WaitForFollowUp": "wait_for_follow_up",
    "BackgroundWork": "background_work",
    "IsTurnEnd": "is_turn_end",
    "IfNotRunning": "if_not_running",
}
# Integers: (field, minimum, maximum, strict); true/false is never an integer, and strict refuses 5.0 too.
_INTEGER_FIELDS: dict[str, tuple[str, int, int, bool]] = {
    "WatchedProcessIdentifier": ("watched_process_identifier", 0, MAX_PROCESS_IDENTIFIER, False),
    "SentAtUnixMilliseconds": ("sent_at_milliseconds", 0, MAX_SENT_AT_MILLISECONDS, True),
    "PauseSeconds": ("pause_seconds", 1, MAX_PAUSE_SECONDS, True),
}
# The words the wire has always read as a flag (besides true/false and 0/1).
_FLAG_WORDS = {"true": True, "t": True, "yes": True, "y": True, "on": True, "1": True,
               "false": False, "f": False, "no": False, "n": False, "off": False, "0": False}


@dataclass(frozen=True, slots=True)
class RuntimeRequest:
    """One validated request (``parse_request``); unknown wire keys are ignored."""

    command: str
    provider: str | None = None
    provider_name: str = ""
    session_identifier: str = ""
    is_provider_session_end: bool = False
    session_end_reason: str = ""
    match_all_sessions: bool = False
    watched_process_identifier: int | None = None
    session_state_reason: str = ""
    working_directory: str = ""
    transcript_path: str = ""
    has_settings: bool = False
    settings: dict[str, Any] | None = None
    has_pending_provider_work: bool = False
    force: bool = False
    stop_hook_active: bool = False
    wait_for_follow_up: bool = False  # a blocking Stop hook (ask-before-sleep)
    # How long that hook waits before it gives up (hooks/stop_timeout.py); anything odd is "not said".
    follow_up_wait_seconds: int | None = None
    input_prompt_preview: str = ""
    last_assistant_message: str = ""
    # Replay-safe events: the hook's id for this request (applied once) and when the hook sent it.
    request_id: str = ""
    sent_at_milliseconds: int | None = None
    # Turns and tools: the provider's turn id (when it has one) and a tool call that started or finished.
    turn_id: str = ""
    tool_call_id: str = ""
    tool_call_state: str = ""
    # mark-session-active: the call is background work (a subagent, a task; issue 35.3), not a tool;
    # stop: it ends only the turn (the agent stays), so background work still running defers it.
    background_work: bool = False
    is_turn_end: bool = False
    # start: only a session that is not running; a running one's turn goes on and this is its activity (with
    # SessionStateReason): an agent whose only events are its tool calls starts on the first one (Crush).
    if_not_running: bool = False
    # start: the client could not use the settings file (its one sentence); the runtime fails closed.
    settings_problem: str = ""
    # pause: how long (absent: until resume); bounded by components/pause.MAX_PAUSE_SECONDS.
    pause_seconds: int | None = None

    def agent_provider(self) -> AgentProvider:
        provider = parse_provider(self.provider)
        if provider is None:
            raise RequestError(f"A provider is required. Use {PROVIDER_CHOICES_TEXT}.")
        return provider

    def session_key(self) -> SessionKey:
        provider = self.agent_provider()
        if provider is AgentProvider.MCP and not self.provider_name.strip():
            raise RequestError("The provider name is required for mcp sessions.")
        if not self.session_identifier.strip():
            raise RequestError("A session identifier is required.")
        return SessionKey.create(provider, self.session_identifier, self.provider_name)

    def parsed_settings(self) -> Settings:
        if not self.has_settings or self.settings is None:
            raise RequestError("Settings payload is required.")
        try:
            return validate_raw_settings(self.settings)
        except (ValueError, TypeError, OverflowError) as error:
            raise RequestError(f"The settings payload is invalid: {error}") from error


def parse_request(message: dict[str, Any], *, wire_checked: bool = False) -> RuntimeRequest:
    """The request in ``message`` (a decoded wire object), or ``RequestError`` naming the first bad field.
    One pass over the message's own keys (a hook's request has about ten): this runs for every request.
    ``wire_checked``: ``check_wire_message`` already passed this message (the server's look), not run twice."""
    if not wire_checked:
        check_wire_message(message)
    values: dict[str, Any] = {}
    for key, value in message.items():
        reader = _READERS.get(key)
        if reader is None or (value is None and key not in _FLAG_FIELDS):  # null: the default (not for a flag)
            continue
        name, read = reader
        values[name] = read(key, value)
    if "command" not in values:
        raise _invalid("Command", "it is required")
    if values.get("tool_call_state", "") not in TOOL_CALL_STATES:
        raise _invalid("ToolCallState", "it must be Running, Finished or empty")
    follow_up_wait = message.get("FollowUpWaitSeconds")
    if follow_up_wait is not None:
        values["follow_up_wait_seconds"] = _follow_up_wait(follow_up_wait)
    return RuntimeRequest(**values)


def _invalid(key: str, why: str) -> RequestError:
    return RequestError(f"The request field {_field_name(key)} is invalid: {why}.")


def _text(key: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise _invalid(key, "it must be text")
    if len(value) > limit:
        raise _invalid(key, f"it must be at most {limit} characters")
    return value


def _flag(key: str, value: Any) -> bool:
    """JSON true/false, 0/1 or one of ``_FLAG_WORDS`` (as the wire has always read flags)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _FLAG_WORDS:
        return _FLAG_WORDS[value.lower()]
    raise _invalid(key, "it must be true or false")


def _integer(key: str, value: Any, minimum: int, maximum: int, *, strict: bool) -> int:
    if isinstance(value, float) and not strict and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise _invalid(key, "it must be an integer")
    if not minimum <= value <= maximum:
        raise _invalid(key, f"it must be from {minimum} to {maximum}")
    return value


def _follow_up_wait(value: Any) -> int | None:
    from ..ipc.stop_timeout import MAX_FOLLOW_UP_WAIT_SECONDS

    return value if type(value) is int and 1 <= value <= MAX_FOLLOW_UP_WAIT_SECONDS else None


def _settings_object(key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(key, "it must be a JSON object")
    return value


# Wire key -> (field, reader(key, value)): every field parse_request reads, built once from the tables above.
_READERS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    **{key: (name, functools.partial(_text, limit=_TEXT_BOUNDS[key]))
       for key, name in {"Command": "command", "Provider": "provider", **_TEXT_FIELDS}.items()},
    **{key: (name, _flag) for key, name in _FLAG_FIELDS.items()},
    **{key: (name, functools.partial(_integer, minimum=minimum, maximum=maximum, strict=strict))
       for key, (name, minimum, maximum, strict) in _INTEGER_FIELDS.items()},
    "Settings": ("settings", _settings_object),
}
