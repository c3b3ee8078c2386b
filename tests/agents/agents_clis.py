"""The real agent CLIs, pinned, in the npm cache folder ``ci/install-agent-clis.sh`` fills.

Without node/npm the tests skip with the reason, except under CI=true, where they fail; with npm, a
missing or other-version CLI fails (run the script): a skipped end-to-end test must not pass CI.
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# The versions ../shared/spec/AGENT_CLIS.md (+ _MORE.md) observed; keep in step with ci/install-agent-clis.sh.
PINNED = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
    "codex": ("@openai/codex", "0.171.0"),
    "opencode": ("opencode-ai", "1.18.33"),
    "copilot": ("@github/copilot", "1.0.102"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4"),
    "auggie": ("@augmentcode/auggie", "0.36.0"),  # against tests/agents/fake_augment.py (AGENT_CLIS_NEW.md 6)
}
# One rule with ci/install-agent-clis.sh and ci/install-mcp-test-deps.sh: $LIDGUARD_TEST_NPM_DIR, else
# $HOME/.cache/lidguard-test-npm with the HOME the run started with (read here, at collection, before
# any test isolates HOME; the account's passwd home only when HOME is unset).
NPM_DIR = Path(os.environ.get("LIDGUARD_TEST_NPM_DIR")
               or Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "lidguard-test-npm")
BIN_DIR = NPM_DIR / "node_modules" / ".bin"


def _copilot_cache_dir() -> Path:
    """Copilot unpacks its program (~235 MB) into its XDG cache on its first run: beside the npm folder,
    shared by every test, when this user may write there; else (ci/test.sh's user lane reads root's npm
    folder) under the HOME this run started with."""
    shared = NPM_DIR / "copilot-xdg-cache"
    if os.access(shared if shared.exists() else NPM_DIR, os.W_OK):
        return shared
    home = Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)
    return home / ".cache" / "lidguard-copilot-xdg-cache"


COPILOT_CACHE_DIR = _copilot_cache_dir()
INSTALL_HINT = "run: bash ci/install-agent-clis.sh"
# The npm wrappers of Codex and Copilot are ES modules that need a recent node (Copilot's loader uses
# import.meta.resolve); Debian 12's nodejs 18 is the oldest this was meant for.
MIN_NODE_MAJOR = 18


def _skip_or_fail(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the real agent CLI tests may not skip)")
    pytest.skip(message)


def agent_cli(name: str) -> Path:
    """The pinned CLI's npm bin, or skip (fail under CI=true) when node/npm is absent."""
    package, version = PINNED[name]
    executable = BIN_DIR / name
    manifest = NPM_DIR / "node_modules" / package / "package.json"
    if shutil.which("node") is None or (not executable.exists() and shutil.which("npm") is None):
        _skip_or_fail(f"node/npm is not installed, so {package}@{version} cannot run ({INSTALL_HINT})")
    major = node_major()
    if major < MIN_NODE_MAJOR:
        pytest.fail(f"node {major} is too old for the agent CLIs' npm wrappers (need >= {MIN_NODE_MAJOR})")
    if not executable.exists() or not manifest.exists():
        pytest.fail(f"{package}@{version} is not installed in {NPM_DIR}; {INSTALL_HINT}")
    if f'"version": "{version}"' not in manifest.read_text():
        pytest.fail(f"{NPM_DIR} holds another version of {package} than {version}; {INSTALL_HINT}")
    return executable


@functools.cache
def node_major() -> int:
    result = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30)
    found = re.match(r"v(\d+)\.", result.stdout.strip())
    return int(found.group(1)) if found else 0


def require_tmux() -> str:
    tmux = shutil.which("tmux")
    if tmux is None:
        _skip_or_fail(f"tmux is not installed (interactive agent runs need it; {INSTALL_HINT})")
    assert tmux is not None
    return tmux
