"""Ancestry walk of a real process chain: compiled reader vs pure reader vs psutil.

Run: ``python -m pytest benchmarks/test_bench_proctree.py`` (add ``--benchmark-disable`` for a
quick smoke run: every benchmark body then runs once). The compiled reader stays in the project only
while it wins here (design/STYLE.md, house rule 5).
"""

from __future__ import annotations

import importlib
import os
import signal
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench_timing import STRICT

from lidguard import proctree

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
    return lambda pid: list(module.read_chain(pid, proctree.DEFAULT_MAX_DEPTH, proctree.DEFAULT_PROC_ROOT))


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


def test_median_ratios(leaf_pid: int, capsys: pytest.CaptureFixture[str]) -> None:
    """Measures the three walks interleaved in one run, prints medians and ratios, and asserts that the
    compiled reader wins: at least MIN_NATIVE_SPEEDUP times faster than the pure one (STYLE rule 5)."""
    native = _compiled_read_chain()
    walks: dict[str, Callable[[int], object]] = {"pure": walk_pure, "psutil": walk_psutil}
    if native is not None:
        walks["native"] = native
        assert [tuple(info) for info in native(leaf_pid)] == [tuple(info) for info in walk_pure(leaf_pid)]
    medians: dict[str, list[float]] = {name: [] for name in walks}
    for _ in range(7):  # interleaved, so a noisy moment hits every walk alike
        for name, walk in walks.items():
            medians[name].append(_median_seconds(walk, leaf_pid, rounds=3, calls=20))
    result = {name: statistics.median(values) for name, values in medians.items()}
    lines = [f"{name:>7}: {seconds * 1e6:9.1f} us per ancestry walk" for name, seconds in result.items()]
    speedup = None
    if "native" in result:
        speedup = statistics.median(pure / compiled for pure, compiled in zip(medians["pure"], medians["native"],
                                                                               strict=True))
        lines.append(f"pure/native = {speedup:.2f}x (median of per-round ratios; at least {MIN_NATIVE_SPEEDUP}x), "
                     f"psutil/native = {result['psutil'] / result['native']:.1f}x")
    lines.append(f"psutil/pure = {result['psutil'] / result['pure']:.1f}x")
    with capsys.disabled():
        print(f"\nproctree ancestry medians (depth >= {CHAIN_LEVELS + 2}):\n  " + "\n  ".join(lines))
    if speedup is not None:
        assert speedup >= MIN_NATIVE_SPEEDUP, f"the compiled walk is only {speedup:.2f}x the pure one"
