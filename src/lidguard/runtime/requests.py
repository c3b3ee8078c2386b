"""Runtime-side request validation (PascalCase wire fields, REFERENCE 3.1). Replies: ``responses.py``.

The runtime never trusts a client: ``check_wire_message`` refuses, with "The request field <Field>
..." messages, lone UTF-16 surrogates anywhere in a request (they cannot be written to a log or a
reply as UTF-8), strings longer than ``ipc/limits.py`` allows and process identifiers outside a C
int. The server runs it before the runtime sees a message; ``parse_request`` runs it again, so the
runtime is safe whoever calls it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
}

TOOL_CALL_STATES = ("", "Running", "Finished")
_PROCESS_IDENTIFIER_MESSAGE = (f"The request field WatchedProcessIdentifier must be a non-negative integer "
                               f"of at most {MAX_PROCESS_IDENTIFIER}.")


class RequestError(ValueError):
    """A request the runtime answers with a failure (it never dies of one)."""




def _field_name(key: Any) -> str:
    return str(key)[:64].encode("ascii", "backslashreplace").decode("ascii")


def check_wire_message(message: dict[str, Any]) -> None:
    """Raises ``RequestError`` naming the first field a runtime must not accept (cheap: no pydantic)."""
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


class RuntimeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    command: str = Field(alias="Command", max_length=64)
    provider: str | None = Field(None, alias="Provider", max_length=MAX_PROVIDER_NAME_CHARS)
    provider_name: str = Field("", alias="ProviderName", max_length=MAX_PROVIDER_NAME_CHARS)
    session_identifier: str = Field("", alias="SessionIdentifier", max_length=MAX_SESSION_IDENTIFIER_CHARS)
    is_provider_session_end: bool = Field(False, alias="IsProviderSessionEnd")
    session_end_reason: str = Field("", alias="SessionEndReason", max_length=MAX_REASON_CHARS)
    match_all_sessions: bool = Field(False, alias="MatchAllSessions")
    watched_process_identifier: int | None = Field(None, alias="WatchedProcessIdentifier", ge=0,
                                                   le=MAX_PROCESS_IDENTIFIER)
    session_state_reason: str = Field("", alias="SessionStateReason", max_length=MAX_REASON_CHARS)
    working_directory: str = Field("", alias="WorkingDirectory", max_length=MAX_PATH_CHARS)
    transcript_path: str = Field("", alias="TranscriptPath", max_length=MAX_PATH_CHARS)
    has_settings: bool = Field(False, alias="HasSettings")
    settings: dict[str, Any] | None = Field(None, alias="Settings")
    has_pending_provider_work: bool = Field(False, alias="HasPendingProviderWork")
    force: bool = Field(False, alias="Force")
    stop_hook_active: bool = Field(False, alias="StopHookActive")
    wait_for_follow_up: bool = Field(False, alias="WaitForFollowUp")  # a blocking Stop hook (ask-before-sleep)
    # How long that hook waits before it gives up (hooks/stop_timeout.py); anything odd is "not said".
    follow_up_wait_seconds: int | None = Field(None, alias="FollowUpWaitSeconds")
    input_prompt_preview: str = Field("", alias="InputPromptPreview", max_length=MAX_PROMPT_PREVIEW_CHARS)
    last_assistant_message: str = Field("", alias="LastAssistantMessage", max_length=MAX_ASSISTANT_MESSAGE_CHARS)
    # Replay-safe events: the hook's id for this request (applied once) and when the hook sent it.
    request_id: str = Field("", alias="RequestId", max_length=MAX_REQUEST_ID_CHARS)
    sent_at_milliseconds: int | None = Field(None, alias="SentAtUnixMilliseconds", ge=0,
                                             le=MAX_SENT_AT_MILLISECONDS, strict=True)
    # Turns and tools: the provider's turn id (when it has one) and a tool call that started or finished.
    turn_id: str = Field("", alias="TurnId", max_length=MAX_TURN_ID_CHARS)
    tool_call_id: str = Field("", alias="ToolCallId", max_length=MAX_TOOL_CALL_ID_CHARS)
    tool_call_state: str = Field("", alias="ToolCallState", max_length=16)
    # start: the client could not use the settings file (its one sentence); the runtime fails closed.
    settings_problem: str = Field("", alias="SettingsProblem", max_length=MAX_SETTINGS_PROBLEM_CHARS)
    # pause: how long (absent: until resume); bounded by components/pause.MAX_PAUSE_SECONDS.
    pause_seconds: int | None = Field(None, alias="PauseSeconds", ge=1, le=MAX_PAUSE_SECONDS, strict=True)

    @field_validator("provider_name", "session_identifier", "session_end_reason", "session_state_reason",
                     "working_directory", "transcript_path", "input_prompt_preview", "last_assistant_message",
                     "request_id", "turn_id", "tool_call_id", "tool_call_state", "settings_problem",
                     mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("follow_up_wait_seconds", mode="before")
    @classmethod
    def _wait_or_none(cls, value: Any) -> int | None:
        from ..hooks.stop_timeout import MAX_FOLLOW_UP_WAIT_SECONDS

        if type(value) is int and 1 <= value <= MAX_FOLLOW_UP_WAIT_SECONDS:
            return value
        return None

    @field_validator("tool_call_state")
    @classmethod
    def _known_tool_call_state(cls, value: str) -> str:
        if value not in TOOL_CALL_STATES:
            raise ValueError("must be Running, Finished or empty")
        return value

    def agent_provider(self) -> AgentProvider:
        provider = parse_provider(self.provider)
        if provider is None:
            raise RequestError("A provider is required. Use codex, claude, copilot, opencode, gemini, qwen, custom, "
                               "mcp, or unknown.")
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
        except ValidationError as error:
            raise RequestError(f"The settings payload is invalid: {error.errors()[0]['msg']}") from error
        except (ValueError, TypeError, OverflowError) as error:
            raise RequestError(f"The settings payload is invalid: {error}") from error


def parse_request(message: dict[str, Any]) -> RuntimeRequest:
    check_wire_message(message)
    try:
        return RuntimeRequest.model_validate(message)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "request"
        raise RequestError(f"The request field {_field_name(where)} is invalid: {first['msg']}.") from error
