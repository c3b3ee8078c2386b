"""Agent providers: names, CLI aliases, the display rule and the ancestry word (stdlib only: hook path).

The one place that knows them; the CLI (fast path and full parser), the runtime's session registry
and the request model all import from here.

* ``AgentProvider`` values are the wire and file names (REFERENCE: ``Codex``, ``GitHubCopilot``, ...).
* ``parse_provider`` accepts the CLI words and aliases of ``PROVIDER_ALIASES`` and the enum values,
  case-insensitively, surrounding spaces ignored; None when unknown.
* ``provider_display``: MCP sessions show as ``Mcp:<name>``, every other provider as its value.
* ``agent_process_word``: the provider as :mod:`lidguard.hooks.agent_process` knows it when it
  looks for the agent among a hook's ancestors (``unknown`` = any agent).
"""

from __future__ import annotations

import enum

__all__ = [
    "PROVIDER_ALIASES",
    "PROVIDER_CHOICES_TEXT",
    "AgentProvider",
    "agent_process_word",
    "parse_provider",
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


PROVIDER_ALIASES: dict[str, AgentProvider] = {
    "unknown": AgentProvider.UNKNOWN,
    "codex": AgentProvider.CODEX,
    "claude": AgentProvider.CLAUDE,
    "copilot": AgentProvider.GITHUB_COPILOT,
    "github-copilot": AgentProvider.GITHUB_COPILOT,
    "githubcopilot": AgentProvider.GITHUB_COPILOT,
    "custom": AgentProvider.CUSTOM,
    "mcp": AgentProvider.MCP,
    "opencode": AgentProvider.OPENCODE,
    "gemini": AgentProvider.GEMINI,
    "gemini-cli": AgentProvider.GEMINI,
    "qwen": AgentProvider.QWEN,
    "qwen-code": AgentProvider.QWEN,
}

PROVIDER_CHOICES_TEXT = "codex, claude, copilot, opencode, gemini, qwen, custom, mcp, or unknown"

_AGENT_PROCESS_WORDS = {
    AgentProvider.CLAUDE: "claude",
    AgentProvider.CODEX: "codex",
    AgentProvider.GITHUB_COPILOT: "copilot",
    AgentProvider.OPENCODE: "opencode",
    AgentProvider.GEMINI: "gemini",
    AgentProvider.QWEN: "qwen",
}


def parse_provider(text: str | None) -> AgentProvider | None:
    """CLI words, aliases and enum values alike (case-insensitive); None when unknown."""
    return PROVIDER_ALIASES.get((text or "").strip().lower())


def provider_display(provider: AgentProvider | str, name: str | None = "") -> str:
    """``Mcp:<name>`` for MCP sessions (name trimmed), else the provider's value (``Claude``)."""
    value = provider.value if isinstance(provider, AgentProvider) else str(provider)
    return f"Mcp:{(name or '').strip()}" if value == AgentProvider.MCP.value else value


def session_label(display: str, identifier: str) -> str:
    """``<display>:<id>``, but the id alone when it already starts with ``<display>:`` (the fallback id of
    a session started without ``--session`` is ``Claude:/path``: shown once, not ``Claude:Claude:/path``)."""
    return identifier if identifier.startswith(f"{display}:") else f"{display}:{identifier}"


def agent_process_word(provider: AgentProvider) -> str:
    """The provider for the ancestry search; ``unknown`` (any agent) for custom, MCP and unknown."""
    return _AGENT_PROCESS_WORDS.get(provider, "unknown")
