"""Agent providers: names, CLI aliases, the display rule and the ancestry word (stdlib only: hook path).

The one place that knows them; the CLI (fast path and full parser), the runtime's session registry
and the request model all import from here.

* ``AgentProvider`` values are the wire and file names (REFERENCE: ``Codex``, ``GitHubCopilot``, ...).
* ``parse_provider`` accepts the agents' keys, their ``ALIASES`` (``lidguard.agents``, the one agent
  list), the enum values and ``custom``/``mcp``/``unknown``, case-insensitively, surrounding spaces
  ignored; None when unknown. An alias loads the agent modules; a key or a value never does.
* ``provider_display``: MCP sessions show as ``Mcp:<name>``, every other provider as its value.
* ``agent_process_word``: the provider as :mod:`lidguard.agents.ancestry` knows it when it
  looks for the agent among a hook's ancestors (``unknown`` = any agent).
"""

from __future__ import annotations

import enum

from .agents import AGENTS

__all__ = [
    "PROVIDER_CHOICES_TEXT",
    "AgentProvider",
    "agent_process_word",
    "parse_provider",
    "provider_aliases",
    "provider_display",
    "session_label",
]


class AgentProvider(enum.StrEnum):
    UNKNOWN = "Unknown"
    CODEX = "Codex"
    CLAUDE = "Claude"
    GITHUB_COPILOT = "GitHubCopilot"
    CUSTOM = "Custom"
    MCP = "Mcp"
    OPENCODE = "OpenCode"
    GEMINI = "Gemini"
    QWEN = "Qwen"

    @classmethod
    def _missing_(cls, value: object) -> AgentProvider | None:
        """A wire value of an agent in ``lidguard.agents.AGENTS`` with no member here (a new agent needs
        only its module and its registry line): one pseudo-member per value, so ``is`` still holds."""
        if not isinstance(value, str) or value not in AGENTS.values():
            return None
        member = cls._value2member_map_.get(value)
        if member is None:
            member = str.__new__(cls, value)
            member._name_ = value.upper()
            member._value_ = value
            cls._value2member_map_[value] = member
        return member  # type: ignore[return-value]


_NOT_AGENTS = {"custom": AgentProvider.CUSTOM, "mcp": AgentProvider.MCP, "unknown": AgentProvider.UNKNOWN}
# Words that need no agent module: the agents' keys and the enum values (lower case).
_DIRECT: dict[str, AgentProvider] = {**{key: AgentProvider(value) for key, value in AGENTS.items()},
                                     **{member.value.lower(): member for member in AgentProvider}}

PROVIDER_CHOICES_TEXT = f"{', '.join(AGENTS)}, custom, mcp, or unknown"

_AGENT_PROCESS_WORDS = {AgentProvider(value): key for key, value in AGENTS.items()}


def provider_aliases() -> dict[str, AgentProvider]:
    """Every word ``parse_provider`` accepts (imports every agent module: not for the hook path)."""
    from .agents import all_agents

    words = {**_DIRECT, **_NOT_AGENTS}
    for module in all_agents():
        words.update((alias, AgentProvider(module.PROVIDER)) for alias in module.ALIASES)
    return words


def parse_provider(text: str | None) -> AgentProvider | None:
    """CLI words, aliases and enum values alike (case-insensitive); None when unknown."""
    word = (text or "").strip().lower()
    found = _DIRECT.get(word)
    return found if found is not None else provider_aliases().get(word)


def provider_display(provider: AgentProvider | str, name: str | None = "") -> str:
    """``Mcp:<name>`` for MCP sessions (name trimmed); ``Custom:<name>`` for a custom session that says who it
    is (an agent running Claude Code's hooks, a wrapper's ``--provider-name``; shown only, never part of its
    identity); else the provider's value (``Claude``)."""
    value = provider.value if isinstance(provider, AgentProvider) else str(provider)
    name = (name or "").strip()
    if value == AgentProvider.MCP.value:
        return f"Mcp:{name}"
    return f"{value}:{name}" if name and value == AgentProvider.CUSTOM.value else value


def session_label(display: str, identifier: str) -> str:
    """``<display>:<id>``, but the id alone when it already starts with ``<display>:`` (the fallback id of
    a session started without ``--session`` is ``Claude:/path``: shown once, not ``Claude:Claude:/path``;
    a named custom session's ``Custom:/path`` shows as ``Custom:<name>:/path``)."""
    if identifier.startswith(f"{display}:"):
        return identifier
    provider = display.split(":", 1)[0]
    if provider != display and identifier.startswith(f"{provider}:"):
        return f"{display}:{identifier[len(provider) + 1:]}"
    return f"{display}:{identifier}"


def agent_process_word(provider: AgentProvider) -> str:
    """The provider for the ancestry search; ``unknown`` (any agent) for custom, MCP and unknown."""
    return _AGENT_PROCESS_WORDS.get(provider, "unknown")
