"""Owner detection: which ancestor of a hook process is the agent (spec/AGENT_CLIS.md ancestries)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lidguard.agents.ancestry import (
    AGENT_PROVIDERS,
    is_lidguard_process,
    matches_provider,
    resolve_agent_process,
)
from lidguard.platform.api import ProcessInfo
from lidguard.proctree import read_ancestry

NPM = "/opt/agents/node_modules"


def process(pid: int, name: str, exe: str = "", *cmdline: str) -> ProcessInfo:
    """A chain entry; ppid is filled in by ``chain``."""
    return ProcessInfo(pid, 0, name, exe, tuple(cmdline))


def chain(*processes: ProcessInfo) -> list[ProcessInfo]:
    """Links ``processes`` (hook first) into an ancestry with ppids pointing at the next one."""
    linked = []
    for index, info in enumerate(processes):
        parent = processes[index + 1].pid if index + 1 < len(processes) else 1
        linked.append(ProcessInfo(info.pid, parent, info.name, info.exe, info.cmdline))
    return linked


HOOK = process(100, "lidguard", "/usr/bin/python3.11", "/usr/bin/python3", "/venv/bin/lidguard", "hook", "x")
DASH = process(101, "sh", "/usr/bin/dash", "/bin/sh", "-c", "lidguard hook claude Stop")
BASH_C = process(102, "bash", "/usr/bin/bash", "bash", "-c", "codex exec 'hi'; claude -p hi")
TMUX = process(103, "tmux: server", "/usr/bin/tmux", "tmux")
TIMEOUT = process(104, "timeout", "/usr/bin/timeout", "timeout", "600", "./run.sh")
RUN_SCRIPT = process(105, "run.sh", "/usr/bin/bash", "/bin/bash", "./run.sh")
SYSTEMD = process(1, "systemd", "/usr/lib/systemd/systemd", "/sbin/init")

CLAUDE = process(200, "claude", f"{NPM}/@anthropic-ai/claude-code/bin/claude.exe",
                 f"{NPM}/.bin/claude", "-p", "run echo hello")
CLAUDE_NODE = process(201, "node", "/usr/bin/node", "node", f"{NPM}/@anthropic-ai/claude-code/cli.js", "-p", "x")
CLAUDE_NATIVE_INSTALL = process(202, "claude", "/root/.local/share/claude/versions/2.1.197", "claude")
CODEX = process(300, "codex", f"{NPM}/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
                "codex", "exec", "--skip-git-repo-check", "hi")
CODEX_NODE = process(301, "node", "/usr/bin/node", "node", f"{NPM}/.bin/codex", "exec", "hi")
CODEX_APP_SERVER = process(302, "codex", "/root/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex",
                           "/root/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex", "app-server",
                           "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon")
CODEX_DAEMON_HELPER = process(304, "codex", "/opt/codex/bin/codex", "/opt/codex/bin/codex", "app-server", "daemon",
                              "pid-update-loop")
CODEX_TUI = process(303, "codex", f"{NPM}/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
                    "codex")
COPILOT = process(400, "MainThread", f"{NPM}/@github/copilot-linux-x64/copilot",
                  f"{NPM}/@github/copilot-linux-x64/copilot", "-p", "hi", "--allow-all-tools")
COPILOT_LOADER = process(401, "node", "/usr/bin/node", "node", f"{NPM}/@github/copilot/npm-loader.js", "-p", "hi")
GH_COPILOT = process(402, "gh", "/usr/bin/gh", "gh", "copilot", "suggest", "hi")
OPENCODE = process(500, "opencode", f"{NPM}/opencode-ai/bin/opencode.exe", f"{NPM}/.bin/opencode", "run", "hi")
OPENCODE_WINDOWS = process(501, "opencode.exe", r"C:\Users\u\AppData\npm\opencode.exe", "opencode.exe")
NPX_CODEX = process(600, "npm exec @open", "/usr/bin/node", "npm", "exec", "--yes", "@openai/codex@latest", "exec")
NPX_CLAUDE = process(601, "npx", "/usr/bin/node", "npx", "-y", "@anthropic-ai/claude-code", "-p", "x")
BUN_OPENCODE = process(602, "bun", "/usr/bin/bun", "bun", "x", "opencode-ai", "run", "hi")
# AGENT_CLIS_MORE.md: both relaunch themselves; the hook's parent is the relaunched child (comm "node").
GEMINI = process(800, "node", "/usr/bin/node", "/usr/bin/node", "--max-old-space-size=12052", f"{NPM}/.bin/gemini",
                 "-p", "hi", "--yolo")
GEMINI_LAUNCHER = process(801, "node", "/usr/bin/node", "node", f"{NPM}/.bin/gemini", "-p", "hi", "--yolo")
GEMINI_GLOBAL = process(802, "node", "/usr/bin/node", "node",
                        "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js")
QWEN = process(900, "node", "/usr/bin/node", "/usr/bin/node", "--expose-gc", f"{NPM}/@qwen-code/qwen-code/cli.js",
               "--yolo", "hi")
QWEN_RELAUNCH = process(901, "node", "/usr/bin/node", "/usr/bin/node", "--expose-gc",
                        f"{NPM}/@qwen-code/qwen-code/cli.js", "--yolo", "hi")
QWEN_LAUNCHER = process(902, "node", "/usr/bin/node", "node", f"{NPM}/.bin/qwen", "--yolo", "hi")
NODE_SERVER = process(700, "node", "/usr/bin/node", "node", "/srv/app/server.js", "codex", "claude")
PYTHON_M_LIDGUARD = process(701, "python3", "/usr/bin/python3.11", "python3", "-X", "utf8", "-m", "lidguard.cli",
                            "claude")


@pytest.mark.parametrize(
    ("provider", "ancestry", "expected"),
    [
        # Claude: hook <- sh -c <- claude (headless and interactive).
        ("claude", [HOOK, DASH, CLAUDE, TIMEOUT, RUN_SCRIPT], CLAUDE),
        ("claude", [HOOK, DASH, CLAUDE, BASH_C, TMUX], CLAUDE),
        ("claude", [HOOK, DASH, CLAUDE_NATIVE_INSTALL, SYSTEMD], CLAUDE_NATIVE_INSTALL),
        ("claude", [HOOK, DASH, CLAUDE_NODE, RUN_SCRIPT], CLAUDE_NODE),
        ("claude", [HOOK, DASH, NPX_CLAUDE], NPX_CLAUDE),
        # Codex exec: hook <- codex <- node .bin/codex (node 20 keeps the wrapper): native wins.
        ("codex", [HOOK, CODEX, CODEX_NODE, TIMEOUT], CODEX),
        # Codex TUI: hook <- its app-server daemon <- the TUI: the TUI (the daemon outlives it); an orphaned
        # daemon leaves the session unwatched (its hooks end it).
        ("codex", [HOOK, CODEX_APP_SERVER, CODEX_TUI, CODEX_NODE, BASH_C, TMUX], CODEX_TUI),
        ("codex", [HOOK, CODEX_DAEMON_HELPER, CODEX_TUI, CODEX_NODE], CODEX_TUI),
        ("codex", [HOOK, CODEX_APP_SERVER, SYSTEMD], None),
        ("codex", [HOOK, CODEX_NODE, TIMEOUT], CODEX_NODE),
        ("codex", [HOOK, DASH, NPX_CODEX, BASH_C], NPX_CODEX),
        # Copilot: hook <- MainThread (exe .../copilot) <- node npm-loader.js.
        ("copilot", [HOOK, COPILOT, COPILOT_LOADER, TIMEOUT], COPILOT),
        ("copilot", [HOOK, COPILOT_LOADER, TIMEOUT], COPILOT_LOADER),
        ("copilot", [HOOK, DASH, GH_COPILOT, BASH_C], GH_COPILOT),
        # OpenCode: the hook command's parent is opencode itself.
        ("opencode", [HOOK, OPENCODE, TIMEOUT], OPENCODE),
        ("opencode", [HOOK, DASH, OPENCODE, BASH_C, TMUX], OPENCODE),
        ("opencode", [HOOK, OPENCODE_WINDOWS], OPENCODE_WINDOWS),
        ("opencode", [HOOK, BUN_OPENCODE], BUN_OPENCODE),
        # Gemini CLI and Qwen Code: the relaunched node child, never the launcher above it.
        ("gemini", [HOOK, GEMINI, GEMINI_LAUNCHER, TIMEOUT], GEMINI),
        ("gemini", [HOOK, GEMINI_GLOBAL, BASH_C, TMUX], GEMINI_GLOBAL),
        ("qwen", [HOOK, QWEN, QWEN_RELAUNCH, QWEN_LAUNCHER, TIMEOUT], QWEN),
        ("gemini", [HOOK, QWEN, QWEN_RELAUNCH, QWEN_LAUNCHER], None),
        ("qwen", [HOOK, GEMINI, GEMINI_LAUNCHER], None),
        ("unknown", [HOOK, QWEN, QWEN_RELAUNCH, QWEN_LAUNCHER], QWEN),
        # The wrong provider, shells naming the agent, and generic runners never match.
        ("codex", [HOOK, DASH, CLAUDE, TIMEOUT], None),
        ("claude", [HOOK, BASH_C, TMUX, SYSTEMD], None),
        ("codex", [HOOK, NODE_SERVER, RUN_SCRIPT], None),
        ("claude", [HOOK, DASH, RUN_SCRIPT, SYSTEMD], None),
        ("opencode", [HOOK], None),
        ("claude", [], None),
        # lidguard's own processes are skipped, including the hook process itself.
        ("claude", [CLAUDE, DASH, SYSTEMD], None),
        ("claude", [HOOK, PYTHON_M_LIDGUARD, DASH, CLAUDE], CLAUDE),
        # unknown/custom try every provider; the closest agent wins.
        ("unknown", [HOOK, COPILOT, COPILOT_LOADER], COPILOT),
        ("custom", [HOOK, CODEX, CODEX_NODE, BASH_C, CLAUDE], CODEX),
        ("unknown", [HOOK, DASH, RUN_SCRIPT, TMUX], None),
    ],
)
def test_owner_detection_table(provider: str, ancestry: list[ProcessInfo], expected: ProcessInfo | None) -> None:
    owner = resolve_agent_process(chain(*ancestry), provider)
    assert (owner.pid if owner else None) == (expected.pid if expected else None)


def test_provider_names_are_case_insensitive_and_validated() -> None:
    assert resolve_agent_process(chain(HOOK, CODEX), " Codex ") is not None
    with pytest.raises(ValueError, match="unknown agent provider"):
        resolve_agent_process(chain(HOOK, CODEX), "banana")


def test_copilot_comm_alone_is_not_enough() -> None:
    other_sea = process(800, "MainThread", "/opt/other/app", "/opt/other/app", "--serve")
    assert not matches_provider(other_sea, "copilot")
    assert matches_provider(process(801, "MainThread", "/x/copilot", "node"), "copilot")
    assert matches_provider(process(802, "MainThread", "/x/node", "/x/copilot"), "copilot")
    assert matches_provider(process(803, "gh-copilot", "/ext/gh-copilot", "gh-copilot"), "copilot")
    assert not matches_provider(process(804, "gh", "/usr/bin/gh", "gh", "issue", "list", "-S", "copilot"), "copilot")


def test_runner_counts_only_its_first_operand() -> None:
    assert matches_provider(process(810, "node", "/usr/bin/node", "node", "--no-warnings", f"{NPM}/.bin/codex"),
                            "codex")
    assert not matches_provider(process(811, "node", "/usr/bin/node", "node", "/srv/codex/server.js"), "codex")
    assert not matches_provider(process(812, "npx", "/usr/bin/node", "npx", "prettier", "codex"), "codex")
    assert matches_provider(process(813, "pnpm", "/usr/bin/pnpm", "pnpm", "dlx", "@github/copilot"), "copilot")


@pytest.mark.parametrize(
    ("cmdline", "expected"),
    [
        (("/venv/bin/lidguard", "hook", "claude"), True),
        (("lidguard.exe", "hook"), True),
        (("/usr/bin/python3", "-m", "lidguard", "hook"), True),
        (("python3.11", "-mlidguard.cli"), True),
        (("python", "-X", "importtime", "-m", "lidguard"), True),
        (("/usr/bin/python3", "-I", "/venv/bin/lidguard", "hook"), True),
        (("/usr/bin/python3", "-m", "lidguardian"), False),
        (("/usr/bin/python3", "-c", "import lidguard"), False),
        (("/usr/bin/python3", "/srv/tool.py", "lidguard"), False),
        (("node", "/x/lidguard-plugin.js"), False),
    ],
)
def test_is_lidguard_process(cmdline: tuple[str, ...], expected: bool) -> None:
    assert is_lidguard_process(ProcessInfo(900, 1, "x", "/usr/bin/x", cmdline)) is expected


# ---------------------------------------------------------------- real processes

# Runs as the fake agent (python under the agent's name): prints its pid, then runs the "hook"
# through `/bin/sh -c` the way Claude Code does; the hook prints the pid it resolves.
FAKE_AGENT_SCRIPT = """
import os, subprocess, sys
comm = sys.argv[3]
if comm:
    with open("/proc/self/comm", "w") as handle:  # Copilot's native binary shows up as MainThread
        handle.write(comm)
