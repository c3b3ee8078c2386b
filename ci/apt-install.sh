#!/usr/bin/env bash
# Installs Debian packages for the test set-up: sudo when not root, one apt at a time (the set-up scripts
# run side by side: a lock file serialises them instead of apt failing on dpkg's lock), and the package
# lists fetched once per set-up (a stamp younger than 30 minutes skips `apt-get update`).
#
#   bash ci/apt-install.sh PACKAGE...
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: bash ci/apt-install.sh PACKAGE..." >&2; exit 2; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "test set-up: $* missing, this is not root and sudo is not installed" >&2
        exit 1
    fi
    SUDO=(sudo)
fi
lock="${TMPDIR:-/tmp}/lidguard-test-apt.lock"
stamp="${TMPDIR:-/tmp}/lidguard-test-apt.updated"
exec 9>>"$lock"
flock 9
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" dpkg --configure -a >/dev/null 2>&1 || true  # finish any interrupted earlier install
if [ -z "$(find "$stamp" -mmin -30 2>/dev/null)" ]; then
    "${SUDO[@]}" apt-get update -qq
    touch "$stamp"
fi
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
