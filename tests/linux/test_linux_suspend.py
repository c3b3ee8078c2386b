"""LinuxSuspender against dbusmock's logind (binding) and a fake ``systemctl`` (fallback).

Nothing here can suspend the machine: logind calls go to the private bus, and the systemctl
fallback runs a fake script put first on PATH.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from dbus_harness import LogindMock

from lidguard.platform.api import Suspender, SuspendMode, SuspendResult, Unsupported
from lidguard.platform.linux._binding import RealSystemBusRefused
from lidguard.platform.linux.suspend import LinuxSuspender

ACCESS_DENIED = (
    'raise dbus.exceptions.DBusException("Interactive authentication required by test.", '
    'name="org.freedesktop.DBus.Error.AccessDenied")'
)


@pytest.mark.dbus
def test_suspend_calls_logind_suspend_once_non_interactively(
    binding_active: None, logind_mock: LogindMock
) -> None:
    suspender = LinuxSuspender()
    assert isinstance(suspender, Suspender)
    result = suspender.suspend(SuspendMode.SLEEP)
    assert result.succeeded, result.message
    assert [args for _, args in logind_mock.get_method_calls("Suspend")] == [[False]]
    assert logind_mock.get_method_calls("Hibernate") == []
    assert len(logind_mock.get_method_calls("CanSuspend")) == 1


@pytest.mark.dbus
def test_hibernate_calls_logind_hibernate(binding_active: None, logind_mock: LogindMock) -> None:
    result = LinuxSuspender().suspend(SuspendMode.HIBERNATE)
    assert result.succeeded, result.message
    assert [args for _, args in logind_mock.get_method_calls("Hibernate")] == [[False]]
    assert logind_mock.get_method_calls("Suspend") == []


@pytest.mark.dbus
@pytest.mark.parametrize(
    ("mode", "parameter", "answer", "action"),
    [
        (SuspendMode.SLEEP, "CanSuspend", "no", "Suspend"),
        (SuspendMode.SLEEP, "CanSuspend", "na", "Suspend"),
        (SuspendMode.HIBERNATE, "CanHibernate", "no", "Hibernate"),
    ],
)
def test_cannot_answer_fails_without_calling_the_action(
    binding_active: None,
    start_logind_mock: Callable[..., LogindMock],
    mode: SuspendMode,
    parameter: str,
    answer: str,
    action: str,
) -> None:
    mock = start_logind_mock(**{parameter: answer})
    result = LinuxSuspender().suspend(mode)
    assert result == SuspendResult(False, result.message)
    assert parameter in result.message and repr(answer) in result.message
    assert mock.get_method_calls(action) == []


@pytest.mark.dbus
def test_challenge_still_tries_the_request(binding_active: None, logind_mock: LogindMock) -> None:
    logind_mock.add_method("CanSuspend", "", "s", 'ret = "challenge"')
    assert LinuxSuspender().suspend(SuspendMode.SLEEP).succeeded
    assert len(logind_mock.get_method_calls("Suspend")) == 1


@pytest.mark.dbus
def test_access_denied_is_a_failed_result_with_the_error_name_and_a_hint(
    binding_active: None, logind_mock: LogindMock
) -> None:
    logind_mock.add_method("Suspend", "b", "", ACCESS_DENIED)
    result = LinuxSuspender().suspend(SuspendMode.SLEEP)
    assert not result.succeeded
    assert "org.freedesktop.DBus.Error.AccessDenied" in result.message
    assert "Interactive authentication required by test." in result.message
    assert "lidguard linux-permission install" in result.message


@pytest.mark.dbus
def test_other_logind_errors_carry_no_permission_hint(binding_active: None, logind_mock: LogindMock) -> None:
    logind_mock.add_method(
        "Hibernate",
        "b",
        "",
        'raise dbus.exceptions.DBusException("busy", name="org.freedesktop.login1.OperationInProgress")',
    )
    result = LinuxSuspender().suspend(SuspendMode.HIBERNATE)
    assert not result.succeeded
    assert "org.freedesktop.login1.OperationInProgress: busy" in result.message
    assert "linux-permission" not in result.message


@pytest.mark.dbus
def test_no_logind_on_the_bus_is_unsupported(binding_active: None, system_bus: object) -> None:
    with pytest.raises(Unsupported) as raised:
        LinuxSuspender().suspend(SuspendMode.SLEEP)
    assert raised.value.capability == "suspend"


def test_binding_refuses_the_real_system_bus_under_pytest(
    binding_active: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SYSTEM_BUS_ADDRESS", raising=False)
    with pytest.raises(RealSystemBusRefused):
        LinuxSuspender().suspend(SuspendMode.SLEEP)


# -- systemctl fallback ------------------------------------------------------------------------------


@pytest.fixture
def fake_systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[int, str], Path]:
    """Installs ``systemctl`` that records its arguments, prints ``stderr`` and exits with ``code``."""
    log = tmp_path / "systemctl-calls.txt"

    def install(code: int, stderr: str = "") -> Path:
        script = tmp_path / "bin" / "systemctl"
        script.parent.mkdir(exist_ok=True)
        script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nprintf "%s" "{stderr}" >&2\nexit {code}\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
        monkeypatch.setenv("LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS", "1")
        monkeypatch.setenv("LIDGUARD_LOGIND_BINDING", "off")
        return log

    return install


@pytest.mark.parametrize(
    ("mode", "verb"), [(SuspendMode.SLEEP, "suspend"), (SuspendMode.HIBERNATE, "hibernate")]
)
def test_fallback_runs_systemctl(fake_systemctl: Callable[..., Path], mode: SuspendMode, verb: str) -> None:
    log = fake_systemctl(0)
    result = LinuxSuspender().suspend(mode)
    assert result.succeeded, result.message
    assert log.read_text().splitlines() == [verb]
    assert "systemctl" in LinuxSuspender().describe()


def test_fallback_failure_reports_exit_code_and_stderr(fake_systemctl: Callable[..., Path]) -> None:
    fake_systemctl(1, "Call to Suspend failed: Access denied")
    result = LinuxSuspender().suspend(SuspendMode.SLEEP)
    assert not result.succeeded
    assert "exit code 1" in result.message
    assert "Call to Suspend failed: Access denied" in result.message


def test_fallback_refuses_systemctl_under_pytest_without_the_opt_in(
    fake_systemctl: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_systemctl(0)
    monkeypatch.delenv("LIDGUARD_ALLOW_SYSTEMCTL_IN_TESTS")
    with pytest.raises(RealSystemBusRefused):
        LinuxSuspender().suspend(SuspendMode.SLEEP)
    assert not log.exists()


def test_fallback_without_systemctl_is_unsupported(
    fake_systemctl: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_systemctl(0)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(Unsupported) as raised:
        LinuxSuspender().suspend(SuspendMode.HIBERNATE)
    assert "systemctl" in raised.value.reason
