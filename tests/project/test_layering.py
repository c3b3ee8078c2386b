"""Issue 35.1's layering: an agent is one unit (``lidguard.agents``), ``hooks/`` is a provider-free
engine, the wire bounds live in ``ipc/`` and nothing in ``runtime/`` imports ``hooks/`` but the native hook
client's answer (issue 36), which runs the engine."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from lidguard.agents import AGENTS

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "lidguard"


def _imported_modules(path: Path) -> list[str]:
    parts = ["lidguard", *path.relative_to(PACKAGE).parent.parts]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level + 1] if node.level else []
            names.append(".".join([*base, *(node.module.split(".") if node.module else [])]))
    return names


# Issue 36: the runtime answers the native hook client by running the hook engine itself; only this
# module may reach into hooks/, and only its engine (runner.py).
HOOK_ENGINE_CALLER = Path("runtime/hook_requests.py")


def test_nothing_in_the_runtime_imports_hooks():
    offenders = [f"{path.relative_to(PACKAGE)}: {name}" for path in sorted((PACKAGE / "runtime").rglob("*.py"))
                 for name in _imported_modules(path) if name == "lidguard.hooks" or name.startswith("lidguard.hooks.")
                 if not (path.relative_to(PACKAGE) == HOOK_ENGINE_CALLER and name == "lidguard.hooks.runner")]
    assert offenders == []


def test_the_hook_engine_caller_imports_the_engine_only():
    names = [name for name in _imported_modules(PACKAGE / HOOK_ENGINE_CALLER) if name.startswith("lidguard.hooks")]
    assert names and set(names) == {"lidguard.hooks.runner"}


def test_the_hook_engine_names_no_agent():
    """Per-agent tables live in the agent modules: no hooks/ module spells an agent's key as a string."""
    keys = "|".join(AGENTS)
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in sorted((PACKAGE / "hooks").glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(rf"""["']({keys})["']""", line)]
    assert found == []


def test_every_registered_agent_module_imports_only_the_standard_library_and_nothing_costly():
    """An agent module is on its hook's hot path: importing it (and the registry) loads no pathlib, typing
    or third-party module in a fresh interpreter, and no other agent's module (Qwen is Claude-shaped)."""
    probe = (
        "import json, socket, os, sys\n"
        f"sys.path.insert(0, {str(PACKAGE.parent)!r})\n"
        "before = set(sys.modules)\n"
        "from lidguard.agents import agent\n"
        "key = sys.argv[1]\n"
        "agent(key)\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    for key in AGENTS:
        result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, key], capture_output=True, text=True,
                                check=True)
        loaded = set(__import__("json").loads(result.stdout))
        others = {f"lidguard.agents.{other}" for other in AGENTS if other != key} - {"lidguard.agents.claude"}
        assert not loaded & {"pathlib", "typing", "tomlkit", "importlib"}, (key, sorted(loaded))
        assert not loaded & others, (key, sorted(loaded & others))
        assert f"lidguard.agents.{key}" in loaded


def test_each_agent_module_has_what_the_engine_and_the_lists_ask_for():
    from lidguard.agents import agent

    for key, provider in AGENTS.items():
        module = agent(key)
        assert module is not None
        assert (module.KEY, module.PROVIDER) == (key, provider)
        for name in ("DISPLAY", "ALIASES", "PROCESS_COMMANDS", "PROCESS_PACKAGES",
                     "LOG_DETAILS", "CONFIG_TEXT", "HOOK_HELP", "map_event", "permission_output", "installer"):
            assert hasattr(module, name), (key, name)
