"""One providers module: names, aliases, display rule, choices text (issue 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lidguard import providers
from lidguard.agents import AGENTS
from lidguard.providers import (
    PROVIDER_CHOICES_TEXT,
    AgentProvider,
    agent_process_word,
    parse_provider,
    provider_aliases,
    provider_display,
)

PACKAGE = Path(providers.__file__).resolve().parent


@pytest.mark.parametrize(("text", "expected"), [
    ("claude", AgentProvider.CLAUDE), (" Claude ", AgentProvider.CLAUDE), ("CODEX", AgentProvider.CODEX),
    ("copilot", AgentProvider.GITHUB_COPILOT), ("github-copilot", AgentProvider.GITHUB_COPILOT),
    ("GitHubCopilot", AgentProvider.GITHUB_COPILOT), ("opencode", AgentProvider.OPENCODE),
    ("OpenCode", AgentProvider.OPENCODE), ("custom", AgentProvider.CUSTOM), ("mcp", AgentProvider.MCP),
    ("unknown", AgentProvider.UNKNOWN), ("banana", None), ("", None), (None, None),
])
def test_parse_provider(text, expected):
    assert parse_provider(text) is expected


def test_every_value_parses_back_and_every_choice_word_is_an_alias():
    for provider in AgentProvider:
        assert parse_provider(provider.value) is provider
    words = PROVIDER_CHOICES_TEXT.replace(", or ", ", ").split(", ")
    assert words == [*AGENTS, "custom", "mcp", "unknown"]  # the registry's agents, in its order
    assert all(word in provider_aliases() for word in words)
    # every enum member, and every registered agent (a registry line may have no member of its own: Cursor)
    assert set(provider_aliases().values()) == set(AgentProvider) | {AgentProvider(value) for value in AGENTS.values()}


def test_display_rule():
    assert provider_display(AgentProvider.MCP, " my-server ") == "Mcp:my-server"
    assert provider_display("Mcp", "x") == "Mcp:x"
    assert provider_display(AgentProvider.CLAUDE, "ignored") == "Claude"
    assert provider_display("GitHubCopilot", None) == "GitHubCopilot"


def test_agent_process_words_match_the_ancestry_search():
    from lidguard.agents.ancestry import AGENT_PROVIDERS

    named = {agent_process_word(AgentProvider(value)) for value in AGENTS.values()}  # a member or not (_missing_)
    assert named == set(AGENT_PROVIDERS)
    assert {agent_process_word(provider) for provider in AgentProvider} - {"unknown"} <= named
    assert agent_process_word(AgentProvider.MCP) == agent_process_word(AgentProvider.CUSTOM) == "unknown"


def test_the_session_registry_uses_the_same_names():
    from lidguard.runtime import sessions

    assert sessions.AgentProvider is AgentProvider and sessions.parse_provider is parse_provider
    key = sessions.SessionKey.create(AgentProvider.MCP, "s1", " srv ")
    assert key.provider_display == provider_display(AgentProvider.MCP, " srv ")


def test_agent_provider_is_defined_once():
    defining = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                      if "class AgentProvider(" in path.read_text(encoding="utf-8"))
    assert defining == ["providers.py"]


# Costly on the hook path (each a millisecond or more in a fresh interpreter, with what it pulls in).
COSTLY_ON_THE_HOOK_PATH = {"dataclasses", "hashlib", "typing", "inspect", "pathlib", "urllib", "urllib.parse",
                           "ipaddress", "contextlib", "struct", "warnings"}


def test_providers_and_switches_import_only_the_standard_library(fresh_venv):
    # In a fresh virtual environment with -I: this machine's global interpreter pre-imports typing,
    # pathlib and more through a .pth file, which would hide them here. What the hook's floor (a bare
    # ``python -c "import json, socket, os"``) loads anyway is not counted.
    probe = (
        "import json, socket, os, sys\n"
        "before = set(sys.modules)\n"
        "import lidguard.providers, lidguard.switches, lidguard.platform.paths\n"
        "new = sorted(name for name in set(sys.modules) - before if not name.startswith('lidguard'))\n"
        "print(' '.join(new))\n"
    )
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(result.stdout.split())
    stdlib = set(sys.stdlib_module_names)
    assert {name.split(".")[0] for name in loaded} <= stdlib, loaded
    assert not loaded & COSTLY_ON_THE_HOOK_PATH, f"costly on the hook path: {sorted(loaded & COSTLY_ON_THE_HOOK_PATH)}"
