"""The running-tool CPU check (issue 16, item 2): the compiled ``descendant_cpu`` (task children
files, and its full-scan fallback) against the pure /proc scan, on a live agent-like tree.

Run: ``python -m pytest benchmarks/test_bench_descendant_cpu.py -s`` (``--benchmark-disable`` runs each
body once). Read once per inactivity timeout per session with a running tool, so this is not a hot
path; the compiled reader stays only while it wins here (design/STYLE.md, house rule 5).
"""

from __future__ import annotations

import importlib
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from bench_timing import STRICT

from lidguard.platform.ancestry import linux as procfs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")

# Wall time with LIDGUARD_BENCH_STRICT=1; otherwise CPU time of this process (bench_timing.py).
CLOCK = time.perf_counter if STRICT else time.process_time
GROUP = "descendant-cpu"
TREE_WIDTH = 3  # a shell with 3 children, each with 3 children: 13 processes below the agent
# The children-file walk reads only the agent's subtree; the pure reader scans every process on the
# machine. Measured 13.9x (CPU time) on a loaded 2-core box with 139 processes (the figure grows with
# the process count); the compiled full scan (the fallback) 2.5x. The floors only say each clearly wins.
MIN_NATIVE_SPEEDUP = 2.0
MIN_SCAN_SPEEDUP = 1.2
TREE_SCRIPT = f"""#!/bin/sh
if [ "$1" -gt 0 ]; then
  for i in $(seq {TREE_WIDTH}); do "$0" $(($1 - 1)) & done
fi
exec sleep 600
"""


def compiled_module() -> ModuleType | None:
    try:
        module = importlib.import_module("lidguard._native._proctree")
    except ImportError:
        return None
    return module if module.ABI_VERSION == procfs.NATIVE_ABI_VERSION else None


@pytest.fixture(scope="module")
def agent_pid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A process with a two-level tree of shells below it (all sleeping once built)."""
    script = Path(tmp_path_factory.mktemp("tree")) / "tree.sh"
    script.write_text(TREE_SCRIPT)
    script.chmod(0o755)
    top = subprocess.Popen(["/bin/sh", "-c", f'"{script}" 2 & exec sleep 600'], start_new_session=True)
    expected = TREE_WIDTH + TREE_WIDTH**2 + 1  # the shell, its children and grandchildren (all sleep)
    deadline = time.monotonic() + 60
    try:
        while _count_descendants(top.pid) < expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _count_descendants(top.pid) >= expected
        yield top.pid
    finally:
        os.killpg(top.pid, signal.SIGKILL)
        top.wait()


def _count_descendants(pid: int) -> int:
    table = procfs.read_cpu_table()
    children: dict[int, list[int]] = {}
    for child, (parent, _cpu) in table.items():
        children.setdefault(parent, []).append(child)
    pending, count = list(children.get(pid, ())), 0
    while pending:
        count += 1
        pending.extend(children.get(pending.pop(), ()))
    return count


def readers() -> dict[str, Callable[[int], float | None]]:
    walks: dict[str, Callable[[int], float | None]] = {"pure": procfs.descendant_cpu_seconds}
    module = compiled_module()
    if module is not None:
        walks["native"] = module.descendant_cpu
        walks["native-scan"] = lambda pid: module.descendant_cpu(pid, "/proc", False)
    return walks


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("name", ["pure", "native", "native-scan"])
def test_bench_reader(benchmark, agent_pid: int, name: str) -> None:
    walks = readers()
    if name not in walks:
        pytest.skip("the compiled proctree module is not built")
    assert benchmark(walks[name], agent_pid) is not None


def _median_seconds(walk: Callable[[int], object], pid: int, *, rounds: int, calls: int) -> float:
    samples = []
    for _ in range(rounds):
        started = CLOCK()
        for _ in range(calls):
            walk(pid)
        samples.append((CLOCK() - started) / calls)
    return statistics.median(samples)


def test_median_ratios(agent_pid: int, capsys: pytest.CaptureFixture[str]) -> None:
    """The walks interleaved in one run: medians, ratios, and the compiled walk wins (STYLE rule 5)."""
    walks = readers()
    if "native" not in walks:
        pytest.skip("the compiled proctree module is not built")
    values = {name: walk(agent_pid) for name, walk in walks.items()}
    assert values["native"] == pytest.approx(values["pure"], abs=0.05)  # sleeping tree: (nearly) no change
    samples: dict[str, list[float]] = {name: [] for name in walks}
    for _ in range(5):  # interleaved, so a noisy moment hits every walk alike
        for name, walk in walks.items():
            samples[name].append(_median_seconds(walk, agent_pid, rounds=3, calls=10))
    result = {name: statistics.median(values) for name, values in samples.items()}
    speedup = statistics.median(pure / native for pure, native in zip(samples["pure"], samples["native"], strict=True))
    scan_speedup = statistics.median(pure / scan for pure, scan in zip(samples["pure"], samples["native-scan"],
                                                                      strict=True))
    processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
    lines = [f"{name:>11}: {seconds * 1e6:9.1f} us per read" for name, seconds in result.items()]
    lines.append(f"pure/native = {speedup:.1f}x (at least {MIN_NATIVE_SPEEDUP}x), pure/native-scan = "
                 f"{scan_speedup:.2f}x; {processes} processes on the machine, "
                 f"{'wall' if STRICT else 'CPU'} time")
    with capsys.disabled():
        print("\ndescendant CPU medians:\n  " + "\n  ".join(lines))
    assert speedup >= MIN_NATIVE_SPEEDUP, f"the compiled walk is only {speedup:.2f}x the pure one"
    assert scan_speedup >= MIN_SCAN_SPEEDUP, f"the compiled scan is only {scan_speedup:.2f}x the pure one"
