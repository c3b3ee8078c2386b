"""Ancestry walk of a real process chain: compiled reader vs pure reader vs psutil vs a plain C loop.

Run: ``python -m pytest benchmarks/test_bench_proctree.py`` (add ``--benchmark-disable`` for a
quick smoke run: every benchmark body then runs once). The compiled reader stays in the project only
while it wins here (design/STYLE.md, house rule 5).

The C baseline (issue 22) is a plain C program compiled with ``cc`` when the benchmark runs: the same walk
over the same files (``stat``, ``exe``, ``cmdline`` of each ancestor, each read to its end with open/read/
close, readlink), timed inside the program with the benchmark's clock, so the compiled reader is measured
against what the kernel costs, not against another Python reader.
"""

from __future__ import annotations

import importlib
import os
import shutil
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench_timing import STRICT

from lidguard import proctree
from lidguard.platform.api import ProcessInfo

psutil = pytest.importorskip("psutil")

CHAIN_LEVELS = 10
# Wall time with LIDGUARD_BENCH_STRICT=1; otherwise CPU time of this process, which a busy machine does not
# inflate (bench_timing.py); the syscalls both sides make count as system time.
CLOCK = time.perf_counter if STRICT else time.process_time
GROUP = "proctree-ancestry"
# The compiled walk must be at least this many times faster than the pure one (median of per-round
# ratios). Both are bound by /proc syscalls (7-9 per process); measured 1.6-1.8x on a loaded 2-core box,
# and the compiled walk then runs at about the cost of its syscalls issued from Python.
MIN_NATIVE_SPEEDUP = 1.2
# Issue 22: the compiled walk within this factor of the plain C loop (asserted in both modes: CPU time off
# STRICT), and 25x psutil. The 25x depends on the machine: it lies at or below the floor of the files the hook
# needs wherever psutil is under 25x the C loop, and psutil/C was 19-28x across the boxes measured (19.2-19.4x
# and ~23x on two quiet 2-core boxes, 24.4-27.6x on a third; printed as psutil/C). The compiled walk makes
# fewer system calls than the loop (no read to EOF, paths relative to the proc root) and builds ProcessInfo
# records in place: 0.96-1.03x the loop, 24.4-26.8x psutil on that third box. STRICT asserts 25x where the
# floor allows it, else the walk within STRICT_NEAR_FLOOR of the floor.
MAX_NATIVE_VS_C = 1.5
PSUTIL_TARGET = 25.0
STRICT_NEAR_FLOOR = 1.08
C_WALK = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buffer[1 << 20];

static long read_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    long length = 0, count;
    if (fd < 0) return -1;
    while ((count = read(fd, buffer + length, sizeof buffer - 1 - length)) > 0) length += count;
    close(fd);
    return count < 0 ? -1 : length;
}

