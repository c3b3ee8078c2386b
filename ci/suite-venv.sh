#!/usr/bin/env bash
# The test suite's interpreter: a venv (.venv-suite in the checkout) that sees exactly the packages of the
# interpreter ci/install-test-deps.sh installed into, without running that interpreter's .pth code.
#
#   bash ci/suite-venv.sh PYTHON      (re)make it from PYTHON (ci/test.sh: python3 on PATH); prints its python
#
# Why: a .pth file of the host's site-packages runs at every interpreter start. This kind of machine has
# one that imports certifi (and importlib.resources, pathlib, tempfile...) to append a proxy's CA: ~45 ms
# of CPU per start, and the suite starts ~7,000 Python processes (runtimes, CLI commands, hooks, the
# real agents' hooks) - about a sixth of its CPU, a cost no user's pipx venv has. The venv lists the host's
# site-packages folders (and the folders its .pth files add, such as this checkout's src/ of the editable
# install) in one .pth of plain paths - a path line is added to sys.path, its folder's .pth files are not
# run - and has lidguard installed editable itself, so its bin/ holds the console scripts (`lidguard`,
# `lidguard-notify`) the tests start. Same modules, same versions, same sources: only the start-up hooks
# of the host are left out.
set -euo pipefail
cd "$(dirname "$0")/.."

host="${1:?usage: bash ci/suite-venv.sh PYTHON}"
venv="$PWD/.venv-suite"
host_python="$("$host" -c 'import sys; print(sys.executable)')"
rm -rf "$venv"
"$host_python" -m venv --without-pip "$venv"
site_packages="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
# The host's sys.path from its first site-packages folder on: those folders and what their .pth files add.
"$host_python" -c 'import site, sys
first = min(sys.path.index(p) for p in site.getsitepackages() if p in sys.path)
print("\n".join(p for p in sys.path[first:] if p))' >"$site_packages/_suite_host_paths.pth"
# The console scripts and the distribution's metadata in the venv (no dependencies: they are the host's).
"$host_python" -m pip --python "$venv/bin/python" install -q --no-deps --no-build-isolation --no-compile -e . \
    >/dev/null
"$venv/bin/python" -c 'import os, sys, lidguard, pytest
source = os.path.realpath("src") + os.sep
sys.exit(0 if os.path.realpath(lidguard.__file__).startswith(source) else "the suite venv does not import this checkout")'
echo "$venv/bin/python"
