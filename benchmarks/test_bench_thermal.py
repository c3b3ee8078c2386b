"""Thermal snapshot cost: the compiled sampler against the pure reader over 16 zones.

The compiled module stays only while it wins (STYLE rule 5). The ratio of medians is printed from
one run, with both samplers timed in alternating rounds on the same tree; nothing asserts on
timing, so a busy machine cannot make this flaky.

    python -m pytest benchmarks/test_bench_thermal.py -q
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from lidguard.platform.linux.thermal import read_zone_temperatures_pure

ZONE_COUNT = 16
ROUNDS = 15
CALLS_PER_ROUND = 200


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
    start = time.perf_counter()
    for _ in range(CALLS_PER_ROUND):
        sample()
    return (time.perf_counter() - start) / CALLS_PER_ROUND


def test_native_vs_pure_ratio_of_medians(sixteen_zones: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(sixteen_zones)
    expected = [40.0 + index * 1.25 for index in range(ZONE_COUNT)]
    assert read_zone_temperatures_pure(sixteen_zones) == expected
    pure_rounds: list[float] = []
    native_rounds: list[float] = []
    for _ in range(ROUNDS):
        pure_rounds.append(_seconds_per_call(lambda: read_zone_temperatures_pure(sixteen_zones)))
        if COMPILED is not None:
            native_rounds.append(_seconds_per_call(lambda: COMPILED.read_zone_temperatures(root)))
    pure_median = statistics.median(pure_rounds)
    with capsys.disabled():
        print(f"\nthermal snapshot, {ZONE_COUNT} zones, median of {ROUNDS} rounds x {CALLS_PER_ROUND} calls:")
        print(f"  pure   {pure_median * 1e6:8.1f} us")
        if COMPILED is None:
            print("  native (not built)")
            return
        assert COMPILED.read_zone_temperatures(root) == expected
        native_median = statistics.median(native_rounds)
        print(f"  native {native_median * 1e6:8.1f} us")
        print(f"  ratio pure/native = {pure_median / native_median:.2f}x")


def test_bench_pure_sampler(benchmark, sixteen_zones: Path) -> None:  # type: ignore[no-untyped-def]
    assert len(benchmark(read_zone_temperatures_pure, sixteen_zones)) == ZONE_COUNT


@needs_compiled
def test_bench_native_sampler(benchmark, sixteen_zones: Path) -> None:  # type: ignore[no-untyped-def]
    assert COMPILED is not None
    assert len(benchmark(COMPILED.read_zone_temperatures, str(sixteen_zones))) == ZONE_COUNT
