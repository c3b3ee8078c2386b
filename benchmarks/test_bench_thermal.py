"""Thermal snapshot cost of the pure reader over 10 zones (a laptop-like tree: symlinked like real sysfs).

Issue 22 measured the compiled sampler this project had (native/thermal_linux.pyx) against this reader and
removed it: even rewritten to the floor of its system calls (getdents64, then openat/read/close per zone:
what a plain C loop over the same files costs, 12-15 us for 10 zones), it was 2.4-2.6x the pure reader
(15 vs 37 us), below the 3x that would pay for a compiled module; the runtime samples every 10 s.

    python -m pytest benchmarks/test_bench_thermal.py -q -s
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lidguard.platform.linux.thermal import read_zone_temperatures_pure

ZONE_COUNT = 10


@pytest.fixture
def zones(tmp_path: Path) -> Path:
    """ZONE_COUNT zones (symlinked like real sysfs) plus cooling devices."""
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


def test_bench_pure_sampler(benchmark, zones: Path) -> None:  # type: ignore[no-untyped-def]
    expected = [40.0 + index * 1.25 for index in range(ZONE_COUNT)]
    assert benchmark(read_zone_temperatures_pure, zones) == expected
