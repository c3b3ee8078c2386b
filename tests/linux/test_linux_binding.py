"""The cffi sd-bus binding: build script, status switches, typed errors, fds, properties."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
from pathlib import Path

import pytest
from dbus_harness import LogindMock

from lidguard.platform.linux import _binding
from lidguard.platform.linux._binding import (
    LogindConnection,
    LogindError,
    LogindUnavailable,
    RealSystemBusRefused,
    binding_status,
)

NATIVE_DIR = Path(__file__).resolve().parents[2] / "native"


def _load_build_script():
    spec = importlib.util.spec_from_file_location("logind_build_under_test", NATIVE_DIR / "logind_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_declares_an_out_of_line_abi_module() -> None:
    build = _load_build_script()
    assert build.MODULE_NAME == "lidguard._native._logind"
    cdef = build.read_cdef()
    # Every function is commented with the header it comes from.
    declarations = list(re.finditer(r"^[a-z][a-z_0-9 ]*\*?\s*\*?(sd_bus_\w+)\(", cdef, flags=re.MULTILINE))
    functions = [match.group(1) for match in declarations]
    assert "sd_bus_call" in functions and "sd_bus_open_system" in functions
    for match in declarations:
        comment = cdef[: match.start()].rsplit("/*", 1)[1]
        assert "systemd/sd-bus.h" in comment, match.group(1)
    abi = re.search(r"LIDGUARD_LOGIND_ABI_VERSION = (\d+)", cdef)
    assert abi is not None and int(abi.group(1)) == _binding.EXPECTED_ABI_VERSION


def test_status_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIDGUARD_NO_EXTENSIONS", raising=False)
    monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
    assert binding_status() == (False, "disabled by LIDGUARD_LOGIND_BINDING=off")
    monkeypatch.delenv("LIDGUARD_LOGIND_BINDING")
    monkeypatch.setenv("LIDGUARD_NO_EXTENSIONS", "1")
    assert binding_status() == (False, "disabled by LIDGUARD_NO_EXTENSIONS=1")


def test_active_status_names_the_library(binding_active: None) -> None:
    active, reason = binding_status()
    assert active
    assert reason in ("libsystemd.so.0 via cffi", "libelogind.so.0 via cffi")


def test_missing_library_is_inactive_with_the_reason(
    binding_active: None, binding_library_missing: None, unreachable_system_bus: str
) -> None:
    active, reason = binding_status()
    assert not active
    assert "liblidguard-no-such-sd-bus.so.0" in reason
    with pytest.raises(LogindUnavailable) as raised:
        LogindConnection()
    assert raised.value.name == "lidguard.Error.BindingInactive"


def test_stale_module_is_refused(binding_active: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIDGUARD_REQUIRE_EXTENSIONS", raising=False)
    monkeypatch.setattr(_binding, "EXPECTED_ABI_VERSION", 999)
    _binding._load_binding.cache_clear()
    try:
        active, reason = binding_status()
        assert not active and "stale" in reason and "999" in reason
        # Release-wheel runs require the compiled module: a stale one is an error there, not a fallback.
        monkeypatch.setenv("LIDGUARD_REQUIRE_EXTENSIONS", "1")
        with pytest.raises(ImportError, match="stale"):
            binding_status()
    finally:
        _binding._load_binding.cache_clear()


def test_refuses_the_real_system_bus_under_pytest(
    binding_active: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SYSTEM_BUS_ADDRESS", raising=False)
    with pytest.raises(RealSystemBusRefused):
        LogindConnection()


@pytest.mark.dbus
def test_inhibit_returns_a_close_on_exec_fd_listed_until_closed(
    binding_active: None, logind_mock: LogindMock
) -> None:
    with LogindConnection() as connection:
        fd = connection.inhibit("sleep", "lidguard", "binding test", "block")
        try:
            assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
            assert connection.list_inhibitors() == [
                ("sleep", "lidguard", "binding test", "block", 1000, 123456)
            ]
        finally:
            os.close(fd)
        deadline_entries = logind_mock.wait_for_inhibitors(lambda found: not found)
        assert deadline_entries == []
        assert connection.list_inhibitors() == []


@pytest.mark.dbus
def test_the_inhibitor_outlives_the_connection(binding_active: None, logind_mock: LogindMock) -> None:
    connection = LogindConnection()
    fd = connection.inhibit("idle", "lidguard", "outlives", "block")
    connection.close()
    connection.close()  # idempotent
    assert len(logind_mock.list_inhibitors()) == 1
    os.close(fd)
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []
    with pytest.raises(LogindError, match="closed"):
        connection.can_suspend()


@pytest.mark.dbus
def test_can_queries_and_actions(binding_active: None, start_logind_mock) -> None:
    mock = start_logind_mock(CanSuspend="challenge", CanHibernate="na")
    with LogindConnection() as connection:
        assert connection.can_suspend() == "challenge"
        assert connection.can_hibernate() == "na"
        connection.suspend(interactive=True)
        connection.hibernate()
    assert [args for _, args in mock.get_method_calls("Suspend")] == [[True]]
    assert [args for _, args in mock.get_method_calls("Hibernate")] == [[False]]


@pytest.mark.dbus
def test_bool_properties(binding_active: None, logind_mock: LogindMock) -> None:
    logind_mock.add_property("LidClosed", True)
    logind_mock.add_property("Docked", False)
    with LogindConnection() as connection:
        assert connection.read_bool_property("LidClosed") is True
        assert connection.read_bool_property("Docked") is False
        with pytest.raises(LogindError) as raised:
            connection.read_bool_property("NoSuchProperty")
        assert raised.value.name.endswith("UnknownProperty")


@pytest.mark.dbus
def test_dbus_errors_become_typed_exceptions_with_name_and_message(
    binding_active: None, logind_mock: LogindMock
) -> None:
    logind_mock.add_method(
        "CanHibernate",
        "",
        "s",
        'raise dbus.exceptions.DBusException("custom failure text", name="org.example.Lidguard.Error.Custom")',
    )
    with LogindConnection() as connection, pytest.raises(LogindError) as raised:
        connection.can_hibernate()
    assert type(raised.value) is LogindError
    assert raised.value.name == "org.example.Lidguard.Error.Custom"
    assert raised.value.message == "custom failure text"
    assert str(raised.value) == "org.example.Lidguard.Error.Custom: custom failure text"


@pytest.mark.dbus
def test_missing_logind_is_logind_unavailable(binding_active: None, system_bus: object) -> None:
    with LogindConnection() as connection, pytest.raises(LogindUnavailable) as raised:
        connection.list_inhibitors()
    assert raised.value.name == "org.freedesktop.DBus.Error.ServiceUnknown"
    assert isinstance(raised.value, LogindError)


def test_unreachable_bus_is_logind_unavailable(binding_active: None, unreachable_system_bus: str) -> None:
    # sd-bus connects lazily: the failure may surface at open or at the first call.
    with pytest.raises(LogindUnavailable) as raised, LogindConnection() as connection:
        connection.can_suspend()
    assert raised.value.name.startswith("System.Error.") or "DBus.Error" in raised.value.name
