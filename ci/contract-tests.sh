#!/usr/bin/env bash
# The real-OS contract tests against a BUILT wheel (release workflow): the wheel of this OS and Python from
# WHEEL_DIR installed into a fresh venv with the test group, then tests/contract with LIDGUARD_REAL_OS=1
# (read-only or self-reverting checks; they skip on any other OS).
#   bash ci/contract-tests.sh WHEEL_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
wheels="${1:?usage: bash ci/contract-tests.sh WHEEL_DIR}"
venv="$(mktemp -d)/venv"
python -m venv "$venv"
if [ -x "$venv/Scripts/python.exe" ]; then py="$venv/Scripts/python.exe"; else py="$venv/bin/python"; fi
"$py" -m pip install -q --upgrade "pip>=25.1"
# The wheel this interpreter would choose by its tags (the first cp312 wheel by name was another
# architecture's on macos-14 and on the Linux runners).
"$py" -m pip install -q packaging
wheel="$("$py" ci/pick_wheel.py "$wheels")"
"$py" -m pip install -q "$wheel"
"$py" -m pip install -q --group test
"$py" ci/wheel_smoke.py
# From outside the checkout so the installed wheel, not src/, is what the tests import.
(cd "$(mktemp -d)" && LIDGUARD_REAL_OS=1 "$py" -m pytest "$OLDPWD/tests/contract" -q -p no:cacheprovider \
    --rootdir "$OLDPWD" -c "$OLDPWD/pyproject.toml")
