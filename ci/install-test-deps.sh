#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian machine (run as root, or with sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# dbus-daemon + python-dbusmock (logind template, runs under Debian's python3 with PyGObject),
# systemd tools (systemd-inhibit, systemctl, busctl) and libsystemd for the sd-bus binding,
# a compiler and Python headers for the Cython modules.
export DEBIAN_FRONTEND=noninteractive
$SUDO dpkg --configure -a >/dev/null 2>&1 || true  # finish any interrupted earlier install
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    dbus-daemon dbus python3-dbusmock python3-dbus python3-gi systemd libsystemd0 \
    gcc python3-dev procps >/dev/null

python3 -m pip install -q -U "pip>=25.1"
# Build tools for the in-place native build below (it runs without build isolation).
python3 -m pip install -q -U "setuptools>=77" "setuptools-scm>=8" "cython>=3" "cffi>=1.17" wheel build
python3 -m pip install -q --group test -e .
# The editable install keeps sources in src/; build the native modules next to them.
python3 setup.py -q build_ext --inplace
