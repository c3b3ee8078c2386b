"""Hooks that work from any shell: hook-install writes the absolute path of the lidguard that ran it,
an agent with a PATH that has no lidguard still runs it, hook-status/doctor say "broken: <why>" when an
installed command no longer runs, and a reinstall from another place updates every entry."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

BARE_PATH = "/usr/bin:/bin"


def hook_words(script: Path, sub: str) -> str:
    """What hook-install writes: led by the native hook client when it runs here (issue 36)."""
    from lidguard.installers.common import hook_client

    client = hook_client()
    lead = f"{shlex.quote(client.path)} " if client.usable else ""
    return f"{lead}{shlex.quote(str(script))} {sub}"


def console_script(folder: Path) -> Path:
    """A ``lidguard`` console script like pip/pipx write one (this Python, the tree under test)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "lidguard"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom lidguard.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script


def run_script(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    path = f"{script.parent}{os.pathsep}{env.get('PATH', BARE_PATH)}"
    return subprocess.run([str(script), *args], env={**env, "PATH": path}, text=True, capture_output=True,
                          timeout=60, stdin=subprocess.DEVNULL)


def claude_commands(home: Path) -> set[str]:
    data = json.loads((home / ".claude" / "settings.json").read_text())
    return {handler["command"] for groups in data["hooks"].values() for group in groups for handler in group["hooks"]}


def test_hook_install_writes_the_absolute_executable_and_an_agent_without_it_on_path_runs_it(lidguard):
    (lidguard.home / ".claude").mkdir()
    venv_bin = lidguard.home / "my venv" / "bin"  # a space: the command must be quoted for sh
    script = console_script(venv_bin)
    installed = run_script(script, lidguard.env, "hook-install", "--provider", "claude")
    assert installed.returncode == 0, installed.stderr
    assert claude_commands(lidguard.home) == {hook_words(script, "claude-hook")}
    # The agent's shell, started from a launcher: no venv on PATH.
    agent_env = {**lidguard.env, "PATH": BARE_PATH}
    payload = json.dumps({"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(lidguard.home)})
    hook = subprocess.run(["/bin/sh", "-c", next(iter(claude_commands(lidguard.home)))], input=payload,
                          env=agent_env, text=True, capture_output=True, timeout=60)
    assert hook.returncode == 0 and "not found" not in hook.stderr, hook.stderr
    status = run_script(script, lidguard.env, "hook-status", "--provider", "claude")
    assert "Command check: ok" in status.stdout, status.stdout


def test_hook_status_and_doctor_say_broken_and_a_reinstall_from_elsewhere_updates(lidguard):
    (lidguard.home / ".claude").mkdir()
    old = console_script(lidguard.home / "old-venv" / "bin")
    assert run_script(old, lidguard.env, "hook-install", "--provider", "claude").returncode == 0
    old.unlink()  # the venv was deleted
    new = console_script(lidguard.home / "new-venv" / "bin")
    status = run_script(new, lidguard.env, "hook-status", "--provider", "claude")
    assert f"Command check: broken: {old} does not exist" in status.stdout, status.stdout
    assert "Status: NeedsUpdate" in status.stdout
    doctor = run_script(new, lidguard.env, "doctor")
    assert f"Claude hooks: broken: {old} does not exist" in doctor.stdout, doctor.stdout
    reinstalled = run_script(new, lidguard.env, "hook-install", "--provider", "claude")
    assert reinstalled.returncode == 0 and "Changed: True" in reinstalled.stdout
    assert claude_commands(lidguard.home) == {hook_words(new, "claude-hook")}
    status = run_script(new, lidguard.env, "hook-status", "--provider", "claude")
    assert "Status: Installed" in status.stdout and "Command check: ok" in status.stdout, status.stdout


def test_a_bare_lidguard_that_the_agent_path_lacks_is_broken(lidguard):
    settings = lidguard.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                    "command": "lidguard claude-hook"}]}]}}))
    env = {**lidguard.env, "PATH": BARE_PATH}
    status = subprocess.run([sys.executable, "-m", "lidguard", "hook-status", "--provider", "claude"], env=env,
                            text=True, capture_output=True, timeout=60)
    assert "Command check: broken: lidguard is not on PATH" in status.stdout, status.stdout


