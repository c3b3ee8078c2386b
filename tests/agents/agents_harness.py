"""One real agent CLI turn against the fake model, inside the root conftest's lidguard isolation.

``AgentRun`` gives each test a throw-away HOME (the ``lidguard`` fixture's: own XDG folders, fake
platform driven through ``LIDGUARD_FAKE_STATE``, actions in ``LIDGUARD_FAKE_ACTIONS``), the CLI's own
config pointing at the fake model (AGENT_CLIS.md: env vars, config files, onboarding files), ``lidguard``
first on PATH, a pre-started runtime, and helpers to run a headless turn or an interactive one in a
private tmux server, and to read what lidguard recorded.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents_clis import BIN_DIR, COPILOT_CACHE_DIR, PINNED, agent_cli, require_tmux
from fake_augment import FakeAugment
from fake_model import FakeModel

HOOK_SCRIPT = Path(__file__).resolve().parent / "hook_script.py"
PROMPT = "run echo hello and then say hi"
PROVIDER = {"claude": "Claude", "codex": "Codex", "copilot": "GitHubCopilot", "opencode": "OpenCode",
            "gemini": "Gemini", "qwen": "Qwen", "droid": "Droid", "openhands": "OpenHands", "auggie": "Augment"}
# The native hook client's exe base name (issue 36): hook-install writes it ahead of the Python hook where built.
HOOK_CLIENT_EXE = "lidguard-hook"
HOOK_RUNNERS = (HOOK_CLIENT_EXE, "dash", "sh", "bash")
# The agent's own program (exe base name) that lidguard must watch, per CLI (AGENT_CLIS.md ancestry).
# Gemini CLI and Qwen Code are node all the way: the watched one is the relaunched child (the deepest node);
# auggie is one node process (``node .../.bin/auggie``), the hooks' own parent.
# OpenHands is its Python console script (comm `openhands`, exe the venv's python3.12).
NATIVE_EXE = {"claude": "claude.exe", "codex": "codex", "copilot": "copilot", "opencode": "opencode.exe",
              "gemini": "node", "qwen": "node", "droid": "droid", "openhands": "python3.12", "auggie": "node"}
RELAUNCHED = ("gemini", "qwen")
_LEAKY_VARIABLES = ("ANTHROPIC_", "OPENAI_", "COPILOT_", "CODEX_", "CLAUDE", "OPENCODE", "GITHUB_TOKEN",
                    "GH_TOKEN", "TMUX", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "GEMINI_", "GOOGLE_",
                    "QWEN_", "FACTORY_", "DROID_", "LLM_", "OPENHANDS_", "LITELLM_", "TMUX_TMPDIR", "AUGMENT_")
GEMINI_MODEL = "gemini-2.5-flash"  # a fixed model: no model-router side request (AGENT_CLIS_MORE.md 1.1)
CLAUDE_KEY = "sk-ant-fake-local-key-000000000000"


def lidguard_bin_dir(scratch: Path) -> Path:
    """A folder with a ``lidguard`` command for this interpreter (the console script when installed)."""
    console = Path(sys.executable).parent / "lidguard"
    if console.exists():
        return console.parent
    folder = scratch / "bin"
    folder.mkdir(exist_ok=True)
    wrapper = folder / "lidguard"
    wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m lidguard \"$@\"\n")
    wrapper.chmod(0o755)
    return folder


@dataclass
class ProcessWatch:
    """Every descendant of a root pid seen while it runs (pid -> last exe base name, pid -> parent pid),
    polled from /proc."""

    root: int
    seen: dict[int, str] = field(default_factory=dict)
    parents: dict[int, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _parent_at_birth: dict[int, int] = field(default_factory=dict)

    def start(self) -> ProcessWatch:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def kill_survivors(self, home: Path) -> list[str]:
        """SIGKILL the agent's own processes still alive after its terminal went away (Gemini CLI's node
        children outlive tmux's SIGHUP and kept using the CPU of every later test). Only processes of this
        test (HOME in their environment: a pid may be another test's by now); Python processes are
        lidguard's (hooks, the runtime a hook started): the test's teardown owns those."""
        killed = []
        marker = f"HOME={home}".encode() + b"\0"
        for pid, name in self.seen.items():
            if pid == os.getpid() or name.startswith("python") or name == HOOK_CLIENT_EXE:
                continue
            try:
                if marker not in Path(f"/proc/{pid}/environ").read_bytes():
                    continue  # gone, or the pid is someone else's now
                os.kill(pid, signal.SIGKILL)
                killed.append(f"{name}[{pid}]")
            except OSError:
                continue
        return killed

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(0.02)

    def poll(self) -> None:
        """One pass over /proc. This runs every 20 ms for a whole agent test beside six workers, so a
        process's parent is read from its ``stat`` once, when its pid first appears (reading every
        ``stat`` on each pass cost 3-10 ms of CPU per pass). A pid missing from one pass is forgotten, so a
        reused pid (which would have to wrap the whole pid space between two passes) is read again. A
        process keeps the parent it was born under: an orphan re-parented away from the root stays
        in the family (``kill_survivors`` wants exactly those)."""
        present = set()
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            present.add(pid)
            if pid in self._parent_at_birth:
                continue
            try:
                descriptor = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
                try:
                    stat = os.read(descriptor, 1024)
                finally:
                    os.close(descriptor)
                self._parent_at_birth[pid] = int(stat[stat.rindex(b")") + 2:].split(None, 2)[1])
            except (OSError, ValueError, IndexError):
                continue
        for pid in self._parent_at_birth.keys() - present:
            del self._parent_at_birth[pid]
        children: dict[int, list[int]] = {}
        for pid, parent in self._parent_at_birth.items():
            children.setdefault(parent, []).append(pid)
        family, pending = [], [self.root]
        while pending:
            pid = pending.pop()
            family.append(pid)
            pending.extend(children.get(pid, ()))
        for pid in family:  # read again each time: a fork shows its parent's program until it execs
            try:
                self.seen[pid] = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            if pid in self._parent_at_birth:
                self.parents[pid] = self._parent_at_birth[pid]


class AgentRun:
    def __init__(self, name: str, lidguard: Any, model: FakeModel | FakeAugment) -> None:
        self.name = name
        self.cli = agent_cli(name)
        self.lidguard = lidguard
        self.model = model
        self.home: Path = lidguard.home
        self.work = self.home / "work"
        self.work.mkdir()
        self.hook_log = self.home / "hook-script.log"
        env = {key: value for key, value in lidguard.env.items() if not key.startswith(_LEAKY_VARIABLES)}
        bin_dir = lidguard_bin_dir(self.home)
        env.update({
            "PATH": os.pathsep.join([str(bin_dir), str(BIN_DIR), env.get("PATH", "/usr/bin:/bin")]),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "LIDGUARD_TEST_HOOK_LOG": str(self.hook_log),
            "NO_UPDATE_NOTIFIER": "1",
            "NO_COLOR": "1",
            "TERM": "xterm-256color",
            "PWD": str(self.work),
            # A person's login shell. Without SHELL tmux runs the pane through the account's passwd shell,
            # and the user lane's account has /usr/sbin/nologin: every TUI test's pane died at once in CI,
            # whose environment has no SHELL. Claude Code also wants bash or zsh for its Bash tool.
            "SHELL": shutil.which("bash") or "/bin/sh",
        })
        self.env = env
        self.watch: ProcessWatch | None = None
        self.agent_pid: int | None = None
        self.tmux_tmpdir: Path | None = None
        getattr(self, f"_configure_{name}")()  # a subclass in an agent's own test module may add its CLI

    # -- per-CLI configuration (AGENT_CLIS.md) -------------------------------------------------------
    def _configure_claude(self) -> None:
        self.env.update({
            "ANTHROPIC_BASE_URL": self.model.base_url, "ANTHROPIC_API_KEY": CLAUDE_KEY,
            "ANTHROPIC_MODEL": "claude-sonnet-4-5", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        })
        # Interactive onboarding: done, the key approved, the folder trusted.
        onboarding = {"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]],
                                                                                 "rejected": []},
                      "projects": {str(self.work): {"hasTrustDialogAccepted": True}}}
        (self.home / ".claude.json").write_text(json.dumps(onboarding))
        (self.home / ".claude").mkdir(exist_ok=True)

    def _configure_codex(self, approval: str = "never", sandbox: str = "danger-full-access") -> None:
        self.env["FAKE_API_KEY"] = "sk-fake-local"
        codex_home = self.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        config = f"""model = "fake-model"
