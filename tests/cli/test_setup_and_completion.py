"""`lidguard setup` (find the agent CLIs, install their hooks, doctor's verdict) and
`lidguard completion bash|zsh|fish`, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def fake_agents(home: Path, *names: str) -> str:
    """A PATH with stand-in agent CLIs (only their presence on PATH matters to setup)."""
    folder = home / "agent-bin"
    folder.mkdir()
    for name in names:
        (folder / name).write_text("#!/bin/sh\nexit 0\n")
        (folder / name).chmod(0o755)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


def setup(lidguard, *args: str, path: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lidguard", "setup", *args], env={**lidguard.env, "PATH": path},
                          input=input_text, text=True, capture_output=True, timeout=120)


def test_setup_yes_installs_the_hooks_of_the_agents_found_and_ends_with_the_verdict(lidguard):
    path = fake_agents(lidguard.home, "claude", "codex")
    result = setup(lidguard, "--yes", path=path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Agent CLIs found: claude (" ) and "codex (" in result.stdout.splitlines()[0]
    assert "copilot" not in result.stdout.splitlines()[0]
    assert "Claude: Installed the LidGuard Claude Code hooks." in result.stdout
    assert "Codex: Installed the LidGuard Codex hooks and their trust entries." in result.stdout
    assert result.stdout.splitlines()[-1] == "Verdict: ready"
    settings = json.loads((lidguard.home / ".claude" / "settings.json").read_text())
    assert "Stop" in settings["hooks"]
    again = setup(lidguard, "--yes", path=path)
    assert again.returncode == 0 and "hooks are already installed" in again.stdout


def test_setup_asks_and_provider_limits_it(lidguard):
    path = fake_agents(lidguard.home, "claude", "codex")
    result = setup(lidguard, "--provider", "codex", path=path, input_text="y\n")
    assert result.returncode == 0, result.stderr
    assert "Install the LidGuard hooks for Codex" in result.stdout and "Claude" not in result.stdout.split("\n\n")[0]
    assert not (lidguard.home / ".claude" / "settings.json").exists()
    declined = setup(lidguard, path=path, input_text="n\nn\n")
    assert "skipped Claude" in declined.stdout and not (lidguard.home / ".claude" / "settings.json").exists()
    ended = setup(lidguard, path=path, input_text="")
    assert ended.returncode == 1
    assert ended.stderr == "lidguard: No answer (input ended); run `lidguard setup --yes` to accept every step.\n"


def test_setup_exits_1_when_nothing_can_be_protected(lidguard):
    lidguard.env["LIDGUARD_PLATFORM"] = "windows"  # no Win32 API on this OS
    result = setup(lidguard, "--yes", path=fake_agents(lidguard.home))
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("No agent CLI found")
    assert result.stdout.splitlines()[-1].startswith("Verdict: cannot protect anything on this machine")


def _bash_complete(lidguard, line: str) -> list[str]:
    script = lidguard.run("completion", "bash", check=True).stdout
    words = line.split(" ")
    probe = (f"{script}\nCOMP_WORDS=({' '.join(repr(word) for word in words)}); COMP_CWORD={len(words) - 1}\n"
             "_lidguard; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", probe], text=True, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_bash_completion_completes_commands_and_their_options(lidguard):
    assert _bash_complete(lidguard, "lidguard hook-") == ["hook-status", "hook-install", "hook-remove",
                                                           "hook-uninstall", "hook-events"]
    assert _bash_complete(lidguard, "lidguard setup --") == ["--help", "--provider", "--yes"]
    assert "--parent-pid" in _bash_complete(lidguard, "lidguard start --pa")
    assert _bash_complete(lidguard, "lidguard completion ") == ["--help", "bash", "zsh", "fish"]


def test_zsh_and_fish_scripts_name_every_command(lidguard):
    zsh = lidguard.run("completion", "zsh", check=True).stdout
    fish = lidguard.run("completion", "fish", check=True).stdout
    assert zsh.startswith("#compdef lidguard\n") and "'setup:First run" in zsh and "hooks\\: a prompt" in zsh
    assert "complete -c lidguard -n __fish_use_subcommand -a doctor -d " in fish
    assert "complete -c lidguard -n '__fish_seen_subcommand_from start' -l parent-pid" in fish
    bad = lidguard.run("completion", "tcsh")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "invalid choice" in bad.stderr
