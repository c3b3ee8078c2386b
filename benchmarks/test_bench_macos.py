"""macOS temperature sample latency: the IOHID snapshot (cffi binding) against `powermetrics`.

Both paths are real only on a Mac: the IOHID path needs the frameworks (binding active) and the
powermetrics path needs the sudoers rule (`lidguard macos-permission install`). Elsewhere, or when a
path is not usable, its benchmark is skipped with the reason. Never run under LIDGUARD_TEST_MODE
stand-ins: these numbers are about the real tools.

    python -m pytest benchmarks/test_bench_macos.py -q -s
"""

from __future__ import annotations

import sys

import pytest

from lidguard.platform.macos import _binding
from lidguard.platform.macos.thermal import MacThermalReader

pytestmark = pytest.mark.skipif(sys.platform != "darwin", reason="macOS sample latency is measured on macOS only")


def test_iohid_snapshot_latency(benchmark):
    active, reason = _binding.binding_status()
    if not active:
        pytest.skip(f"IOHID binding inactive: {reason}")
    reader = MacThermalReader()
    if not reader.read_hid_temperatures():
        pytest.skip("no IOHID processor temperature sensor on this Mac (Intel?)")
    values = benchmark(reader.read_hid_temperatures)
    assert values


def test_powermetrics_sample_latency(benchmark, monkeypatch):
    monkeypatch.delenv("LIDGUARD_TEST_MODE", raising=False)  # the real tool, read-only sample
    reader = MacThermalReader()
    if not reader.read_powermetrics_temperatures():
        pytest.skip("powermetrics gave no SMC temperature (no sudoers rule, or an Apple Silicon build)")
    values = benchmark.pedantic(reader.read_powermetrics_temperatures, rounds=3, iterations=1)
    assert values
