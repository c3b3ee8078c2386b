"""The real agent CLIs, pinned, in the npm cache folder ``ci/install-agent-clis.sh`` fills, and OpenHands
CLI (PyPI, Python 3.12 only) in the venv ``ci/install-openhands.sh`` makes beside it.

Without node/npm the tests skip with the reason, except under CI=true, where they fail; with npm, a
missing or other-version CLI fails (run the script): a skipped end-to-end test must not pass CI. A missing
OpenHands venv (it needs a Python 3.12 the machine may lack) skips the same way, failing under CI=true.
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
    # the native binary's package (AGENT_CLIS_NEW.md 1): the shim @factory/cli is 0.225.1
    "droid": ("@factory/cli-linux-x64", "0.225.2"),
    "cline": ("cline", "3.0.65"),  # AGENT_CLIS_NEW.md section 2
    "kilo": ("@kilocode/cli-linux-x64", "7.7.9"),  # its platform package: AGENT_CLIS_NEW.md section 3
    "auggie": ("@augmentcode/auggie", "0.36.0"),  # against tests/agents/fake_augment.py (AGENT_CLIS_NEW.md 6)
}
# CLIs whose package links no npm bin (a platform package installed directly): its program in the package.
PACKAGE_EXECUTABLES = {"kilo": "bin/kilo"}
# One rule with ci/install-agent-clis.sh and ci/install-mcp-test-deps.sh: $LIDGUARD_TEST_NPM_DIR, else
# $HOME/.cache/lidguard-test-npm with the HOME the run started with (read here, at collection, before
# any test isolates HOME; the account's passwd home only when HOME is unset).
NPM_DIR = Path(os.environ.get("LIDGUARD_TEST_NPM_DIR")
               or Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "lidguard-test-npm")
BIN_DIR = NPM_DIR / "node_modules" / ".bin"
# OpenHands CLI: keep in step with OPENHANDS_VERSION in ci/install-openhands.sh (the same folder rule).
OPENHANDS_PINNED = ("openhands", "1.16.0")
OPENHANDS_DIR = Path(os.environ.get("LIDGUARD_TEST_OPENHANDS_DIR") or NPM_DIR.parent / "lidguard-test-openhands")
OPENHANDS_VENV = OPENHANDS_DIR / "venv"


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


def openhands_cli() -> Path:
    """OpenHands' console script in its pinned venv, or skip (fail under CI=true) when it is not installed."""
    package, version = OPENHANDS_PINNED
    executable = OPENHANDS_VENV / "bin" / "openhands"
    installed = OPENHANDS_DIR / f"installed-openhands-{version}"  # written last by the set-up
    dist = OPENHANDS_VENV / "lib" / "python3.12" / "site-packages" / f"{package}-{version}.dist-info"
    if not (executable.exists() and installed.exists() and dist.is_dir()):
        _skip_or_fail(f"{package} {version} is not installed in {OPENHANDS_VENV} (run: bash ci/install-openhands.sh)")
    return executable


def agent_cli(name: str) -> Path:
    """The pinned CLI's npm bin, or skip (fail under CI=true) when node/npm is absent."""
    if name == "openhands":
        return openhands_cli()
    package, version = PINNED[name]
    executable = (NPM_DIR / "node_modules" / package / PACKAGE_EXECUTABLES[name] if name in PACKAGE_EXECUTABLES
                  else BIN_DIR / name)
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