model_provider = "fake"
approval_policy = "{approval}"
sandbox_mode = "{sandbox}"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake local"
base_url = "{self.model.base_url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."{self.work}"]
trust_level = "trusted"
"""
        (codex_home / "config.toml").write_text(config)

    def _configure_copilot(self) -> None:
        self.env.update({
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": f"{self.model.base_url}/v1", "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_WIRE_API": "completions", "COPILOT_PROVIDER_API_KEY": "sk-fake-local",
            "COPILOT_MODEL": "gpt-4.1",
            # Its first run unpacks ~235 MB of its own program under XDG_CACHE_HOME/copilot/pkg/<version>:
            # shared (beside the npm folder when writable) instead of once per throw-away HOME.
            "XDG_CACHE_HOME": str(COPILOT_CACHE_DIR),
        })
        copilot_home = self.home / ".copilot"
        copilot_home.mkdir(exist_ok=True)
        (copilot_home / "settings.json").write_text(json.dumps({"autoUpdate": False, "banner": "never"}))
        self._unpack_copilot_once()

    def _unpack_copilot_once(self) -> None:
        """Copilot's first run unpacks its program into the shared cache folder: done once, under a lock,
        so that tests on parallel pytest-xdist workers never unpack into the same folder at once."""
        import fcntl

        cache = Path(self.env["XDG_CACHE_HOME"])
        cache.mkdir(parents=True, exist_ok=True)
        unpacked = cache / f".lidguard-unpacked-{PINNED['copilot'][1]}"
        with open(cache / ".lidguard-unpack.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if unpacked.exists():
                return
            result = subprocess.run([str(self.cli), "--version"], env=self.env, cwd=self.work, text=True,
                                    capture_output=True, stdin=subprocess.DEVNULL, timeout=180)
            assert result.returncode == 0, f"copilot --version: {result.stdout}{result.stderr}"
            unpacked.touch()

    def _configure_opencode(self) -> None:
        folder = self.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        config = {
            "$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "model": "fake/fake-model", "small_model": "fake/fake-model",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake local",
                                  "options": {"baseURL": f"{self.model.base_url}/v1", "apiKey": "sk-fake-local"},
                                  "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                                            "limit": {"context": 128000, "output": 4096}}}}},
        }
        (folder / "opencode.json").write_text(json.dumps(config, indent=2))
        # No network beyond the fake model: no models.dev catalogue, LSP downloads or update checks.
        self.env.update({"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                         "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_SHARE": "1"})

    def _configure_gemini(self) -> None:
        """API key auth against the fake server (AGENT_CLIS_MORE.md 1.1: the base URL alone selects "gateway",
        which headless refuses) and the work folder trusted: Gemini runs no hooks in an untrusted folder."""
        self.env.update({"GEMINI_API_KEY": "fake-local-key", "GOOGLE_GEMINI_BASE_URL": self.model.base_url})
        folder = self.home / ".gemini"
        folder.mkdir(exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                    "privacy": {"usageStatisticsEnabled": False}}
        (folder / "settings.json").write_text(json.dumps(settings, indent=2))
        self.trust_gemini_folder("TRUST_FOLDER")

    def trust_gemini_folder(self, level: str) -> None:
        (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(self.work): level}))

    def _configure_qwen(self) -> None:
        self.env.update({"OPENAI_API_KEY": "sk-fake-local", "OPENAI_BASE_URL": f"{self.model.base_url}/v1",
                         "OPENAI_MODEL": "fake-model"})
        folder = self.home / ".qwen"
        folder.mkdir(exist_ok=True)
        (folder / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}}}))

    def _configure_droid(self) -> None:
        """A custom Chat Completions model in ~/.factory/settings.json (AGENT_CLIS_NEW.md 1): ``droid exec`` needs
        no login; the TUI needs ``FACTORY_AIRGAP_ENABLED`` (else a login screen) and the work folder trusted. The
        key is written literally: the TUI rewrites this file and would replace a ``${VAR}`` with its value."""
        self.env["FACTORY_AIRGAP_ENABLED"] = "true"
        folder = self.home / ".factory"
        folder.mkdir(exist_ok=True)
        model = {"model": "fake-model", "displayName": "Fake", "baseUrl": f"{self.model.base_url}/v1",
                 "apiKey": "sk-fake-local", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}
        settings = {"customModels": [model], "model": "custom:Fake-0",
                    "trustedFolders": {str(self.work): {"trustedAt": "2026-01-01T00:00:00.000Z"}}}
        (folder / "settings.json").write_text(json.dumps(settings, indent=2))

    def _configure_openhands(self) -> None:
        """LLM_* and --override-with-envs (AGENT_CLIS_NEW.md 7); no network: litellm's local cost map, and git's
        clone of OpenHands' public skills fails at once. Its terminal tool starts a ``tmux -L openhands``
        server that outlives the CLI: its socket goes under a folder of this test's own (TMUX_TMPDIR),
        short for the socket path's limit, and ``close`` ends that server."""
        self.tmux_tmpdir = Path(tempfile.mkdtemp(prefix="lg-oh-tmux-"))
        self.env.update({
            "LLM_MODEL": "openai/fake-model", "LLM_API_KEY": "sk-fake-local",
            "LLM_BASE_URL": f"{self.model.base_url}/v1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1",
            "TMUX_TMPDIR": str(self.tmux_tmpdir),
            "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "url.file:///nonexistent/.insteadOf",
            "GIT_CONFIG_VALUE_0": "https://github.com/",
        })

    def openhands_tmux_servers(self) -> list[int]:
        """The pids of tmux servers on this test's ``openhands`` socket (none once ``close`` ran)."""
        if self.tmux_tmpdir is None:
            return []
        result = subprocess.run([require_tmux(), "-L", "openhands", "list-sessions", "-F", "#{pid}"],
                                env=self.env, text=True, capture_output=True, timeout=30)
        return sorted({int(line) for line in result.stdout.split() if line.isdigit()}) if result.returncode == 0 else []

    def _configure_auggie(self) -> None:
        """The fake Augment tenant (``model`` is a ``fake_augment.FakeAugment``) as the login; no update check."""
        self.env.update({"AUGMENT_SESSION_AUTH": self.model.session_auth(), "AUGMENT_DISABLE_AUTO_UPDATE": "1"})
        (self.home / ".augment").mkdir(exist_ok=True)

    # -- lidguard ----------------------------------------------------------------------------------
    def lidguard_run(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``lidguard <args>`` as a user would type it (the command on PATH, this test's environment)."""
        result = subprocess.run(["lidguard", *args], env=self.env, cwd=self.work, text=True, capture_output=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"lidguard {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result

    def hook_install(self) -> str:
        return self.lidguard_run("hook-install", "--provider", self.name).stdout

    def prepare_machine(self, *, lid: str = "closed", permission: str | None = None) -> None:
        """Closed lid with no display (a stop suspends, decisions apply), post-stop delay 0, runtime up."""
        self.lidguard.set_machine(lid=lid, displays=[])
        settings = ["settings", "--post-stop-suspend-delay-seconds", "0"]
        if permission is not None:
            settings += ["--closed-lid-permission-request-decision", permission]
        self.lidguard_run(*settings)
        self.start_runtime()

    def start_runtime(self, timeout: float = 60.0) -> None:
        """The runtime up front (a loaded machine can exceed the hook's 5 s auto-start allowance)."""
        subprocess.Popen(["lidguard", "run-server"], env=self.env, cwd=self.home, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.lidguard.socket.exists() and self.status().get("runtimeRunning"):
                return
            time.sleep(0.1)
        raise AssertionError("the lidguard runtime did not start within 60 s")

    def status(self) -> dict[str, Any]:
        return json.loads(self.lidguard_run("status", "--json").stdout)

    def session_log(self) -> list[dict[str, Any]]:
        path = self.lidguard.data_dir / "session-execution.log"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [entry for entry in self.session_log() if entry.get("EventName") == name]

    def started_session(self, provider: str) -> dict[str, Any]:
        """The one ``session-started`` entry of ``provider``, checked to watch the agent's own process."""
        started = [e for e in self.events("session-started") if e["Provider"] == provider]
        assert len(started) == 1, f"expected one started {provider} session\n{self.describe()}"
        watched = started[0]["WatchedProcessIdentifier"]
        assert self.watch is not None
        assert self.watch.seen.get(watched) == NATIVE_EXE[self.name], (
            f"watched pid {watched} is not the agent's own process; the run's processes: {self.watch.seen}")
        if NATIVE_EXE[self.name] == "node":  # the hooks' own parent; a relaunched child is a node under a node
            seen, parents = self.watch.seen, self.watch.parents
            assert self.name not in RELAUNCHED or seen.get(parents.get(watched, 0)) == "node", (watched, seen, parents)
            # The hooks: Python, the native hook client, or the `sh -c` that runs one - the client answers in a
            # few ms, often between two 20 ms polls, so only its shell is seen (the outer node of a relaunched
            # CLI starts nothing but its child node: a command's shell here still tells the two apart).
            assert [pid for pid, parent in parents.items()
                    if parent == watched and (seen[pid].startswith("python") or seen[pid] in HOOK_RUNNERS)], (
                watched, seen, parents)
        return started[0]

    def suspend_requests(self) -> list[dict[str, Any]]:
        return [action for action in self.lidguard.actions() if action["action"] == "suspend-requested"]

    def wait_until(self, predicate: Callable[[], Any], timeout: float = 30.0) -> bool:
        return bool(self.lidguard.wait_until(predicate, timeout=timeout))

    def hook_calls(self) -> list[dict[str, Any]]:
        if not self.hook_log.exists():
            return []
        return [json.loads(line) for line in self.hook_log.read_text().splitlines() if line.strip()]

    def hook_command(self, label: str, *options: str) -> str:
        return " ".join(shlex.quote(part) for part in (sys.executable, str(HOOK_SCRIPT), label, *options))

    # -- headless turns ----------------------------------------------------------------------------
    def headless_command(self, prompt: str = PROMPT) -> list[str]:
        cli = str(self.cli)
        if self.name == "claude":
            return [cli, "-p", prompt]
        if self.name == "codex":
            return [cli, "exec", "--skip-git-repo-check", prompt]
        if self.name == "copilot":
            return [cli, "-p", prompt, "--allow-all-tools"]
        if self.name == "gemini":  # --yolo: headless registers no shell tool without it
            return [cli, "-m", GEMINI_MODEL, "--yolo", "-p", prompt]
        if self.name == "qwen":
            return [cli, "--yolo", prompt]
        if self.name == "droid":  # its default read-only autonomy runs the fake model's low-risk echo
            return [cli, "exec", "-m", "fake-model", prompt]
        if self.name == "openhands":
            return [cli, "--headless", "--override-with-envs", "-t", prompt]
        if self.name == "auggie":
            return [cli, "-p", prompt]
        return [cli, "run", prompt]

    def run_headless(self, command: list[str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """One headless turn; the agent's process tree is watched while it runs."""
        process = subprocess.Popen(command or self.headless_command(), env=self.env, cwd=self.work, text=True,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        self.agent_pid = process.pid
        self.watch = ProcessWatch(process.pid).start()
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            stdout, stderr = process.communicate()
            raise AssertionError(f"{self.name} did not finish within {timeout} s\nstdout: {stdout}\n"
                                 f"stderr: {stderr[-4000:]}") from None
        finally:
            self.watch.stop()
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def describe(self, result: subprocess.CompletedProcess[str] | None = None) -> str:
        """What to print when an assertion fails: the CLI's output, the hook logs, the session log."""
        parts = []
        if result is not None:
            parts.append(f"exit {result.returncode}\nstdout: {result.stdout[-3000:]}\nstderr: {result.stderr[-3000:]}")
        parts.append("model requests: " + ", ".join(r.path for r in self.model.model_requests()))
        parts.append("session log events: " + ", ".join(str(e.get("EventName")) for e in self.session_log()))
        for log in sorted(self.lidguard.data_dir.glob("*hook*.log")):
            parts.append(f"{log.name}: {log.read_text()[-3000:]}")
        return "\n".join(parts)

    # -- interactive turns (tmux) ------------------------------------------------------------------
    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([require_tmux(), "-S", str(self.home / "tmux.sock"), *args], env=self.env,
                                text=True, capture_output=True, timeout=30)
        if check and result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {result.stderr}")
        return result

    def start_interactive(self, command: list[str]) -> int:
        """The CLI in a private tmux server (its own socket, this test's environment); the pane's pid.
        The TUI runs as a person at a terminal runs it: without ``CI`` (``.ci/run`` exports CI=true, and
        Gemini CLI then exits at once instead of drawing its interactive UI)."""
        shell_command = f"cd {shlex.quote(str(self.work))} && unset CI && exec {shlex.join(command)}"
        # The server's own config (not the machine's): a pane that ends stays, so a CLI that dies at
        # start is reported with its screen and exit status instead of "no server running".
        config = self.home / "tmux.conf"
        config.write_text("set -g remain-on-exit on\n")
        self.tmux("-f", str(config), "new-session", "-d", "-x", "200", "-y", "50", "-s", "agent", shell_command)
        state = self.tmux("display-message", "-p", "-t", "agent", "#{pane_pid} #{pane_dead} #{pane_dead_status}")
        pid, dead, status = (state.stdout.split() + ["", ""])[:3]
        if dead == "1":
            raise AssertionError(f"{command[0]} ended at once in its tmux pane (exit {status}):\n{self.screen()}")
        pane = int(pid)
        self.agent_pid = pane
        self.watch = ProcessWatch(pane).start()
        return pane

    def interactive_ended(self) -> bool:
        """The CLI in the pane has exited (its pane stays, dead: remain-on-exit; or the server is gone)."""
        state = self.tmux("display-message", "-p", "-t", "agent", "#{pane_dead}", check=False)
        return state.returncode != 0 or state.stdout.strip() == "1"

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "agent", check=False).stdout

    def send_keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "agent", *keys)

    def wait_screen(self, text: str, timeout: float = 60.0) -> bool:
        return self.wait_until(lambda: text in self.screen(), timeout=timeout)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.stop()
            self.watch.poll()  # every descendant now, before tmux's end re-parents them away from the root
        if (self.home / "tmux.sock").exists():
            self.tmux("kill-server", check=False)
        if self.watch is not None:
            time.sleep(0.2)  # tmux's SIGHUP first: what ends on its own ends cleanly
            self.watch.kill_survivors(self.home)
        if self.tmux_tmpdir is not None:  # OpenHands' terminal server outlives the CLI (ppid 1)
            subprocess.run([require_tmux(), "-L", "openhands", "kill-server"], env=self.env, capture_output=True,
                           timeout=30)
            shutil.rmtree(self.tmux_tmpdir, ignore_errors=True)