static int walk(long pid) {
    char path[64], link[4097];
    int depth = 0;
    while (pid > 0 && depth < 64) {
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        long length = read_file(path);
        if (length <= 0) break;
        buffer[length] = 0;
        char *close_paren = strrchr(buffer, ')');
        if (close_paren == NULL) break;
        long parent = strtol(close_paren + 4, NULL, 10);
        snprintf(path, sizeof path, "/proc/%ld/exe", pid);
        if (readlink(path, link, sizeof link - 1) < 0) link[0] = 0;
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        read_file(path);
        depth++;
        pid = parent;
    }
    return depth;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* walk PID CALLS ROUNDS wall|cpu: prints the depth and the median over ROUNDS of seconds per walk */
int main(int argc, char **argv) {
    long pid = atol(argv[1]);
    int calls = atoi(argv[2]), rounds = atoi(argv[3]);
    clockid_t clock = argv[4][0] == 'w' ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
    double samples[64];
    int depth = walk(pid);
    for (int round = 0; round < rounds && round < 64; round++) {
        struct timespec start, end;
        clock_gettime(clock, &start);
        for (int i = 0; i < calls; i++) walk(pid);
        clock_gettime(clock, &end);
        samples[round] = ((end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9) / calls;
    }
    qsort(samples, rounds, sizeof samples[0], by_value);
    printf("%d %.9f\n", depth, samples[rounds / 2]);
    return 0;
}
"""
LEVEL_SCRIPT = """#!/bin/sh
if [ "$1" -le 0 ]; then
  echo $$
  read _ignored
  exit 0
fi
"$0" $(($1 - 1)) --some-option "an argument with spaces"
exit $?
"""


@pytest.fixture(scope="module")
def leaf_pid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The deepest process of a live chain of CHAIN_LEVELS + 1 shells below this test process."""
    script = Path(tmp_path_factory.mktemp("chain")) / "level.sh"
    script.write_text(LEVEL_SCRIPT)
    script.chmod(0o755)
    top = subprocess.Popen([str(script), str(CHAIN_LEVELS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           start_new_session=True)
    assert top.stdin is not None and top.stdout is not None
    try:
        yield int(top.stdout.readline())
    finally:
        top.stdin.close()
        try:
            top.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(top.pid, signal.SIGKILL)
            top.wait()
        top.stdout.close()


@pytest.fixture(scope="module")
def c_walk(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The plain C walk, compiled now; None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return None
    folder = Path(tmp_path_factory.mktemp("c-walk"))
    (folder / "walk.c").write_text(C_WALK)
    subprocess.run([compiler, "-O2", "-o", str(folder / "walk"), str(folder / "walk.c")], check=True,
                   capture_output=True, timeout=120)
    return folder / "walk"


def _c_median_seconds(program: Path, pid: int, *, rounds: int, calls: int) -> tuple[int, float]:
    output = subprocess.run([str(program), str(pid), str(calls), str(rounds), "wall" if STRICT else "cpu"],
                            check=True, capture_output=True, text=True, timeout=60).stdout.split()
    return int(output[0]), float(output[1])


def _compiled_read_chain() -> Callable[[int], list[object]] | None:
    """The compiled reader (also under LIDGUARD_NO_EXTENSIONS=1), or None when it is not built."""
    if proctree.native_active():
        return proctree.read_ancestry_native
    try:
        module = importlib.import_module("lidguard._native._proctree")
    except ImportError:
        return None
    if module.ABI_VERSION != proctree.NATIVE_ABI_VERSION:
        return None
    return lambda pid: module.read_chain(pid, proctree.DEFAULT_MAX_DEPTH, proctree.DEFAULT_PROC_ROOT, ProcessInfo)


def walk_pure(pid: int) -> list[object]:
    return list(proctree.read_ancestry_pure(pid))


def walk_psutil(pid: int) -> list[object]:
    """The same facts through psutil: name, exe and cmdline for every ancestor."""
    chain: list[object] = []
    process = psutil.Process(pid)
    while process is not None and len(chain) < proctree.DEFAULT_MAX_DEPTH:
        with process.oneshot():
            try:
                exe = process.exe()
            except psutil.AccessDenied:
                exe = ""
            chain.append((process.pid, process.ppid(), process.name(), exe, tuple(process.cmdline())))
        process = process.parent()
    return chain


@pytest.mark.benchmark(group=GROUP)
def test_bench_native(benchmark, leaf_pid: int) -> None:
    reader = _compiled_read_chain()
    if reader is None:
        pytest.skip("the compiled proctree module is not built")
    chain = benchmark(reader, leaf_pid)
    assert len(chain) >= CHAIN_LEVELS + 2


@pytest.mark.benchmark(group=GROUP)
def test_bench_pure(benchmark, leaf_pid: int) -> None:
    chain = benchmark(walk_pure, leaf_pid)
    assert len(chain) >= CHAIN_LEVELS + 2


@pytest.mark.benchmark(group=GROUP)
def test_bench_psutil(benchmark, leaf_pid: int) -> None:
    chain = benchmark(walk_psutil, leaf_pid)
    assert len(chain) >= CHAIN_LEVELS + 2


def _median_seconds(walk: Callable[[int], object], pid: int, *, rounds: int, calls: int) -> float:
    samples = []
    for _ in range(rounds):
        started = CLOCK()
        for _ in range(calls):
            walk(pid)
        samples.append((CLOCK() - started) / calls)
    return statistics.median(samples)


def test_median_ratios(leaf_pid: int, c_walk: Path | None, capsys: pytest.CaptureFixture[str]) -> None:
    """Measures the walks interleaved in one run (the C loop too, when a compiler is there), prints medians
    and ratios, and asserts that the compiled reader wins: at least MIN_NATIVE_SPEEDUP times faster than
    the pure one (STYLE rule 5) and within MAX_NATIVE_VS_C of the C loop."""
    native = _compiled_read_chain()
    walks: dict[str, Callable[[int], object]] = {"pure": walk_pure, "psutil": walk_psutil}
    if native is not None:
        walks["native"] = native
        assert [tuple(info) for info in native(leaf_pid)] == [tuple(info) for info in walk_pure(leaf_pid)]
    medians: dict[str, list[float]] = {name: [] for name in walks}
    if c_walk is not None:
        medians["C"] = []
        depth, _ = _c_median_seconds(c_walk, leaf_pid, rounds=1, calls=1)
        assert depth == len(walk_pure(leaf_pid)), "the C loop walks another chain"
    for _ in range(7):  # interleaved, so a noisy moment hits every walk alike
        for name, walk in walks.items():
            medians[name].append(_median_seconds(walk, leaf_pid, rounds=3, calls=20))
        if c_walk is not None:
            medians["C"].append(_c_median_seconds(c_walk, leaf_pid, rounds=3, calls=20)[1])
    result = {name: statistics.median(values) for name, values in medians.items()}
    lines = [f"{name:>7}: {seconds * 1e6:9.1f} us per ancestry walk" for name, seconds in result.items()]

    def ratio(slow: str, fast: str) -> float:  # median of per-round ratios
        return statistics.median(a / b for a, b in zip(medians[slow], medians[fast], strict=True))

    speedup = versus_c = versus_psutil = floor = None
    if "native" in result:
        speedup, versus_psutil = ratio("pure", "native"), ratio("psutil", "native")
        lines.append(f"pure/native = {speedup:.2f}x (median of per-round ratios; at least {MIN_NATIVE_SPEEDUP}x), "
                     f"psutil/native = {versus_psutil:.1f}x (issue 22 asked {PSUTIL_TARGET:.0f}x)")
        if "C" in result:
            versus_c = ratio("native", "C")
            lines.append(f"native/C = {versus_c:.2f}x (at most {MAX_NATIVE_VS_C}x)")
    if "C" in result:
        floor = ratio("psutil", "C")
        lines.append(f"psutil/C = {floor:.1f}x (the floor: about the most any walk of these files "
                     f"reaches against psutil here)")
    lines.append(f"psutil/pure = {result['psutil'] / result['pure']:.1f}x")
    with capsys.disabled():
        print(f"\nproctree ancestry medians (depth >= {CHAIN_LEVELS + 2}; "
              f"{'wall' if STRICT else 'CPU'} time):\n  " + "\n  ".join(lines))
    if speedup is not None:
        assert speedup >= MIN_NATIVE_SPEEDUP, f"the compiled walk is only {speedup:.2f}x the pure one"
    if versus_c is not None:
        assert versus_c <= MAX_NATIVE_VS_C, f"the compiled walk takes {versus_c:.2f}x the plain C loop"
    if STRICT and versus_psutil is not None and floor is not None:
        required = min(PSUTIL_TARGET, floor / STRICT_NEAR_FLOOR)
        assert versus_psutil >= required, (f"the compiled walk is {versus_psutil:.1f}x psutil, {required:.1f}x "
                                           f"required (the C loop: {floor:.1f}x)")