print(os.getpid(), flush=True)
sys.exit(subprocess.call(["/bin/sh", "-c", '"$0" -c "$1"; exit $?', sys.argv[1], sys.argv[2]]))
"""
HOOK_SCRIPT = """
from lidguard.agents.ancestry import resolve_agent_process
from lidguard.proctree import read_ancestry
owner = resolve_agent_process(read_ancestry(), {provider!r})
print(owner.pid if owner else "none", flush=True)
"""


def run_fake_agent(directory: Path, agent_name: str, provider: str, *, comm: str = "") -> tuple[str, str]:
    """Starts python renamed to ``agent_name``; returns (its pid, the pid its hook resolved)."""
    fake_agent = directory / agent_name
    fake_agent.symlink_to(os.path.realpath(sys.executable))
    finished = subprocess.run(
        [str(fake_agent), "-c", FAKE_AGENT_SCRIPT, sys.executable, HOOK_SCRIPT.format(provider=provider), comm],
        capture_output=True, text=True, timeout=60, check=True,
    )
    agent_pid, resolved = finished.stdout.split()
    return agent_pid, resolved


@pytest.mark.parametrize(
    ("agent_name", "provider", "comm"),
    [
        ("claude", "claude", ""),
        ("codex", "codex", ""),
        ("copilot", "copilot", "MainThread"),
        ("opencode", "opencode", ""),
        ("codex", "unknown", ""),
    ],
)
def test_real_fake_agent_is_resolved(tmp_path: Path, agent_name: str, provider: str, comm: str) -> None:
    agent_pid, resolved = run_fake_agent(tmp_path, agent_name, provider, comm=comm)
    assert resolved == agent_pid


def test_real_unrelated_chain_is_not_the_owner(tmp_path: Path) -> None:
    # pytest itself may run under an agent; then that outer agent is the only acceptable answer.
    outer_owner = resolve_agent_process(read_ancestry(), "unknown")
    agent_pid, resolved = run_fake_agent(tmp_path, "not-an-agent", "unknown")
    assert resolved != agent_pid
    assert resolved == (str(outer_owner.pid) if outer_owner else "none")


@pytest.mark.parametrize("provider", AGENT_PROVIDERS)
def test_real_agent_named_for_another_provider_is_not_the_owner(tmp_path: Path, provider: str) -> None:
    other = next(name for name in AGENT_PROVIDERS if name != provider)
    agent_pid, resolved = run_fake_agent(tmp_path, other, provider)
    assert resolved != agent_pid
