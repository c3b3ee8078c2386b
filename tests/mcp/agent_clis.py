"""The real agent CLIs for the installer tests: pinned npm packages in a cache folder that
``ci/install-mcp-test-deps.sh`` fills (same pins, same folder). Without npm the tests skip with the
reason, except under CI=true; with npm, a missing or other-version CLI fails (run the script)."""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import pytest

PINNED = {"claude": ("@anthropic-ai/claude-code", "2.1.197"), "codex": ("@openai/codex", "0.171.0"),
          "copilot": ("@github/copilot", "1.0.102")}
# One rule with ci/install-agent-clis.sh and ci/install-mcp-test-deps.sh: $LIDGUARD_TEST_NPM_DIR, else
# $HOME/.cache/lidguard-test-npm with the HOME the run started with (read here, at collection, before
# any test isolates HOME; the account's passwd home only when HOME is unset).
NPM_DIR = Path(os.environ.get("LIDGUARD_TEST_NPM_DIR")
               or Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "lidguard-test-npm")
BIN_DIR = NPM_DIR / "node_modules" / ".bin"


def agent_cli(name: str) -> Path:
    """The pinned CLI, or skip (fail under CI=true) saying what is missing and how to get it."""
    package, version = PINNED[name]
    executable = BIN_DIR / name
    manifest = NPM_DIR / "node_modules" / package / "package.json"
    if not executable.exists() and shutil.which("npm") is None:
        message = f"npm is not installed, so {package}@{version} cannot be installed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: the agent CLI tests may not skip)")
        pytest.skip(message)
    problem = None
    if not executable.exists() or not manifest.exists():
        problem = f"{package}@{version} is not installed in {NPM_DIR}"
    elif f'"version": "{version}"' not in manifest.read_text():
        problem = f"{NPM_DIR} holds another version of {package} than {version}"
    if problem is not None:
        pytest.fail(f"{problem}; run: bash ci/install-mcp-test-deps.sh")
    return executable


def cli_env(base: dict[str, str]) -> dict[str, str]:
    """The test environment with the pinned CLIs first on PATH and their network extras off."""
    # Copilot unpacks ~235 MB of its own program under XDG_CACHE_HOME on its first run: the folder the
    # agent tests share (tests/agents/agents_harness.py; unpacked there once, under its lock).
    return {**base, "PATH": f"{BIN_DIR}{os.pathsep}{base.get('PATH', '')}", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_UPDATE_NOTIFIER": "1",
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
            "XDG_CACHE_HOME": str(NPM_DIR / "copilot-xdg-cache")}


def unpack_copilot_once(cli: Path, env: dict[str, str]) -> None:
    """Copilot's first run unpacks its program into the shared cache folder: once, under the lock and
    marker the agent tests use (tests/agents/agents_harness.py), never by two workers at once."""
    import fcntl
    import subprocess

    cache = Path(env["XDG_CACHE_HOME"])
    cache.mkdir(parents=True, exist_ok=True)
    unpacked = cache / f".lidguard-unpacked-{PINNED['copilot'][1]}"
    with open(cache / ".lidguard-unpack.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if unpacked.exists():
            return
        result = subprocess.run([str(cli), "--version"], env=env, text=True, capture_output=True,
                                stdin=subprocess.DEVNULL, timeout=180)
        assert result.returncode == 0, f"copilot --version: {result.stdout}{result.stderr}"
        unpacked.touch()
