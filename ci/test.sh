#!/usr/bin/env bash
# The whole test suite: unit, runtime, CLI end-to-end, Linux backend against a private D-Bus with
# python-dbusmock's logind, benchmarks (run once each as tests), the pure-Python axis, and the wheel.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== lint =="
python3 -m ruff check src tests benchmarks ci conftest.py setup.py
python3 ci/check_os_code.py
python3 -m mypy src/lidguard

echo "== test suite (native modules required) =="
LIDGUARD_REQUIRE_EXTENSIONS=1 python3 -m pytest tests benchmarks --benchmark-disable -q -p no:cacheprovider

echo "== pure-Python axis (LIDGUARD_NO_EXTENSIONS=1) =="
LIDGUARD_NO_EXTENSIONS=1 python3 -m pytest tests/processes tests/linux_sysfs tests/linux tests/runtime \
    --benchmark-disable -q -p no:cacheprovider

echo "== wheel =="
bash ci/check-wheel.sh
