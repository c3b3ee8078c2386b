"""Whole-process cost of a hook command: `lidguard start` of a live session (runtime running) against the
floor `python -c "import json, socket, os"`, measured side by side, interleaved, in the same run.

What is measured is what an agent's hook runs: the `lidguard` console script pip installed beside this
interpreter (a pyenv/asdf shim on PATH would add the version manager's own start-up, not lidguard's).
Installed packages carry compiled bytecode, so both commands run with bytecode caching on (in a
private PYTHONPYCACHEPREFIX, warmed up before measuring) even where PYTHONDONTWRITEBYTECODE is set.

Target (issue 6): start <= 1.5x the floor in wall time, asserted with LIDGUARD_BENCH_STRICT=1 (a quiet
machine). Otherwise (ci/test.sh runs the benchmarks once as plain tests, beside the rest of the suite) it
asserts what holds under load: the start's CPU time <= SMOKE_RATIO x the floor's (bench_timing.py), which
catches a return of the 8x full CLI. Both figures are printed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path

from bench_timing import STRICT, ProcessTime, timed_process

FLOOR = [sys.executable, "-c", "import json, socket, os"]
TARGET_RATIO = 1.5
SMOKE_RATIO = 2.5  # CPU time, not asserted in wall time off STRICT: catches a return of the 8x full CLI
BENCH_ROUNDS = 30
SMOKE_ROUNDS = 7


def console_script() -> list[str]:
    """The `lidguard` entry point pip installed for this interpreter (PATH may hold a shim first)."""
    beside = Path(sysconfig.get_path("scripts")) / ("lidguard.exe" if os.name == "nt" else "lidguard")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("lidguard")
    return [found] if found else [sys.executable, "-m", "lidguard"]


def _timed(command: list[str], env: dict[str, str]) -> ProcessTime:
    timing, completed = timed_process(command, env)
    assert completed.returncode == 0, completed.stderr
    return timing


def _environment(lidguard) -> dict[str, str]:
    env = {**lidguard.env, "PYTHONPYCACHEPREFIX": str(lidguard.home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def test_start_of_a_live_session_against_bare_python(lidguard, benchmark):
    env = _environment(lidguard)
    start = [*console_script(), "start", "--provider", "claude", "--session", "bench"]
    # The first start auto-starts the runtime (on a loaded machine it may need more than the client's
    # 5 s window: retry); every later start updates the live session.
    assert lidguard.wait_until(
        lambda: subprocess.run(start, env=env, capture_output=True, timeout=60).returncode == 0, timeout=60)
    for _ in range(3):  # warm bytecode caches and the runtime
        _timed(FLOOR, env)
        _timed(start, env)
    floors: list[ProcessTime] = []
    starts: list[ProcessTime] = []

    def measure_floor() -> None:  # pedantic's setup: runs before each timed start, untimed
        floors.append(_timed(FLOOR, env))

    def measure_start() -> None:
        starts.append(_timed(start, env))

    # Disabled (--benchmark-disable), pedantic runs one floor+start pair: add a few more ourselves.
    benchmark.pedantic(measure_start, setup=measure_floor, rounds=BENCH_ROUNDS, iterations=1)
    if benchmark.disabled:
        for index in range(SMOKE_ROUNDS - 1):
            first, second = (measure_start, measure_floor) if index % 2 == 0 else (measure_floor, measure_start)
            first()
            second()
    # Each pair ran back to back under the same machine load: the median of the pair ratios.
    ratio = statistics.median(s.wall / f.wall for s, f in zip(starts, floors, strict=True))
    cpu_ratio = statistics.median(s.cpu / f.cpu for s, f in zip(starts, floors, strict=True))
    start_ms, floor_ms = (statistics.median(t.wall for t in times) * 1000 for times in (starts, floors))
    figure = (f"lidguard start (live session) {start_ms:.1f} ms vs floor {floor_ms:.1f} ms: ratio {ratio:.2f} "
              f"(CPU time {cpu_ratio:.2f}) over {len(starts)} interleaved rounds")
    benchmark.extra_info.update(floor_median_ms=floor_ms, start_median_ms=start_ms, ratio=ratio, cpu_ratio=cpu_ratio)
    print(figure)
    if STRICT:
        assert ratio <= TARGET_RATIO, figure
    assert cpu_ratio <= SMOKE_RATIO, figure
