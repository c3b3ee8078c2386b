"""``lidguard linux-permission``: the managed polkit rule in a temp path, and check/status on the mock bus."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from dbus_harness import LogindMock

from lidguard.platform.linux import permission
from lidguard.platform.linux.permission import (
    LIDGUARD_POLKIT_ACTIONS,
    MANAGED_MARKERS,
    install_rule,
    remove_rule,
    render_rule,
    run_linux_permission,
)

UNMANAGED_RULE = "polkit.addRule(function(action, subject) { return polkit.Result.NOT_HANDLED; });\n"


@pytest.fixture(autouse=True)
def sudo_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test here may run the machine's real ``sudo`` (it could prompt or change /etc/polkit-1).

    A ``sudo`` first on PATH records its 1st, 2nd and 4th arguments (``sh -c <script> <name>``) and
    refuses (exit 1); tests that exercise the sudo path replace it with ``fake_sudo``, which runs the
    script unprivileged.
    """
    bin_dir = tmp_path / "guard-bin"
    bin_dir.mkdir()
    log = tmp_path / "sudo-guard-calls.txt"
    guard = bin_dir / "sudo"
    guard.write_text(f'#!/bin/sh\necho "$1 $2 $4" >> "{log}"\necho "sudo is refused under test" >&2\nexit 1\n')
    guard.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def sudo_guard_calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root code path (writes the rule itself, no sudo) whoever runs the tests: the rule lives in tmp."""
    monkeypatch.setattr(permission, "_running_as_root", lambda: True)


@pytest.fixture
def rule_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "rules.d" / "49-lidguard.rules"
    monkeypatch.setenv("LIDGUARD_POLKIT_RULE_PATH", str(path))
    return path


def run(subcommand: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_linux_permission(subcommand, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_rule_content_is_exact() -> None:
    text = render_rule('ali"ce\\x')
    lines = text.splitlines()
    assert lines[:2] == [f"// {MANAGED_MARKERS[0]}", f"// {MANAGED_MARKERS[1]}"]
    assert MANAGED_MARKERS == (
        "Managed by LidGuard Linux permission command.",
        "LidGuard Linux polkit rule v1.",
    )
    assert len(LIDGUARD_POLKIT_ACTIONS) == 7
    listed = [
        line.strip().strip('",') for line in lines if line.strip().startswith('"org.freedesktop.login1.')
    ]
    assert listed == [
        "org.freedesktop.login1.suspend",
        "org.freedesktop.login1.suspend-multiple-sessions",
        "org.freedesktop.login1.hibernate",
        "org.freedesktop.login1.hibernate-multiple-sessions",
        "org.freedesktop.login1.inhibit-block-sleep",
        "org.freedesktop.login1.inhibit-block-idle",
        "org.freedesktop.login1.inhibit-handle-lid-switch",
    ]
    assert 'if (subject.user == "ali\\"ce\\\\x" && lidGuardActions.indexOf(action.id) >= 0) {' in text
    assert "return polkit.Result.YES;" in text
    assert text.startswith("// Managed by") and text.endswith("});\n")


def test_install_status_remove_as_root(
    rule_path: Path, unreachable_system_bus: str, monkeypatch: pytest.MonkeyPatch, as_root: None,
    sudo_calls: Path,
) -> None:
    monkeypatch.setenv("SUDO_USER", "alice")
    assert run("install") == (0, f"Installed LidGuard polkit rule for user alice: {rule_path}\n", "")
    assert rule_path.read_text() == render_rule("alice")
    assert stat.S_IMODE(rule_path.stat().st_mode) == 0o644
    assert run("install")[0] == 0  # a managed file is replaced

    status_code, status, _ = run("status")
    assert status_code == 0
    assert "User: alice\n" in status
    assert f"Polkit rule path: {rule_path}\n" in status
    assert "Polkit rule: installed for current user\n" in status

    monkeypatch.setenv("SUDO_USER", "bob")
    assert "Polkit rule: installed for another user\n" in run("status")[1]

    assert run("remove") == (0, f"Removed LidGuard polkit rule: {rule_path}\n", "")
    assert not rule_path.exists()
    assert "Polkit rule: not installed\n" in run("status")[1]
    assert run("remove") == (0, f"LidGuard polkit rule is not installed: {rule_path}\n", "")
    assert sudo_guard_calls(sudo_calls) == [], "root writes the rule itself, never through sudo"


def test_non_root_install_goes_through_sudo_and_reports_its_refusal(
    rule_path: Path, unreachable_system_bus: str, monkeypatch: pytest.MonkeyPatch, sudo_calls: Path
) -> None:
    monkeypatch.setattr(permission, "_running_as_root", lambda: False)
    code, out, err = run("install")
    assert (code, out) == (1, "")
    assert err.startswith(f"Failed to install LidGuard polkit rule {rule_path} (sudo exit code 1): ")
    assert "sudo is refused under test" in err
    assert sudo_guard_calls(sudo_calls) == ["sh -c lidguard-rule-install"]
    assert not rule_path.exists()


def test_unmanaged_files_are_never_overwritten_or_removed(
    rule_path: Path, unreachable_system_bus: str, as_root: None
) -> None:
    rule_path.parent.mkdir(parents=True)
    # Only one marker is not enough: both must be present.
    rule_path.write_text(f"// {MANAGED_MARKERS[0]}\n{UNMANAGED_RULE}")
    original = rule_path.read_text()
    assert run("install") == (1, "", f"Refusing to overwrite unmanaged polkit rule file: {rule_path}\n")
    assert run("remove") == (1, "", f"Refusing to remove unmanaged polkit rule file: {rule_path}\n")
    assert rule_path.read_text() == original
    assert "Polkit rule: present but not managed by LidGuard\n" in run("status")[1]


def test_uninspectable_rule_is_reported(rule_path: Path, unreachable_system_bus: str) -> None:
    rule_path.mkdir(parents=True)  # a directory where the file should be: unreadable even for root
    code, out, _ = run("status")
    assert code == 0  # status always exits 0
    assert "Polkit rule: unable to inspect (" in out
    assert "logind CanSuspend: unavailable (" in out


def test_a_rule_folder_closed_to_the_user_cannot_be_checked_without_root(
    rule_path: Path, unreachable_system_bus: str, sudo_calls: Path
) -> None:
    """Debian's /etc/polkit-1/rules.d is 0700 polkitd: a normal user cannot tell whether the rule is
    there. status (sudo -n refused) and doctor (never sudo) say so instead of a bare EACCES."""
    if os.geteuid() == 0:
        pytest.skip("root enters every folder; ci/test.sh's user lane runs this as lidguard-test")
    rule_path.parent.mkdir(mode=0o700)
    rule_path.write_text(render_rule("someone"))
    rule_path.parent.chmod(0)
    try:
        code, out, _ = run("status")
        doctor_line = permission.describe_permission()
    finally:
        rule_path.parent.chmod(0o700)
    assert code == 0
    assert "Polkit rule: cannot be checked without root (Permission denied; sudo -n cat: " in out
    assert doctor_line.startswith(f"polkit rule {rule_path}: cannot be checked without root "
                                  f"({rule_path.parent} is closed to ")
    assert sudo_guard_calls(sudo_calls) == [f"-n cat {rule_path}"], "status asks sudo (no prompt), doctor never"


@pytest.fixture
def fake_sudo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``sudo`` that runs its arguments unprivileged and logs them (the non-root install path)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "sudo-calls.txt"
    sudo = bin_dir / "sudo"
    sudo.write_text(f'#!/bin/sh\necho "$1 $2 $4" >> "{log}"\nexec "$@"\n')
    sudo.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")  # before the refusing guard
    return log


def test_install_and_remove_through_the_sudo_script(rule_path: Path, fake_sudo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # A private temp folder: the check below must not see another worker's (or user's) rule file.
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(permission.tempfile, "tempdir", str(private_tmp))
    out, err = io.StringIO(), io.StringIO()
    assert install_rule(rule_path, "carol", use_sudo=True, out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == f"Installed LidGuard polkit rule for user carol: {rule_path}\n"
    assert rule_path.read_text() == render_rule("carol")
    assert stat.S_IMODE(rule_path.stat().st_mode) == 0o644
    assert fake_sudo.read_text().splitlines() == ["sh -c lidguard-rule-install"]
    assert not list(private_tmp.glob("lidguard-polkit-*.rules"))

    out = io.StringIO()
    assert remove_rule(rule_path, use_sudo=True, out=out, err=err) == 0
    assert out.getvalue() == f"Removed LidGuard polkit rule: {rule_path}\n"
    out = io.StringIO()
    assert remove_rule(rule_path, use_sudo=True, out=out, err=err) == 0
    assert out.getvalue() == f"LidGuard polkit rule is not installed: {rule_path}\n"


def test_sudo_script_refuses_unmanaged_files(rule_path: Path, fake_sudo: Path) -> None:
    rule_path.parent.mkdir(parents=True)
    rule_path.write_text(UNMANAGED_RULE)
    out, err = io.StringIO(), io.StringIO()
    assert install_rule(rule_path, "carol", use_sudo=True, out=out, err=err) == 1
    assert remove_rule(rule_path, use_sudo=True, out=out, err=err) == 1
    assert err.getvalue() == (
        f"Refusing to overwrite unmanaged polkit rule file: {rule_path}\n"
        f"Refusing to remove unmanaged polkit rule file: {rule_path}\n"
    )
    assert rule_path.read_text() == UNMANAGED_RULE


def test_unknown_subcommand_is_a_usage_error() -> None:
    assert run("prepare") == (2, "", "Usage: lidguard linux-permission status|check|install|remove\n")


@pytest.mark.dbus
def test_status_reports_tools_and_logind_answers(
    rule_path: Path, inhibitor_backend: str, start_logind_mock: Callable[..., LogindMock]
) -> None:
    start_logind_mock(CanSuspend="yes", CanHibernate="no")
    code, out, _ = run("status")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Linux permission status:"
    assert "logind CanSuspend: yes" in lines
    assert "logind CanHibernate: no" in lines
    assert any(line.startswith("systemd-inhibit: available (") for line in lines)
    assert any(line.startswith("systemctl: ") for line in lines)


@pytest.mark.dbus
def test_check_acquires_and_releases_without_side_effects(
    inhibitor_backend: str, logind_mock: LogindMock
) -> None:
    code, out, _ = run("check")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "Linux permission check:"
    assert "inhibitor acquire/release: ok" in lines
    assert any(line.startswith("systemctl --version: ok (systemd ") for line in lines)
    assert "logind CanSuspend: yes" in lines and "logind CanHibernate: yes" in lines
    assert logind_mock.wait_for_inhibitors(lambda found: not found) == []
    assert logind_mock.get_method_calls("Suspend") == [] and logind_mock.get_method_calls("Hibernate") == []


@pytest.mark.dbus
def test_check_fails_when_logind_is_missing(inhibitor_backend: str, system_bus: object) -> None:
    code, out, _ = run("check")
    assert code == 1
    assert "inhibitor acquire/release: failed - " in out
    assert "logind CanSuspend: failed - " in out and "org.freedesktop.login1" in out
    assert "Polkit" not in out


@pytest.mark.parametrize("ignores", [False, True])
def test_the_rule_grants_suspend_ignore_inhibit_only_while_suspend_ignores_other_blockers(
    rule_path: Path, unreachable_system_bus: str, monkeypatch: pytest.MonkeyPatch, as_root: None,
    sudo_calls: Path, ignores: bool,
) -> None:
    import json

    from lidguard.platform.paths import resolve_paths

    settings_file = resolve_paths().settings_file
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps({"SuspendIgnoresOtherBlockers": ignores}))
    monkeypatch.setenv("SUDO_USER", "alice")
    code, out, err = run("install")
    assert code == 0, err
    text = rule_path.read_text()
    assert text == render_rule("alice", ignore_inhibit=ignores)
    assert ('"org.freedesktop.login1.suspend-ignore-inhibit"' in text) is ignores
    assert ('"org.freedesktop.login1.hibernate-ignore-inhibit"' in text) is ignores
    assert ("suspend-ignore-inhibit" in out) is ignores
    assert '"org.freedesktop.login1.suspend"' in text  # the seven actions either way
