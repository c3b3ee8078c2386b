"""Fixtures for the Linux backend: a private system bus, a fresh logind mock per test, backend choice.

Every D-Bus call in these tests goes to the private bus: ``system_bus`` sets ``DBUS_SYSTEM_BUS_ADDRESS``
(sd-bus, systemd-inhibit and busctl all honour it). Tests skip only when dbus-daemon or python-dbusmock
is missing - never by OS name.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lidguard.platform.linux import _binding

# --import-mode=importlib puts no test folder on sys.path; the harness is shared with benchmarks/.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from dbus_harness import LogindMock, PrivateSystemBus, missing_tools_reason, private_system_bus, skip_unless_available


@functools.cache
def _cached_missing_tools_reason() -> str | None:
    return missing_tools_reason()


@pytest.fixture
def system_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[PrivateSystemBus]:
    with private_system_bus(_cached_missing_tools_reason()) as bus:
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address)
        yield bus


@pytest.fixture
def start_logind_mock(system_bus: PrivateSystemBus) -> Iterator[Callable[..., LogindMock]]:
    """Starts a logind mock with ``-p`` parameters, e.g. ``start_logind_mock(CanSuspend="no")``."""
    started: list[LogindMock] = []

    def start(**parameters: Any) -> LogindMock:
        mock = LogindMock(system_bus, parameters or None)
        started.append(mock)
        return mock

    try:
        yield start
    finally:
        for mock in started:
            mock.stop()


@pytest.fixture
def logind_mock(start_logind_mock: Callable[..., LogindMock]) -> LogindMock:
    return start_logind_mock()


def _use_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("LIDGUARD_NO_EXTENSIONS", "") not in ("", "0"):
        pytest.skip("LIDGUARD_NO_EXTENSIONS=1: the cffi binding is disabled on this run")
    monkeypatch.delenv("LIDGUARD_LOGIND_BINDING", raising=False)
    active, reason = _binding.binding_status()
    assert active, (
        f"the logind binding should be active (run `python setup.py build_ext --inplace`): {reason}"
    )


def _use_missing_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_binding, "LIBRARY_NAMES", ("liblidguard-no-such-sd-bus.so.0",))
    _binding._load_binding.cache_clear()


@pytest.fixture(params=["binding", "forced-off", "library-missing"])
def inhibitor_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Runs a test once over the cffi binding and twice over the systemd-inhibit fallback."""
    backend = request.param
    if backend == "binding":
        _use_binding(monkeypatch)
    else:
        if shutil.which("systemd-inhibit") is None:
            skip_unless_available("systemd-inhibit is not installed (the fallback under test)")
        if backend == "forced-off":
            monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
        else:
            _use_missing_library(monkeypatch)
        assert not _binding.binding_status()[0]
    try:
        yield backend
    finally:
        _binding._load_binding.cache_clear()


@pytest.fixture
def binding_active(monkeypatch: pytest.MonkeyPatch) -> None:
    _use_binding(monkeypatch)


@pytest.fixture
def binding_library_missing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _use_missing_library(monkeypatch)
    try:
        yield
    finally:
        _binding._load_binding.cache_clear()


@pytest.fixture
def unreachable_system_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A system-bus address nobody listens on: logind is "unavailable", and never the real bus."""
    address = f"unix:path={tmp_path}/no-system-bus-socket"
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
    return address
