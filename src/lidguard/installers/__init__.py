"""Hook installers: hook-install / hook-remove / hook-status for every agent of ``lidguard.agents``
(REFERENCE 5, AGENT_CLIS.md, AGENT_CLIS_MORE.md). Each agent module names its installer
(``installer()``: ``config_root``, ``install``, ``remove``, ``status_lines``, ``locked_files``); ``common``
holds the shared rules and the file formats are modules of their own, each agent module giving its own
parts: ``settings_hooks`` (the Claude-style table in a settings.json), ``hooks_json`` (its hooks object),
``hooks_file`` (an agent's own hooks.json), ``toml_trust`` (hooks.json + trust entries in config.toml) and
``plugin_file`` (the OpenCode-style plugin)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import all_agents
from .common import (
    DEFAULT_HOOK_TIMEOUT_SECONDS,
    InstallError,
    InstallResult,
    hook_argv,
    hook_command,
    hook_runner_line,
    read_config_text,
    stop_hook_timeout_seconds,
)

__all__ = ["PROVIDERS", "InstallError", "InstallResult", "Provider", "available_providers", "command_checks",
           "did_you_mean", "parse_provider_word", "parse_provider_words", "provider_status", "status_block"]


@dataclass(frozen=True)
class Provider:
    key: str
    display: str
    log_name: str
    sub: str
    roots: Callable[[], list[Path]]
    install: Callable[[Path | None, int], InstallResult]
    remove: Callable[[Path | None], InstallResult]
    status: Callable[[Path | None, int], list[str]]


    stop_timeout: bool = True  # the installed hooks carry a Stop timeout (not the OpenCode plugin)
    product: str = ""  # the agent's own name (``Claude Code``)


def _provider(agent: Any) -> Provider:
    module = agent.installer()
    sub = f"{agent.KEY}-hook" + (" --event <event>" if getattr(agent, "EVENT_OPTION", False) else "")
    return Provider(agent.KEY, agent.PROVIDER, agent.KEY, sub, lambda: [module.config_root()], module.install,
                    module.remove, module.status_lines, getattr(agent, "STOP_TIMEOUT", True), agent.DISPLAY)


PROVIDERS: dict[str, Provider] = {agent.KEY: _provider(agent) for agent in all_agents()}
_ALIASES = {alias: agent.KEY for agent in all_agents() for alias in agent.ALIASES}
PROVIDER_WORDS = f"{', '.join(PROVIDERS)}, or all"


def parse_provider_word(word: str) -> str | None:
    """An agent's key or alias, or all, case-insensitive; None when unknown."""
    value = word.strip().lower()
    value = _ALIASES.get(value, value)
    return value if value in PROVIDERS or value == "all" else None


def parse_provider_words(text: str) -> tuple[list[str], str | None]:
    """A comma list of provider words (``claude,gemini``; ``all`` anywhere means every provider) ->
    (provider keys in the list's order without repeats, the first unknown word or None)."""
    keys: list[str] = []
    for word in (part.strip() for part in text.split(",")):
        if not word:
            continue
        key = parse_provider_word(word)
        if key is None:
            return keys, word
        if key == "all":
            return ["all"], None
        if key not in keys:
            keys.append(key)
    return keys, None


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean `x`?)`` for a near miss among ``choices``, else ""."""
    import difflib

    close = difflib.get_close_matches(word.strip().lower(), choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def available_providers() -> tuple[list[str], list[str]]:
    """(providers whose configuration root exists, skip lines for the others)."""
    present, skipped = [], []
    for key, provider in PROVIDERS.items():
        roots = provider.roots()
        if any(root.exists() for root in roots):
            present.append(key)
        else:
            skipped.append(f"Skipping absent provider: {provider.display} (no existing configuration root was "
                           f"found at: {' | '.join(str(root) for root in roots)})")
    return present, skipped


def command_checks(key: str, config_file: Path) -> list[tuple[list[str], str | None]]:
    """(argv, None or why it does not run) for each distinct lidguard command in the provider's config."""
    from .health import check_command, installed_commands

    try:
        text = read_config_text(config_file, "config file")
    except InstallError:
        return []
    sub = PROVIDERS[key].sub.split()[0]
    return [(argv, check_command(argv, DEFAULT_HOOK_TIMEOUT_SECONDS)) for argv in installed_commands(text, sub)]


def _config_of(lines: list[str]) -> Path | None:
    return next((Path(line[len("Config: "):]) for line in lines if line.startswith("Config: ")), None)


def provider_status(key: str, config: Path | None, settings_file: Path) -> tuple[int, list[str]]:
    """The one status computation doctor and hook-status share (issue 32.5): the Stop hook timeout from
    the settings file, then the provider's status lines against it."""
    timeout = stop_hook_timeout_seconds(settings_file)
    return timeout, PROVIDERS[key].status(config, timeout)


def status_block(key: str, config: Path | None, settings_file: Path, data_dir: Path) -> list[str]:
    provider = PROVIDERS[key]
    timeout, lines = provider_status(key, config, settings_file)
    status = lines[0].split(": ", 1)[1]
    argv = hook_argv()
    head = [f"Provider: {provider.display}", lines[0], f"Installed: {status == 'Installed'}", *lines[1:3],
            f"Executable: {' '.join(argv)}", f"Command: {hook_command(provider.sub)}",
            f"Hook log: {data_dir / f'{provider.log_name}-hook-events.log'}"]
    if provider.stop_timeout:
        head.append(f"Stop hook timeout: {timeout} seconds")
    config_file = _config_of(lines)
    checks = command_checks(key, config_file) if config_file is not None else []
    for installed, problem in checks:
        head.append(f"Command check: broken: {problem}" if problem else f"Command check: ok ({' '.join(installed)})")
    head.append(f"Hook runner: {hook_runner_line([installed for installed, _ in checks])}")
    return ["Hook installation:", *(f"  {line}" for line in head + lines[3:])]
