#!/usr/bin/env bash
# OpenHands CLI (PyPI `openhands`, pinned) for tests/agents/test_agent_openhands.py: a venv of its own
# made with Python 3.12 (every openhands 1.x declares Requires-Python ==3.12.*; under another Python pip
# resolves the empty placeholder 0.0.0 and "succeeds"), in a cache folder beside the npm folder of
# ci/install-agent-clis.sh. Quick and silent when the pinned version is there. Runs under a lock, so two
# set-ups never fill the venv at once.
#
#   bash ci/install-openhands.sh           install when missing
#   bash ci/install-openhands.sh --force   make the venv again
#   bash ci/install-openhands.sh --check   exit 0 when ready, 1 (and say what) otherwise
#
# The folder is $LIDGUARD_TEST_OPENHANDS_DIR, else lidguard-test-openhands beside the npm folder
# ($LIDGUARD_TEST_NPM_DIR, else $HOME/.cache/lidguard-test-npm); tests/agents/agents_clis.py applies the
# same rule. Python 3.12: $LIDGUARD_PYTHON312, else pyenv's 3.12.x, else a python3.12 on PATH or in /usr.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENHANDS_VERSION=1.16.0  # keep in step with OPENHANDS_PINNED in tests/agents/agents_clis.py
NPM_DIR="${LIDGUARD_TEST_NPM_DIR:-$HOME/.cache/lidguard-test-npm}"
OH_DIR="${LIDGUARD_TEST_OPENHANDS_DIR:-$(dirname "$NPM_DIR")/lidguard-test-openhands}"
VENV="$OH_DIR/venv"
MARKER="$OH_DIR/installed-openhands-$OPENHANDS_VERSION"  # written last: a venv without it is incomplete
mode="${1:-}"
case "$mode" in
    ""|--check|--force) ;;
    *) echo "usage: bash ci/install-openhands.sh [--check|--force]" >&2; exit 2 ;;
esac

ready() {
    [ -f "$MARKER" ] && [ -x "$VENV/bin/openhands" ] && [ -x "$VENV/bin/python" ] \
        && [ -d "$VENV/lib/python3.12/site-packages/openhands-$OPENHANDS_VERSION.dist-info" ]
}

if [ "$mode" = "--check" ]; then
    ready && exit 0
    echo "openhands: openhands $OPENHANDS_VERSION is not installed in $VENV (run: bash ci/install-openhands.sh)"
    exit 1
fi
if [ "$mode" != "--force" ] && ready; then
    exit 0
fi

python312() {
    local candidate
    for candidate in "${LIDGUARD_PYTHON312:-}" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 \
            /usr/bin/python3.12 /usr/local/bin/python3.12 "$(command -v python3.12 || true)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c \
                'import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

mkdir -p "$OH_DIR"
exec 9>"$OH_DIR/.install.lock"
flock 9
if [ "$mode" != "--force" ] && ready; then  # another set-up installed it while this one waited
    exit 0
fi
PYTHON312="$(python312)" || {
    echo "test set-up: no Python 3.12 found (pyenv's, /usr/bin/python3.12 or LIDGUARD_PYTHON312);" \
         "openhands $OPENHANDS_VERSION needs exactly 3.12, so its tests will skip (and fail under CI=true)" >&2
    exit 0
}
echo "test set-up: installing openhands $OPENHANDS_VERSION into $VENV (Python $PYTHON312)"
rm -rf "$VENV" "$MARKER"
"$PYTHON312" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input "openhands==$OPENHANDS_VERSION" \
    >"$OH_DIR/pip.log" 2>&1 || { grep -v "^WARNING: Location" "$OH_DIR/pip.log" >&2; exit 1; }
rm -f "$OH_DIR/pip.log"
touch "$MARKER"
