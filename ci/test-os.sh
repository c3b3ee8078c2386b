#!/usr/bin/env bash
# The tests that prove something on macOS and Windows (ci.yml's other-os jobs; Linux runs the whole suite
# through .ci/run): lidguard installed from this checkout, then the real-OS contract tests (tests/contract,
# read-only or self-reverting, never a power-policy change) and the platform tests of this OS.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q --upgrade "pip>=25.1"
python -m pip install -q --group test -e .
case "$(python -c 'import sys; print(sys.platform)')" in
    darwin) platform_tests=(tests/macos) ;;
    win32) platform_tests=(tests/windows) ;;
    *) platform_tests=(tests/linux) ;;
esac
LIDGUARD_REAL_OS=1 python -m pytest tests/contract "${platform_tests[@]}" tests/settings -q -p no:cacheprovider
