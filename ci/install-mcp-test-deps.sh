#!/usr/bin/env bash
# What the MCP tests (tests/mcp) need beyond the test group: the `mcp` extra of lidguard and the real
# Claude Code, Codex and Copilot CLIs from npm, pinned, in a cache folder the tests find on their own.
# Quick and idempotent: prints nothing and installs nothing when everything is there.
#
#   bash ci/install-mcp-test-deps.sh           install what is missing
#   bash ci/install-mcp-test-deps.sh --force   install everything again
#
# The npm folder is $LIDGUARD_TEST_NPM_DIR, else ~/.cache/lidguard-test-npm (tests/mcp/agent_clis.py
# reads the same variable and pins). Without npm the CLIs are not installed; the CLI tests then skip,
# except under CI=true, where a missing CLI fails them.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_REQUIREMENT="mcp>=2.3,<3"        # keep in step with [project.optional-dependencies] mcp in pyproject.toml
NPM_PACKAGES=("@anthropic-ai/claude-code@2.1.197" "@openai/codex@0.171.0" "@github/copilot@1.0.102")   # tests/mcp/agent_clis.py
NPM_DIR="${LIDGUARD_TEST_NPM_DIR:-$HOME/.cache/lidguard-test-npm}"
force=0
[ "${1:-}" = "--force" ] && force=1

PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
if [ "$force" = 1 ] || ! "$PYTHON" -c 'import importlib.util, sys
sys.exit(0 if importlib.util.find_spec("mcp") and importlib.util.find_spec("mcp.server.mcpserver") else 1)' \
        2>/dev/null; then
    echo "test set-up: installing the mcp extra ($MCP_REQUIREMENT)"
    PIP_SUDO=""
    if [ "$(id -u)" -ne 0 ] && ! "$PYTHON" -c 'import os, sys, sysconfig
sys.exit(0 if os.access(sysconfig.get_paths()["purelib"], os.W_OK) else 1)'; then
        PIP_SUDO="sudo"
    fi
    $PIP_SUDO "$PYTHON" -m pip install -q "$MCP_REQUIREMENT"
fi

# LIDGUARD_SETUP_PART=python: the mcp extra only (ci/install-test-deps.sh has ci/install-agent-clis.sh
# install these CLIs with the others, in its npm lane).
if [ "${LIDGUARD_SETUP_PART:-all}" = python ]; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "test set-up: npm is not installed; the tests against the real Claude Code and Codex CLIs will skip" \
         "(and fail under CI=true)"
    exit 0
fi
missing=()
for spec in "${NPM_PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    manifest="$NPM_DIR/node_modules/$name/package.json"
    if [ "$force" = 1 ] || [ ! -f "$manifest" ] || \
            ! grep -q "\"version\": *\"$version\"" "$manifest"; then
        missing+=("$spec")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "test set-up: installing ${missing[*]} into $NPM_DIR"
    mkdir -p "$NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name": "lidguard-test-npm", "private": true}' > "$NPM_DIR/package.json"
    npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error "${missing[@]}" >/dev/null
fi
