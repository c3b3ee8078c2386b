"""Which process in a hook's ancestry is the agent to watch (stdlib only; on the hook hot path).

Each agent's module (``lidguard.agents.<agent>``) names its observed ancestry and holds its owner rules:
``PROCESS_COMMANDS`` (the names its native program or npm bin goes by), ``PROCESS_PACKAGES`` (its npm
packages) and optionally ``matches_process(process, names)`` (Copilot: ``gh copilot``; Codex, Cline, Droid:
their program but not its daemon or worker, with ``PROCESS_SCRIPTS`` naming the npm bin a runner runs).

Rules (seed 000 "Process Exit Watcher"):

* walk from the hook process upwards and take the first process that is the provider's agent, so a
  native agent wins over the node/bun wrapper above it;
* never the hook process itself and never another lidguard process;
* a process matches by the names it goes by (comm, exe and argv[0] base names), never by the
  arguments it was given, so a ``sh -c "claude ..."``/``bash -c`` layer is walked past even though
  its command line names the agent, and generic shells never match;
* node/bun/npm/npx-style runners count only when the script or package they run (their first
  operand) is the provider's own (``@openai/codex``, ``.bin/codex``, ...);
* the working directory is never consulted;
* no match means None: the session then runs with process=none.
"""

from __future__ import annotations

from lidguard.agents import AGENTS, agent
from lidguard.platform.process_info import ProcessInfo

__all__ = ["AGENT_PROVIDERS", "is_lidguard_process", "matches_provider", "resolve_agent_process"]

AGENT_PROVIDERS = tuple(AGENTS)
_ALL_PROVIDER_ALIASES = frozenset({"unknown", "custom", ""})
# Script runners that are an agent only when the script they run belongs to the provider.
_SCRIPT_RUNNERS = frozenset({"node", "nodejs", "bun", "bunx", "npm", "npx", "pnpm", "pnpx", "yarn"})
# Runner subcommands between the runner and the package (`npm exec`, `pnpm dlx`, `yarn run`, ...).
_RUNNER_SUBCOMMANDS = frozenset({"exec", "x", "dlx", "run"})
_SCRIPT_SUFFIXES = (".js", ".cjs", ".mjs", ".exe", ".cmd", ".ps1")
_PYTHON_PREFIXES = ("python", "pypy")
_PYTHON_OPTIONS_WITH_VALUE = frozenset({"-X", "-W"})
_LIDGUARD_MODULE = "lidguard"


def resolve_agent_process(chain: list[ProcessInfo], provider: str) -> ProcessInfo | None:
    """The provider's agent process in ``chain`` (``chain[0]`` is the hook process), else None.

    ``provider`` is one of :data:`AGENT_PROVIDERS`; ``"unknown"`` and ``"custom"`` accept any of them.
    """
    providers = _providers_for(provider)
    for process in chain[1:]:
        if is_lidguard_process(process):
            continue
        if any(matches_provider(process, candidate) for candidate in providers):
            return process
    return None


def matches_provider(process: ProcessInfo, provider: str) -> bool:
    """True when ``process`` is the provider's agent: its native program or its own npm runner."""
    module = agent(provider)
    if module is None:
        raise ValueError(f"unknown agent provider {provider!r}")
    names = _program_names(process)
    if names & module.PROCESS_COMMANDS:
        return True
    extra = getattr(module, "matches_process", None)
    if extra is not None and extra(process, names):
        return True
    if names & _SCRIPT_RUNNERS:
        return _runs_provider_script(process.cmdline[1:], provider)
    return False


def is_lidguard_process(process: ProcessInfo) -> bool:
    """lidguard's own processes: the ``lidguard`` script, ``python -m lidguard`` or ``python .../lidguard``."""
    if _LIDGUARD_MODULE in _program_names(process):
        return True
    arguments = process.cmdline
    if not arguments or not _command_name(arguments[0]).startswith(_PYTHON_PREFIXES):
        return False
    index = 1
    while index < len(arguments):
        argument = arguments[index]
        if argument == "-m":
            return index + 1 < len(arguments) and _is_lidguard_module(arguments[index + 1])
        if argument.startswith("-m"):
            return _is_lidguard_module(argument[2:])
        if argument == "-c":
            return False
        if not argument.startswith("-"):
            return _command_name(argument) == _LIDGUARD_MODULE  # python .../bin/lidguard hook ...
        index += 2 if argument in _PYTHON_OPTIONS_WITH_VALUE else 1
    return False


def _providers_for(provider: str) -> tuple[str, ...]:
    normalized = provider.strip().lower()
    if normalized in AGENTS:
        return (normalized,)
    if normalized in _ALL_PROVIDER_ALIASES:
        return AGENT_PROVIDERS
    raise ValueError(f"unknown agent provider {provider!r}; expected one of {', '.join(AGENT_PROVIDERS)}, "
                     "unknown or custom")


def _command_name(path: str) -> str:
    """``/x/y/Claude.EXE`` -> ``claude``: the base name, lower case, without a script/exe suffix."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in _SCRIPT_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _program_names(process: ProcessInfo) -> set[str]:
    """The names a process goes by: comm, exe base name and argv[0] base name.

    All three are needed: Claude's comm comes from the ``claude`` symlink while its exe is
    ``claude.exe``; Copilot's comm is ``MainThread`` and only exe/argv[0] say ``copilot``.
    """
    names = {_command_name(process.name)} if process.name else set()
    if process.exe:
        names.add(_command_name(process.exe.removesuffix(" (deleted)")))
    if process.cmdline and process.cmdline[0]:
        names.add(_command_name(process.cmdline[0]))
    return names


def _runs_provider_script(arguments: tuple[str, ...], provider: str) -> bool:
    """Whether a node/bun/npm/npx argument list runs the provider's package or bin.

    Only the first operand counts (after options and ``exec``/``x``/``dlx``/``run``), so a prompt
    that merely mentions ``codex`` does not make ``node server.js codex`` an agent.
    """
    for argument in arguments:
        if argument.startswith("-") or argument.lower() in _RUNNER_SUBCOMMANDS:
            continue
        return _names_provider(argument, provider)
    return False


def _names_provider(operand: str, provider: str) -> bool:
    normalized = operand.replace("\\", "/").lower()
    module = agent(provider)
    if module is None:
        return False
    for package in module.PROCESS_PACKAGES:
        if normalized == package or normalized.startswith(package + "@"):
            return True  # npx @openai/codex, npx @openai/codex@latest
        if f"/{package}/" in normalized or normalized.startswith(package + "/"):
            return True  # node .../node_modules/@github/copilot/npm-loader.js
    # node .../.bin/codex; an agent that matches its program itself (matches_process) names its scripts
    scripts = getattr(module, "PROCESS_SCRIPTS", module.PROCESS_COMMANDS)
    return _command_name(normalized) in scripts


def _is_lidguard_module(module: str) -> bool:
    return module == _LIDGUARD_MODULE or module.startswith(_LIDGUARD_MODULE + ".")
