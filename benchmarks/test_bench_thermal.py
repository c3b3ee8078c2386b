"""Thermal snapshot cost: the compiled sampler against the pure reader over 16 zones.

The compiled module stays only while it wins (STYLE rule 5): both samplers are timed in alternating
rounds on the same tree and the median of the per-round ratios must show the compiled one at least
MIN_SPEEDUP times faster (measured 1.35x on a loaded 2-core box; both are bound by open/read
syscalls, so the margin is modest). Parity of the values is asserted too.

    python -m pytest benchmarks/test_bench_thermal.py -q -s
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from bench_timing import STRICT

from lidguard.platform.linux.thermal import read_zone_temperatures_pure

# Wall time with LIDGUARD_BENCH_STRICT=1; otherwise CPU time of this process, which a busy machine does not
# inflate (bench_timing.py); the syscalls both sides make count as system time.
CLOCK = time.perf_counter if STRICT else time.process_time
ZONE_COUNT = 16
ROUNDS = 15
CALLS_PER_ROUND = 200
MIN_SPEEDUP = 1.1


def _compiled_sampler() -> ModuleType | None:
    try:
        return importlib.import_module("lidguard._native._thermal")
    except ImportError:
        return None


COMPILED = _compiled_sampler()
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="lidguard._native._thermal is not built")


@pytest.fixture
def sixteen_zones(tmp_path: Path) -> Path:
    """A laptop-like tree: 16 zones (symlinked like real sysfs) plus cooling devices."""
    thermal = tmp_path / "sys/class/thermal"
    devices = tmp_path / "sys/devices/virtual/thermal"
    thermal.mkdir(parents=True)
    for index in range(ZONE_COUNT):
        zone = devices / f"thermal_zone{index}"
        zone.mkdir(parents=True)
        (zone / "type").write_text("x86_pkg_temp\n" if index == 0 else "acpitz\n")
        (zone / "temp").write_text(f"{40000 + index * 1250}\n")
        (thermal / f"thermal_zone{index}").symlink_to(zone)
        (thermal / f"cooling_device{index}").mkdir()
    return tmp_path


def _seconds_per_call(sample: Callable[[], object]) -> float:
    """One round: the mean time of CALLS_PER_ROUND calls (the median is taken over rounds)."""
    start = CLOCK()
    for _ in range(CALLS_PER_ROUND):
        sample()
    return (CLOCK() - start) / CALLS_PER_ROUND


@needs_compiled
def test_native_beats_pure(sixteen_zones: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert COMPILED is not None
    root = str(sixteen_zones)
    expected = [40.0 + index * 1.25 for index in range(ZONE_COUNT)]
    assert read_zone_temperatures_pure(sixteen_zones) == expected
    assert COMPILED.read_zone_temperatures(root) == expected
    pure_rounds: list[float] = []
    native_rounds: list[float] = []
    for _ in range(ROUNDS):  # alternating: a busy moment hits both alike
        pure_rounds.append(_seconds_per_call(lambda: read_zone_temperatures_pure(sixteen_zones)))
        native_rounds.append(_seconds_per_call(lambda: COMPILED.read_zone_temperatures(root)))
    speedup = statistics.median(pure / native for pure, native in zip(pure_rounds, native_rounds, strict=True))
    with capsys.disabled():
        print(f"\nthermal snapshot, {ZONE_COUNT} zones, median of {ROUNDS} rounds x {CALLS_PER_ROUND} calls:")
        print(f"  pure   {statistics.median(pure_rounds) * 1e6:8.1f} us")
        print(f"  native {statistics.median(native_rounds) * 1e6:8.1f} us")
        print(f"  pure/native (median of per-round ratios) = {speedup:.2f}x (at least {MIN_SPEEDUP}x)")
    assert speedup >= MIN_SPEEDUP, f"the compiled sampler is only {speedup:.2f}x the pure one: it no longer wins"


def test_bench_pure_sampler(benchmark, sixteen_zones: Path) -> None:  # type: ignore[no-untyped-def]
    assert len(benchmark(read_zone_temperatures_pure, sixteen_zones)) == ZONE_COUNT


@needs_compiled
def test_bench_native_sampler(benchmark, sixteen_zones: Path) -> None:  # type: ignore[no-untyped-def]
    assert COMPILED is not None
    assert len(benchmark(COMPILED.read_zone_temperatures, str(sixteen_zones))) == ZONE_COUNT
