"""Inhibitor acquire + release latency: the cffi sd-bus binding vs the systemd-inhibit helper fallback.

Both run against dbusmock's logind on a private bus (the mock dominates the binding's time). The
binding keeps its place only while this shows it wins (STYLE.md rule 5). Run with
``python -m pytest benchmarks/test_bench_logind.py -q``; the medians and their ratio are printed.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lidguard.platform.linux import _binding
from lidguard.platform.linux.power import acquire_inhibitor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "linux"))
from dbus_harness import LogindMock, PrivateSystemBus, missing_tools_reason, skip_unless_available

pytestmark = pytest.mark.dbus

BINDING_ROUNDS = 200
HELPER_ROUNDS = 5
WHAT = "sleep:idle"
WHY = "lidguard benchmark"


@pytest.fixture(scope="module")
def private_logind() -> Iterator[LogindMock]:
    skip_unless_available(missing_tools_reason())
    bus = PrivateSystemBus()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address)
        mock = LogindMock(bus)
        try:
            yield mock
        finally:
            mock.stop()
            bus.stop()


@pytest.fixture
def use_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIDGUARD_LOGIND_BINDING", raising=False)
    active, reason = _binding.binding_status()
    if not active:
        pytest.skip(f"logind binding inactive: {reason}")


@pytest.fixture
def use_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    if _binding.binding_status()[0] or not _which("systemd-inhibit"):
        pytest.skip("systemd-inhibit fallback not usable here")


def _which(name: str) -> bool:
    return any(
        os.access(Path(folder) / name, os.X_OK) for folder in os.environ.get("PATH", "").split(os.pathsep)
    )


def acquire_and_release() -> None:
    acquire_inhibitor(WHAT, WHY).release()


def _median_ms(function: Callable[[], None], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def test_binding_acquire_release(benchmark, private_logind: LogindMock, use_binding: None) -> None:
    benchmark.pedantic(acquire_and_release, rounds=BINDING_ROUNDS, warmup_rounds=5)
    assert private_logind.wait_for_inhibitors(lambda found: not found) == []


def test_helper_acquire_release(benchmark, private_logind: LogindMock, use_helper: None) -> None:
    benchmark.pedantic(acquire_and_release, rounds=HELPER_ROUNDS)
    assert private_logind.wait_for_inhibitors(lambda found: not found) == []


def test_binding_beats_the_helper(
    private_logind: LogindMock, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LIDGUARD_LOGIND_BINDING", raising=False)
    active, reason = _binding.binding_status()
    if not active:
        pytest.skip(f"logind binding inactive: {reason}")
    acquire_and_release()  # warm-up: library load, first connection
    binding_ms = _median_ms(acquire_and_release, BINDING_ROUNDS)
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    helper_ms = _median_ms(acquire_and_release, HELPER_ROUNDS)
    with capsys.disabled():
        print(
            f"\ninhibitor acquire+release (median): cffi binding {binding_ms:.3f} ms over {BINDING_ROUNDS}, "
            f"systemd-inhibit helper {helper_ms:.1f} ms over {HELPER_ROUNDS}, "
            f"ratio helper/binding {helper_ms / binding_ms:.0f}x"
        )
    assert binding_ms < helper_ms
    assert private_logind.wait_for_inhibitors(lambda found: not found) == []
