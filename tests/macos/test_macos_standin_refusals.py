"""The stand-ins refuse like a Mac without lidguard's sudoers rule (issue 34.4): `sudo -n` answers
sudo's own "a password is required", a `sudo` without -n and no terminal cannot ask, `pmset` writes
need root (pmset(1)'s wording) and leave the setting alone; reads need nothing. After
`lidguard macos-permission install` (the stand-in visudo accepts it) sudo honours exactly the
command lines the rule lists, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

import macos_standin as standin

from lidguard.platform.macos.permission import render_sudoers


def _run(standins, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **standins.env}
    env.pop("LIDGUARD_STANDIN_SUDO", None)
    return subprocess.run([str(standins.bin / argv[0]), *argv[1:]], env=env, capture_output=True, text=True,
                          timeout=60)


def test_without_the_rule_sudo_and_pmset_refuse_in_their_own_words(standins):
    standins.set_machine(sudo="password")
    pmset = str(standins.bin / "pmset")
    refused = _run(standins, "sudo", "-n", pmset, "-a", "disablesleep", "1")
    assert (refused.returncode, refused.stderr.strip()) == (1, standin.SUDO_PASSWORD_REQUIRED)
    standins.set_machine(sudo_terminal="none")  # a background process: no terminal to ask the password on
    asking = _run(standins, "sudo", pmset, "-a", "disablesleep", "1")
    assert asking.returncode == 1 and asking.stderr.startswith("sudo: a terminal is required to read the password")
    direct = _run(standins, "pmset", "-a", "disablesleep", "1")
    assert (direct.returncode, direct.stderr.strip()) == (1, standin.PMSET_NEEDS_ROOT)
    assert _run(standins, "pmset", "-g").returncode == 0  # reading needs no root
    assert standins.machine()["sleep_disabled"] == 0
    # Nothing ran as root: no pmset call was reached through sudo.
    assert not [call for call in standins.calls("pmset") if call["sudo"]]


def test_the_installed_rule_allows_exactly_its_commands(standins, monkeypatch):
    standins.set_machine(sudo="password")
    standins.sudoers.parent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("LIDGUARD_TEST_MODE", os.environ.get("LIDGUARD_TEST_MODE", "1"))
    standins.sudoers.write_text(render_sudoers("someone"))
    pmset = str(standins.bin / "pmset")
    allowed = _run(standins, "sudo", "-n", pmset, "-a", "disablesleep", "1")
    assert allowed.returncode == 0, allowed.stderr
    assert standins.machine()["sleep_disabled"] == 1
    for argv in (["-a", "disablesleep", "2"], ["-a", "sleep", "0"], ["-c", "disablesleep", "0"]):
        other = _run(standins, "sudo", "-n", pmset, *argv)
        assert (other.returncode, other.stderr.strip()) == (1, standin.SUDO_PASSWORD_REQUIRED), argv
    assert _run(standins, "sudo", "-n", sys.executable, "-c", "pass").returncode == 1
    assert standins.machine()["sleep_disabled"] == 1
