#!/usr/bin/env bash
# The unprivileged user of the test suite's user lane (issue 34.4): `lidguard-test`, uid/gid 43210, no
# login shell, its own HOME under /var/tmp. Run as root; idempotent and quick when all is in place.
#
#   bash ci/test-user.sh          create the user if missing, open the least the user needs to run
#                                 the suite from this checkout, then prove it (exit 0 = ready)
#   bash ci/test-user.sh --check  only prove it (exit 0 = ready, 1 = not)
#   bash ci/test-user.sh --run COMMAND...
#                                 run COMMAND as the user (setpriv), with the user lane's environment:
#                                 HOME, LIDGUARD_EXPECT_UNPRIVILEGED=1 (conftest.py then refuses root),
#                                 the caller's agent-CLI npm folder, Hypothesis' database under HOME
#
# What the user needs: to run python3 (the interpreter, its standard library and site-packages with the
# editable install of this checkout) and to read the checkout. Nothing is made writable: the tree and its
# __pycache__ stay root's (ci/test.sh byte-compiles them first; the user lane only reads them). The same for
# OpenHands' own Python 3.12 venv when ci/install-openhands.sh made one (tests/agents runs it). A folder
# on the way that others cannot enter (this machine's pyenv Python lives under /root, mode 0700) gets o+x
# - search only, never read (o+r) nor write - and the script says which.
set -euo pipefail
cd "$(dirname "$0")/.."

TEST_USER=lidguard-test
TEST_UID=43210
TEST_HOME=/var/tmp/lidguard-test
mode="${1:-}"
case "$mode" in
    ""|--check|--run) ;;
    *) echo "usage: bash ci/test-user.sh [--check | --run COMMAND...]" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
    echo "ci/test-user.sh: needs root (creates the user $TEST_USER)" >&2
    exit 1
fi
if [ "$mode" = "--run" ]; then
    shift
    # The npm folder of the caller's HOME (tests/agents/agents_clis.py's rule), read before HOME changes.
    export LIDGUARD_TEST_NPM_DIR="${LIDGUARD_TEST_NPM_DIR:-$HOME/.cache/lidguard-test-npm}"
    export HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER" LIDGUARD_EXPECT_UNPRIVILEGED=1
    export HYPOTHESIS_STORAGE_DIRECTORY="$TEST_HOME/.hypothesis"
    exec setpriv --reuid "$TEST_UID" --regid "$TEST_UID" --init-groups -- "$@"
fi
# The interpreter the lane runs (ci/test.sh passes ci/suite-venv.sh's), else python3 on PATH.
PYTHON="${LIDGUARD_SUITE_PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
# OpenHands' venv (ci/install-openhands.sh's folder rule); its interpreter lives elsewhere (pyenv's 3.12).
NPM_DIR="${LIDGUARD_TEST_NPM_DIR:-$HOME/.cache/lidguard-test-npm}"
OPENHANDS_PYTHON="${LIDGUARD_TEST_OPENHANDS_DIR:-$(dirname "$NPM_DIR")/lidguard-test-openhands}/venv/bin/python"

as_user() {
    env -i PATH="$PATH" HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER" LANG=C.UTF-8 \
        setpriv --reuid "$TEST_UID" --regid "$TEST_UID" --init-groups "$@"
}
probe() {
    # The lane's interpreter imports lidguard (the editable install: this checkout) and pytest.
    as_user "$PYTHON" -c 'import os, sys, lidguard, pytest, xdist
source = os.path.realpath(os.path.join(sys.argv[1], "src")) + os.sep
sys.exit(0 if os.path.realpath(lidguard.__file__).startswith(source) else 3)' "$PWD" >/dev/null 2>&1 \
        && probe_openhands
}
probe_openhands() {
    # The venv's interpreter starts and its site-packages (openhands_cli) can be read; cheap (no import).
    [ ! -x "$OPENHANDS_PYTHON" ] || as_user "$OPENHANDS_PYTHON" -c 'import os, sysconfig
sys_ok = os.access(os.path.join(sysconfig.get_paths()["purelib"], "openhands_cli", "__init__.py"), os.R_OK)
raise SystemExit(0 if sys_ok else 3)' >/dev/null 2>&1
}

if [ "$mode" = "--check" ]; then
    if getent passwd "$TEST_USER" >/dev/null && probe; then
        exit 0
    fi
    echo "test-user: $TEST_USER is missing or cannot run $PYTHON from $PWD (run: bash ci/test-user.sh)" >&2
    exit 1
fi

if ! getent group "$TEST_USER" >/dev/null; then
    groupadd --gid "$TEST_UID" "$TEST_USER"
fi
if ! getent passwd "$TEST_USER" >/dev/null; then
    useradd --uid "$TEST_UID" --gid "$TEST_UID" --home-dir "$TEST_HOME" --no-create-home \
        --shell /usr/sbin/nologin --comment "lidguard test suite (user lane)" "$TEST_USER"
    echo "test-user: created $TEST_USER (uid $TEST_UID, HOME $TEST_HOME)"
fi
if [ "$(id -u "$TEST_USER")" != "$TEST_UID" ]; then
    echo "ci/test-user.sh: $TEST_USER exists with uid $(id -u "$TEST_USER"), not $TEST_UID" >&2
    exit 1
fi
install -d -m 0700 -o "$TEST_UID" -g "$TEST_UID" "$TEST_HOME"

if probe; then
    exit 0
fi
# Every folder from / down to what the user must reach: search permission for others where missing.
openhands_paths=()
if [ -x "$OPENHANDS_PYTHON" ]; then
    mapfile -t openhands_paths < <("$OPENHANDS_PYTHON" -c 'import os, sys, sysconfig
print(sys.executable); print(os.path.realpath(sys.executable)); print(sys.base_prefix)
print("\n".join(sysconfig.get_paths().values()))')
fi
python3 - "$PYTHON" "$PWD" "${openhands_paths[@]}" <<'PY'
import os
import stat
import sys
import sysconfig

import lidguard

targets = [sys.argv[1], os.path.realpath(sys.argv[1]), sys.argv[2], os.path.dirname(lidguard.__file__),
           *sysconfig.get_paths().values(), *sys.argv[3:]]
seen = set()
for target in targets:
    path = os.path.abspath(target)
    chain = []
    while True:
        chain.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(chain):
        if folder in seen or not os.path.isdir(folder):
            continue
        seen.add(folder)
        mode = os.stat(folder).st_mode
        if not mode & stat.S_IXOTH:
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
            print(f"test-user: chmod o+x {folder} (the user lane runs {sys.argv[1]})")
PY
if ! probe; then
    echo "ci/test-user.sh: $TEST_USER still cannot run $PYTHON with lidguard from $PWD" \
         "(or OpenHands' $OPENHANDS_PYTHON):" >&2
    as_user "$PYTHON" -c 'import lidguard, pytest, xdist; print(lidguard.__file__)' >&2 || true
    exit 1
fi
