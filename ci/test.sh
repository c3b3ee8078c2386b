#!/usr/bin/env bash
# The whole test suite: unit, runtime, CLI end-to-end, Linux backend against a private D-Bus with
# python-dbusmock's logind, benchmarks (run once each as tests), the pure-Python axis, and the wheel.
#
# Self-sufficient: it first installs whatever the suite needs (ci/install-test-deps.sh: a check of
# about 0.3 s when everything is there; apt-get through sudo when not root). With CI=true (set by
# .ci/run and by CI services) the Linux backend tests may not skip for lack of dbus-daemon or
# python-dbusmock: a skipped backend must fail CI instead of passing silently.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== set-up =="
bash ci/install-test-deps.sh
if [ "${CI:-}" = "true" ]; then
    export LIDGUARD_REQUIRE_DBUS=1
fi

# pytest exits 5 when it collected nothing: a wrong path or a broken collection must not pass.
run_pytest() {
    local status=0
    python3 -m pytest "$@" || status=$?
    if [ "$status" -eq 5 ]; then
        echo "ci/test.sh: pytest collected no tests for: $*" >&2
        exit 1
    fi
    if [ "$status" -ne 0 ]; then
        exit "$status"
    fi
}

echo "== lint =="
python3 -m ruff check src tests benchmarks ci conftest.py setup.py
python3 ci/check_os_code.py
python3 -m mypy src/lidguard

echo "== test suite (native modules required) =="
LIDGUARD_REQUIRE_EXTENSIONS=1 run_pytest tests benchmarks --benchmark-disable -q -p no:cacheprovider

echo "== pure-Python axis (LIDGUARD_NO_EXTENSIONS=1) =="
LIDGUARD_NO_EXTENSIONS=1 run_pytest tests/processes tests/linux_sysfs tests/linux tests/runtime \
    --benchmark-disable -q -p no:cacheprovider

echo "== wheel =="
bash ci/check-wheel.sh
