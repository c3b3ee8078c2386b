"""Runtime-side request validation (PascalCase wire fields, REFERENCE 3.1). Replies: ``responses.py``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..settings.model import Settings
from .sessions import AgentProvider, SessionKey, parse_provider

__all__ = ["RequestError", "RuntimeRequest", "parse_request"]


class RequestError(ValueError):
    """A request the runtime answers with a failure (it never dies of one)."""


class RuntimeRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    command: str = Field(alias="Command")
    provider: str | None = Field(None, alias="Provider")
    provider_name: str = Field("", alias="ProviderName")
    session_identifier: str = Field("", alias="SessionIdentifier")
    is_provider_session_end: bool = Field(False, alias="IsProviderSessionEnd")
    session_end_reason: str = Field("", alias="SessionEndReason")
    match_all_sessions: bool = Field(False, alias="MatchAllSessions")
    watched_process_identifier: int | None = Field(None, alias="WatchedProcessIdentifier", ge=0)
    session_state_reason: str = Field("", alias="SessionStateReason")
    working_directory: str = Field("", alias="WorkingDirectory")
    transcript_path: str = Field("", alias="TranscriptPath")
    has_settings: bool = Field(False, alias="HasSettings")
    settings: dict[str, Any] | None = Field(None, alias="Settings")
    has_pending_provider_work: bool = Field(False, alias="HasPendingProviderWork")

    @field_validator("provider_name", "session_identifier", "session_end_reason", "session_state_reason",
                     "working_directory", "transcript_path", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    def agent_provider(self) -> AgentProvider:
        provider = parse_provider(self.provider)
        if provider is None:
            raise RequestError("A provider is required. Use codex, claude, copilot, opencode, custom, mcp, or unknown.")
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
            return Settings.model_validate(self.settings)
        except ValidationError as error:
            raise RequestError(f"The settings payload is invalid: {error.errors()[0]['msg']}") from error


def parse_request(message: dict[str, Any]) -> RuntimeRequest:
    try:
        return RuntimeRequest.model_validate(message)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "request"
        raise RequestError(f"The request field {where} is invalid: {first['msg']}.") from error
