"""The macOS lid policy runs pmset directly as root and through ``sudo -n`` otherwise, decided by the
euid (``running_as_root``). The suite runs as root, so these tests patch the euid in-process (with
``LIDGUARD_MACOS_TEST_ROOT`` unset) and let the stand-in sudo refuse as real ``sudo -n`` does
without a rule: exit 1, "sudo: a password is required"."""

from __future__ import annotations

import os

import pytest

from lidguard.platform.api import LidPolicyRefused
from lidguard.platform.macos import commands
from lidguard.platform.macos.power import MacLidPolicy

DISABLE = ["pmset", "-a", "disablesleep", "1"]


@pytest.fixture
def euid(standins, monkeypatch):
    monkeypatch.delenv(commands.TEST_ROOT_VARIABLE, raising=False)

    def set_euid(value: int) -> None:
        monkeypatch.setattr(os, "geteuid", lambda: value)

    return set_euid


def test_a_user_runs_pmset_through_sudo_n(standins, euid):
    euid(501)
    assert not commands.running_as_root()
    lid = MacLidPolicy()
    lid.set_do_nothing(lid.read_lid_actions())
    assert standins.commands("sudo") == [["sudo", "-n", *DISABLE]]
    assert standins.machine()["sleep_disabled"] == 1


def test_root_runs_pmset_directly_never_sudo(standins, euid):
    euid(0)
    standins.set_machine(root=True)  # the stand-in pmset writes only as root or under sudo, as the real one
    assert commands.running_as_root()
    lid = MacLidPolicy()
    lid.set_do_nothing(lid.read_lid_actions())
    assert standins.commands("sudo") == []
    assert DISABLE in standins.commands("pmset")
    assert standins.machine()["sleep_disabled"] == 1


def test_a_user_without_the_sudoers_rule_gets_a_refusal_with_the_install_hint(standins, euid):
    euid(501)
    standins.set_machine(sudo="password")
    lid = MacLidPolicy()
    with pytest.raises(LidPolicyRefused) as raised:
        lid.set_do_nothing(lid.read_lid_actions())
    assert raised.value.hint == "the lid-close action needs `lidguard macos-permission install`"
    assert "sudo: a password is required" in raised.value.detail
    assert "exit code 1" in raised.value.detail
    assert standins.commands("sudo") == [["sudo", "-n", *DISABLE]]  # once, never without -n
    assert standins.machine()["sleep_disabled"] == 0


def test_a_refused_restore_is_an_error_naming_the_hint_not_a_refusal(standins, euid):
    euid(501)
    standins.set_machine(sudo="password", sleep_disabled=1)
    lid = MacLidPolicy()
    original = lid.read_lid_actions()  # SleepDisabled 1 now: the backup says it was 0 (action 1, Sleep)
    with pytest.raises(OSError) as raised:
        lid.restore_lid_actions(type(original)(original.power_scheme_identifier, 1, 1))
    assert not isinstance(raised.value, LidPolicyRefused)
    assert "sudo: a password is required" in str(raised.value) and commands.PERMISSION_HINT in str(raised.value)
