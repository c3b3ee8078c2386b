#!/usr/bin/env bash
# What the notification server tests (tests/notify) need beyond the test group: the `notify` extra of
# lidguard, http-ece (the tests decrypt Web Push bodies), Playwright for Python (driving the SYSTEM
# chromium: never `playwright install`, it downloads from the internet) and Debian's chromium.
# Quick and idempotent: prints nothing and installs nothing when everything is there.
#
#   bash ci/install-notify-test-deps.sh           install what is missing
#   bash ci/install-notify-test-deps.sh --force   install everything again
#
# Without chromium the browser tests skip, except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

# Keep in step with [project.optional-dependencies] notify in pyproject.toml.
PYTHON_REQUIREMENTS=("starlette>=0.40" "uvicorn>=0.30" "jinja2>=3.1" "pywebpush>=2.0" "py-vapid>=1.9"
                     "cryptography>=42" "http-ece>=1.2" "playwright>=1.40")
force=0
[ "${1:-}" = "--force" ] && force=1

PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# LIDGUARD_SETUP_PART=python or system: only that half (ci/install-test-deps.sh runs them side by side).
part="${LIDGUARD_SETUP_PART:-all}"
if [ "$part" != system ] && { [ "$force" = 1 ] || ! "$PYTHON" -c 'import importlib.util, sys
sys.exit(0 if all(importlib.util.find_spec(m) for m in
    ("starlette", "uvicorn", "jinja2", "pywebpush", "py_vapid", "http_ece", "playwright")) else 1)' 2>/dev/null; }; then
    echo "test set-up: installing the notify extra, http-ece and playwright"
    PIP_SUDO=""
    if [ -n "$SUDO" ] && ! "$PYTHON" -c 'import os, sys, sysconfig
sys.exit(0 if os.access(sysconfig.get_paths()["purelib"], os.W_OK) else 1)'; then
        PIP_SUDO="$SUDO"
    fi
    $PIP_SUDO "$PYTHON" -m pip install -q "${PYTHON_REQUIREMENTS[@]}"
fi

if [ "$part" != python ] && { [ "$force" = 1 ] || ! command -v chromium >/dev/null; }; then
    if [ -n "$SUDO" ] && ! command -v sudo >/dev/null; then
        echo "test set-up: chromium is missing, this is not root and sudo is not installed;" \
             "the browser tests will skip (and fail under CI=true)" >&2
        exit 0
    fi
    echo "test set-up: installing chromium (Debian package)"
    bash ci/apt-install.sh chromium
fi