def test_windows_hooks_run_the_absolute_executable_under_powershell(monkeypatch, tmp_path):
    """Copilot's ``powershell`` key and Claude's ``shell: powershell`` get the PowerShell call form of the
    absolute path (a quote in the path doubled); the installers still recognise it as theirs."""
    from lidguard.agents import claude as claude_agent
    from lidguard.agents import copilot
    from lidguard.installers import common

    claude = claude_agent.installer()
    from lidguard.installers.health import installed_commands

    exe = tmp_path / "it's here" / "lidguard.exe"
    exe.parent.mkdir()
    exe.write_text("")
    monkeypatch.setattr(common, "host_os_name", lambda: "windows")
    monkeypatch.setattr(sys, "argv", [str(exe)])
    stop = copilot.snippet(430)["hooks"]["agentStop"][0]
    quoted = "& '" + str(exe).replace("'", "''") + "'"
    assert stop == {"type": "command", "powershell": f"{quoted} copilot-hook --event agentStop", "timeoutSec": 430}
    assert common.is_managed_command(stop["powershell"], "copilot-hook", "agentStop")
    handler = claude.specs(430)[0].handler
    assert handler["command"] == f"{quoted} claude-hook" and handler["shell"] == "powershell"
    assert installed_commands(json.dumps({"hooks": {"agentStop": [stop]}}), "copilot-hook") == [[str(exe)]]


def test_hook_status_and_doctor_say_which_hook_runs_and_why(lidguard):
    from lidguard.installers.common import hook_client

    client = hook_client()
    assert client.usable, client.reason  # this tree builds it (python3 setup.py build_ext --inplace)
    (lidguard.home / ".claude").mkdir()
    script = console_script(lidguard.home / "venv" / "bin")
    assert run_script(script, lidguard.env, "hook-install", "--provider", "claude").returncode == 0
    status = run_script(script, lidguard.env, "hook-status", "--provider", "claude")
    assert f"Hook runner: native client {client.path} (the Python hook {script} when it cannot answer)" \
        in status.stdout, status.stdout
    assert f"Command check: ok ({client.path} {script})" in status.stdout
    doctor = run_script(script, lidguard.env, "doctor")
    assert f"runs: native client {client.path}" in doctor.stdout, doctor.stdout
    # A hook the agent runs through sh -c, as installed: the client answers (the runtime is not up: the
    # Python hook behind it starts it for the prompt).
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "n1", "cwd": str(lidguard.home),
                         "prompt": "p"})
    hook = subprocess.run(["/bin/sh", "-c", next(iter(claude_commands(lidguard.home)))], input=prompt,
                          env={**lidguard.env, "PATH": BARE_PATH}, text=True, capture_output=True, timeout=60)
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
    # Switched off (or a pure build without the client): the Python hook, and why.
    off = {**lidguard.env, "LIDGUARD_HOOK_CLIENT": "off"}
    assert run_script(script, off, "hook-install", "--provider", "claude").returncode == 0
    assert claude_commands(lidguard.home) == {f"{shlex.quote(str(script))} claude-hook"}
    status = run_script(script, off, "hook-status", "--provider", "claude")
    assert "Hook runner: Python hook (LIDGUARD_HOOK_CLIENT is off)" in status.stdout, status.stdout
    status = run_script(script, lidguard.env, "hook-status", "--provider", "claude")
    assert "Status: NeedsUpdate" in status.stdout
    assert "Hook runner: Python hook (installed without the native client; lidguard hook-install writes it)" \
        in status.stdout, status.stdout
