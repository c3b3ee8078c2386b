"""What the everyday commands import (issue 22: ~1,700 CLI processes per suite run, and the command a
user types most): `status`, `settings` and friends read the settings file with the stdlib-only model
(``settings/model.py``), so they never load pydantic (~110 ms of CPU) or the runtime's libraries."""

from __future__ import annotations

import json
import subprocess

import pytest

HEAVY = {"pydantic", "pydantic_core", "annotated_types", "anyio", "httpx", "trio", "psutil", "rich", "mcp"}

# The console script's entry point in-process, then every imported module (a clean start: -I, fresh venv).
PROBE = (
    "import json, os, sys\n"
    "from lidguard.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    sys.stdout.flush()\n"
    "    with open(os.environ['LIDGUARD_TEST_MODULES_OUT'], 'w') as handle:\n"
    "        json.dump(sorted(sys.modules), handle)\n"
    "raise SystemExit(code)\n"
)


def _heavy_modules(fresh_venv, lidguard, *args: str) -> list[str]:
    out = lidguard.home / "modules.json"
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", PROBE, *args], text=True, capture_output=True,
                            timeout=60, env={**lidguard.env, "LIDGUARD_TEST_MODULES_OUT": str(out)})
    assert result.returncode == 0, (args, result.stderr)
    modules = json.loads(out.read_text())
    out.unlink()
    return sorted({name.split(".")[0] for name in modules if name.split(".")[0] in HEAVY})


@pytest.mark.parametrize("args", [
    ("status",),
    ("status", "--json"),
    ("settings", "--json"),
    ("settings", "--session-timeout-minutes", "30"),
    ("suspend-history", "--json"),
    ("hook-status", "--provider", "claude"),
    ("help",),
])
def test_everyday_commands_never_load_pydantic(fresh_venv, lidguard, args):
    lidguard.run("start", "--provider", "claude", "--session", "imports", check=True)  # a runtime to ask
    assert _heavy_modules(fresh_venv, lidguard, *args) == []


def test_the_probe_sees_a_heavy_import(fresh_venv, lidguard):
    """Not vacuous: the same probe around a run that imports pydantic reports it."""
    out = lidguard.home / "modules.json"
    probe = PROBE.replace("from lidguard.cli import main\n", "from lidguard.cli import main\nimport pydantic\n")
    result = subprocess.run([str(fresh_venv.python), "-I", "-c", probe, "version"], text=True, capture_output=True,
                            timeout=60, env={**lidguard.env, "LIDGUARD_TEST_MODULES_OUT": str(out)})
    assert result.returncode == 0, result.stderr
    assert "pydantic" in json.loads(out.read_text())
