"""Which process in a hook's ancestry is the agent to watch (stdlib only; on the hook hot path).

Observed ancestries (spec/AGENT_CLIS.md, closest to the hook first)::

    Claude Code   hook <- /bin/sh -c <cmd> <- claude (native, exe .../bin/claude.exe)
    Codex exec    hook <- codex (native musl ELF) <- node .../.bin/codex   (node 20 keeps the wrapper)
    Codex TUI     hook <- codex app-server (a shared daemon that outlives the TUI)
    Copilot CLI   hook <- copilot native (comm "MainThread") <- node .../.bin/copilot (npm-loader.js)
    OpenCode      the plugin runs inside opencode; a hook command it spawns has opencode as parent
    Gemini CLI    hook <- node .../.bin/gemini (the relaunched child) <- node .../.bin/gemini (launcher)
    Qwen Code     hook <- node .../@qwen-code/qwen-code/cli.js (relaunched child) <- node cli.js <- node .bin/qwen

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

from lidguard.platform.process_info import ProcessInfo

__all__ = ["AGENT_PROVIDERS", "is_lidguard_process", "matches_provider", "resolve_agent_process"]

AGENT_PROVIDERS = ("claude", "codex", "copilot", "opencode", "gemini", "qwen")
_ALL_PROVIDER_ALIASES = frozenset({"unknown", "custom", ""})

# The command the provider's native program or npm bin is called by.
_PROVIDER_COMMANDS = {
    "claude": frozenset({"claude"}),
    "codex": frozenset({"codex"}),
    "copilot": frozenset({"copilot"}),
    "opencode": frozenset({"opencode"}),
    "gemini": frozenset({"gemini"}),
    "qwen": frozenset({"qwen"}),
}
# npm packages whose scripts a node/bun runner may execute (path segments or `npx <package>` specs).
_PROVIDER_PACKAGES = {
    "claude": ("@anthropic-ai/claude-code",),
    "codex": ("@openai/codex",),
    "copilot": ("@github/copilot",),
    "opencode": ("opencode-ai",),
    "gemini": ("@google/gemini-cli",),
    "qwen": ("@qwen-code/qwen-code",),
}
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
    commands = _PROVIDER_COMMANDS[provider]
    names = _program_names(process)
    if names & commands:
        return True
    if provider == "copilot" and _is_gh_copilot(process, names):
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
    if normalized in _PROVIDER_COMMANDS:
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


def _is_gh_copilot(process: ProcessInfo, names: set[str]) -> bool:
    """``gh copilot ...`` (the gh command) or the ``gh-copilot`` extension binary."""
    if "gh-copilot" in names:
        return True
    if "gh" not in names:
        return False
    operands = [argument for argument in process.cmdline[1:] if not argument.startswith("-")]
    return operands[:1] == ["copilot"]  # not `gh issue list --search copilot`


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
    for package in _PROVIDER_PACKAGES[provider]:
        if normalized == package or normalized.startswith(package + "@"):
            return True  # npx @openai/codex, npx @openai/codex@latest
        if f"/{package}/" in normalized or normalized.startswith(package + "/"):
            return True  # node .../node_modules/@github/copilot/npm-loader.js
    return _command_name(normalized) in _PROVIDER_COMMANDS[provider]  # node .../.bin/codex


def _is_lidguard_module(module: str) -> bool:
    return module == _LIDGUARD_MODULE or module.startswith(_LIDGUARD_MODULE + ".")
