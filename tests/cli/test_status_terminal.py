"""status on a terminal: colour and a compact sessions table; NO_COLOR keeps the table without colour;
piped output stays the plain lines scripts read."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys


def status_on_a_terminal(lidguard, **env: str) -> str:
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "lidguard", "status"], stdin=subprocess.DEVNULL,
                               stdout=terminal, stderr=subprocess.PIPE, env={**lidguard.env, **env})
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(controller)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_status_on_a_terminal_has_colour_and_a_table_and_no_color_is_respected(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", "--cwd", "/work/app", check=True)
    coloured = status_on_a_terminal(lidguard, TERM="xterm", NO_COLOR="")
    ready, runtime_line = coloured.splitlines()[:2]
    assert "Safe to close the lid: not yet - " in ready  # first: the answer (here: the fake platform)
    assert runtime_line.startswith("\x1b[1mLidGuard runtime\x1b[0m \x1b[32mrunning\x1b[0m    sessions: 1")
    header, row = coloured.splitlines()[2:4]
    assert header.split() == ["\x1b[2m", "SESSION", "PROCESS", "STATE", "SOURCE", "STARTED", "ACTIVE", "FOLDER\x1b[0m"]
    assert row.startswith("  Claude:s1  -        \x1b[32mworking\x1b[0m") and row.endswith("/work/app")
    plain = status_on_a_terminal(lidguard, TERM="xterm", NO_COLOR="1")
    assert "\x1b[" not in plain and plain.splitlines()[2].split()[0] == "SESSION"
    assert "  Claude:s1  -        working  hook    " in plain


def test_piped_status_stays_plain(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    piped = lidguard.run("status", check=True).stdout
    assert "\x1b[" not in piped and "SESSION" not in piped
    assert piped.splitlines()[0].startswith("Safe to close the lid: not yet - this runtime is the fake platform")
    assert piped.splitlines()[1] == "LidGuard runtime is running."
    assert any(line.startswith("- Claude:s1 process=none") and " source=hook" in line for line in piped.splitlines())
    assert json.loads(lidguard.run("status", "--json", check=True).stdout)["sessions"][0]["source"] == "hook"


def test_status_lists_only_changed_settings_and_verbose_lists_all_as_on_off(lidguard):
    plain = lidguard.run("status", check=True).stdout
    assert "Settings: all defaults (`lidguard status --verbose` lists them)" in plain
    assert "Prevent system sleep" not in plain
    lidguard.run("settings", "--session-timeout-minutes", "1", "--watch-parent-process", "false", check=True)
    changed = lidguard.run("status", check=True).stdout.split("Settings changed from the defaults")[1]
    assert "  Session timeout: 1 minute\n" in changed and "  Watch parent process: off\n" in changed
    assert "Prevent system sleep" not in changed
    verbose = lidguard.run("status", "--verbose", check=True).stdout
    assert "  Prevent system sleep: on\n" in verbose and "True" not in verbose and "False" not in verbose
