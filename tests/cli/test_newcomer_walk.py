"""The acceptance walk of issue 33: a newcomer installs lidguard from this checkout into a fresh HOME, runs
setup, the README's "Trying it safely" demo, lets a real agent hook fire from a normal shell and
uninstalls. Afterwards no agent config names lidguard, the real settings are byte for byte what they
were before the demo, and the hook was served by the real runtime, never by the demo's.

How it installs: ``sh install.sh`` with ``LIDGUARD_INSTALL_METHOD=venv`` (``python3 -m venv`` + pip, the
route install.sh takes where pipx is missing). pipx is not installed on this machine, and an earlier try
timed ``pipx install`` from the checkout at 31-172 s here; the venv route builds the same wheel from the
same checkout (native modules included) in ~90 s on a loaded run, and leaves no pipx state outside HOME.

What "real" means under pytest: every process keeps ``LIDGUARD_TEST_MODE=1`` apart from the demo, so
nothing here can touch the live machine; the "normal shell" is the suite's environment without the
demo's ``LIDGUARD_PLATFORM=fake`` and ``LIDGUARD_FAKE_*`` - its platform is the default one, which under
test mode is the in-memory fake too, but it is the normal installation's runtime: the ``LidGuard`` data
folder (settings, journal, lock, socket) the agents' hooks use. The demo runs as a user types it
(``LIDGUARD_PLATFORM=fake`` without test mode) and so lives in ``LidGuard-demo``. The walk checks that
the two never mix: two runtimes with their own pids, the hook's session only in the normal folder, the
demo's only in the demo folder, and the agent configs untouched by the demo.

The real agent hook is the command ``lidguard setup`` wrote into ``~/.claude/settings.json``, run through
``sh -c`` exactly as Claude Code runs it, with the payloads Claude Code sends (UserPromptSubmit,
SessionEnd); the agent CLI itself is not started (tests/agents does that).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _pid_in(lock: Path) -> int:
    text = lock.read_text().split()
    return int(text[0]) if text and text[0].isdigit() else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _configs_naming_lidguard(home: Path) -> list[str]:
    found = []
    for folder in (".claude", ".gemini", ".codex", ".copilot", ".qwen", ".config/opencode"):
        for path in (home / folder).rglob("*") if (home / folder).exists() else ():
            if path.is_file() and "lidguard" in path.read_bytes().decode(errors="replace").lower():
                found.append(str(path))
            elif "lidguard" in path.name.lower():
                found.append(str(path))
    return found


def test_a_newcomer_installs_tries_the_demo_uses_an_agent_and_uninstalls(lidguard: Any) -> None:
    home: Path = lidguard.home
    bin_dir = home / ".local" / "bin"
    # A normal shell: the suite's safety switch stays, the demo's switches are not set.
    shell = {key: value for key, value in lidguard.env.items()
             if not key.startswith(("LIDGUARD_FAKE_", "LIDGUARD_PLATFORM", "PYTHON", "VIRTUAL_ENV"))}
    shell.update(PATH=f"{bin_dir}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
                 LIDGUARD_TEST_MODE="1")
    demo = {**shell, "LIDGUARD_PLATFORM": "fake", "LIDGUARD_TEST_MODE": "0",
            "LIDGUARD_FAKE_STATE": str(home / "machine.json"), "LIDGUARD_FAKE_ACTIONS": str(home / "actions.jsonl")}

    def run(env: dict[str, str], *args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(list(args), env=env, cwd=home, input=input_text, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-2000:])
        assert "Traceback" not in result.stderr, result.stderr
        return result

    # The user's own agent configuration, before lidguard.
    (home / ".claude").mkdir()
    (home / ".gemini").mkdir()
    mine = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(mine, indent=2))

    # 1. Install from the newcomer's own copy of the checkout (a clone they own: pip builds in the source tree,
    # which the suite's unprivileged user cannot write when the checkout is root's), then the first run.
    source = home / "src" / "lidguard"
    # Never what a build beside this test makes and deletes in the checkout (ci/test.sh packages it meanwhile):
    # build/, dist/, *.egg-info, and the sdist's staging folder lidguard-<version>/ (a copy once failed with
    # ENOENT mid-tree when the sdist step removed it).
    shutil.copytree(CHECKOUT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "dist", "*.egg-info", "lidguard-[0-9]*", "__pycache__", ".pytest_cache",
        ".mypy_cache", ".hypothesis", ".benchmarks", "node_modules"))
    installed = run({**shell, "LIDGUARD_INSTALL_METHOD": "venv", "PYTHON": sys.executable}, "sh",
                    str(source / "install.sh"))
    assert f"installed {bin_dir / 'lidguard'}" in installed.stdout
    lidguard_command = str(bin_dir / "lidguard")
    assert "Verdict: ready" in run(shell, lidguard_command, "setup", "--yes").stdout
    run(shell, lidguard_command, "settings", "--post-stop-suspend-delay-seconds", "120")
    real_settings = home / "data" / "LidGuard" / "settings.json"
    settings_before = real_settings.read_bytes()
    claude_config = home / ".claude" / "settings.json"
    hooks_before = claude_config.read_bytes()
    hook_command = json.loads(hooks_before)["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    # The installed lidguard, led by the installation's own native hook client (issue 36) where it was built.
    words = hook_command.split()
    assert words[-2:] == [str(bin_dir / "lidguard"), "claude-hook"], hook_command
    assert len(words) == 2 or (len(words) == 3 and words[0].endswith("/lidguard/_native/lidguard-hook")
                               and str(home) in words[0]), hook_command

    # 2. README's demo, as typed (its runtime is still up when the agent's hook fires).
    (home / "machine.json").write_text('{"lid": "closed", "displays": []}')
    run(demo, lidguard_command, "settings", "--post-stop-suspend-delay-seconds", "0")
    run(demo, lidguard_command, "start", "--provider", "custom", "--session", "demo")
    run(demo, lidguard_command, "stop", "--provider", "custom", "--session", "demo")
    actions = [json.loads(line)["action"] for line in (home / "actions.jsonl").read_text().splitlines()]
    assert "protection-applied" in actions and "suspend-requested" in actions, actions
    demo_folder = home / "data" / "LidGuard-demo"
    assert json.loads((demo_folder / "settings.json").read_text())["PostStopSuspendDelaySeconds"] == 0
    assert real_settings.read_bytes() == settings_before, "the demo changed the real settings"
    assert claude_config.read_bytes() == hooks_before, "the demo changed an agent's hooks"
    demo_pid = _pid_in(demo_folder / "runtime.lock")

    # 3. A real agent's hook from a normal shell.
    payload = {"session_id": "walk-1", "transcript_path": str(home / "walk-1.jsonl"), "cwd": str(home),
               "permission_mode": "default"}
    run(shell, "sh", "-c", hook_command,
        input_text=json.dumps({**payload, "hook_event_name": "UserPromptSubmit", "prompt": "hello"}))
    status = json.loads(run(shell, lidguard_command, "status", "--json").stdout)
    assert [session["sessionIdentifier"] for session in status["sessions"]] == ["walk-1"], status["sessions"]
    assert status["settingsFile"] == str(real_settings)
    real_pid = _pid_in(home / "data" / "LidGuard" / "runtime.lock")
    assert real_pid and demo_pid and real_pid != demo_pid and _alive(real_pid) and _alive(demo_pid), \
        "the hook must be served by the normal installation's own runtime while the demo's still runs"
    assert "walk-1" in (home / "data" / "LidGuard" / "session-journal.jsonl").read_text()
    assert "walk-1" not in (demo_folder / "session-journal.jsonl").read_text()
    demo_status = json.loads(run(demo, lidguard_command, "status", "--json").stdout)
    assert all(session["sessionIdentifier"] != "walk-1" for session in demo_status["sessions"]), demo_status
    run(shell, "sh", "-c", hook_command, input_text=json.dumps({**payload, "hook_event_name": "SessionEnd",
                                                                 "reason": "exit"}))
    run(demo, lidguard_command, "stop-runtime")  # the demo's last line

    # 4. Uninstall.
    removed = run(shell, lidguard_command, "uninstall", "--yes").stdout
    assert "Removed: the Claude hooks" in removed and "Removed: the Gemini hooks" in removed, removed
    assert _configs_naming_lidguard(home) == []
    assert json.loads(claude_config.read_text()) == mine, "the user's own Claude settings must stay"
    assert real_settings.read_bytes() == settings_before
    assert lidguard.wait_until(lambda: not _alive(real_pid) and not _alive(demo_pid), timeout=60), \
        "a runtime outlived the uninstall"
    # Its last line is the command that removes the program as install.sh installed it; run it.
    venv = home / "data" / "lidguard" / "venv"
    line = f"Now remove the program: rm -r {venv} {bin_dir / 'lidguard'} {bin_dir / 'lidguard-notify'}"
    assert removed.splitlines()[-1] == line, removed
    run(shell, "sh", "-c", line.split(": ", 1)[1])
    assert not venv.exists() and not any(bin_dir.iterdir())
