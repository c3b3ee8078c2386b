"""Issue 35.5: doctor and status name the sleep blockers an agent holds now (the fake platform's
``otherBlockers``), whether lidguard's suspend waits for them, and doctor lists each agent's own
keep-awake from its config."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from lidguard.cli.agent_keep_awake import live_holders, watched_from_reply
from lidguard.platform.api import SuspendBlocker

CLAUDE = {"who": "Claude Code", "why": "Claude is working", "what": "sleep:idle", "mode": "block"}
BACKUP = {"who": "backup", "why": "nightly", "pid": 4242, "what": "sleep"}


@pytest.fixture
def qwen_process(tmp_path):
    """A running process whose program is named ``qwen`` (the agent by ancestry, not by its who)."""
    program = tmp_path / "qwen"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    process = subprocess.Popen([str(program), "120"])
    yield process.pid
    process.kill()
    process.wait()


def test_doctor_names_what_agents_hold_now_and_what_their_configs_make_them_hold(lidguard, qwen_process):
    qwen = {"who": "systemd-inhibit", "why": "a model response", "pid": qwen_process, "what": "sleep"}
    lidguard.set_machine(otherBlockers=[CLAUDE, BACKUP, qwen])
    (lidguard.home / ".codex").mkdir()
    (lidguard.home / ".codex" / "config.toml").write_text("[features]\nprevent_idle_sleep = true\n")
    (lidguard.home / ".qwen").mkdir()
    (lidguard.home / ".qwen" / "settings.json").write_text("{not json")
    result = lidguard.run("doctor")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("Agents' own keep-awake:") + 1
    end = next(index for index in range(start, len(lines)) if not lines[index].startswith("  "))
    section = lines[start:end]
    assert ("  Holding now: Claude Code (who 'Claude Code') holds a sleep:idle block inhibitor: while it holds it "
            "after its session ends, lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)") in section
    assert (f"  Holding now: Qwen Code (pid {qwen_process}) holds a sleep block inhibitor: while it holds it after "
            "its session ends, lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)") in section
    assert not any("backup" in line for line in section)  # not an agent: the foreign-blocker work names it
    configured = {line.split(": ", 1)[0].strip(): line for line in section if not line.startswith("  Holding")}
    assert "caffeinate -i -t 300" in configured["Claude Code"]
    assert configured["Codex"].startswith("  Codex: on ([features].prevent_idle_sleep in ")
    assert "cannot block lidguard's suspend" in configured["Codex"]
    assert "not valid JSON" in configured["Qwen Code"] and "its default, on" in configured["Qwen Code"]
    assert len(section) == 2 + 4 and lines[-1].startswith("Verdict: ")

    report = json.loads(lidguard.run("doctor", "--json", check=True).stdout)["agentKeepAwake"]
    assert [(holder["agent"], holder["pid"]) for holder in report["live"]] == [("Claude Code", None),
                                                                              ("Qwen Code", qwen_process)]
    by_agent = {item["agent"]: item for item in report["configured"]}
    assert by_agent["Codex"]["enabled"] is True and by_agent["Codex"]["canBlockSuspend"] is False
    assert by_agent["Claude Code"]["canBlockSuspend"] is True


def test_doctor_says_when_no_agent_holds_anything(lidguard):
    lidguard.set_machine(otherBlockers=[BACKUP])
    result = lidguard.run("doctor")
    assert "  Holding now: no agent holds a sleep blocker" in result.stdout.splitlines()


def test_status_shows_an_agents_blocker_and_what_the_setting_makes_of_it(lidguard):
    lidguard.set_machine(otherBlockers=[{**CLAUDE, "who": "Claude Code\x1b[31m"}, BACKUP])
    result = lidguard.run("status", check=True)
    line = next(line for line in result.stdout.splitlines() if line.startswith("Agent keep-awake: "))
    assert "\x1b" not in line and "\\x1b" in line  # another program's who is escaped
    assert line.endswith("lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)")
    assert json.loads(lidguard.run("status", "--json", check=True).stdout)["agentKeepAwake"][0]["agent"] == \
        "Claude Code"
    settings = lidguard.data_dir / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"SuspendIgnoresOtherBlockers": True}))
    result = lidguard.run("status", check=True)
    assert any(line.startswith("Agent keep-awake: Claude Code") and line.endswith(
        "lidguard's suspend asks the OS to ignore it (SuspendIgnoresOtherBlockers is on)")
        for line in result.stdout.splitlines()), result.stdout


def test_status_without_an_agents_blocker_adds_no_line(lidguard):
    lidguard.set_machine(otherBlockers=[BACKUP])
    result = lidguard.run("status", check=True)
    assert "Agent keep-awake" not in result.stdout
    assert json.loads(lidguard.run("status", "--json", check=True).stdout)["agentKeepAwake"] == []


# -- in process: the watched session's agent, a failing listing ------------------------------------------
class _Platform:
    def __init__(self, blockers=None, error=None, chains=None):
        self._blockers, self._error, self._chains = blockers or [], error, chains or {}
        self.suspend = self
        self.process = self

    def list_blockers(self):
        if self._error is not None:
            raise self._error
        return self._blockers

    def read_ancestry(self, pid):
        if pid not in self._chains:
            raise ProcessLookupError(pid)
        return self._chains[pid]


def test_a_blocker_under_a_watched_session_names_that_session():
    from lidguard.platform.api import ProcessInfo

    reply = {"Sessions": [{"Provider": "Codex", "SessionIdentifier": "s-1", "WatchedProcessIdentifier": 77},
                          {"Provider": "Claude", "SessionIdentifier": "s-2", "WatchedProcessIdentifier": 0},
                          "not a session"]}
    watched = watched_from_reply(reply)
    assert watched == {77: "Codex:s-1"}
    chain = [ProcessInfo(90, 77, "systemd-inhibit", ["systemd-inhibit"]), ProcessInfo(77, 1, "codex", ["codex"])]
    platform = _Platform([SuspendBlocker("systemd-inhibit", "turn", 90, 1000, "sleep", "block"),
                          SuspendBlocker("Codex", "idle only", 91, 1000, "idle", "block")], chains={90: chain})
    holders = live_holders(platform, watched, ignores_other_blockers=False)
    assert [holder["text"] for holder in holders] == [
        "Codex session s-1 (pid 90) holds a sleep block inhibitor: while it holds it after its session ends, "
        "lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is off)"]  # idle-only: no suspend waits


@pytest.mark.parametrize("error", [OSError("no bus"), RuntimeError("bug")])
def test_a_listing_that_fails_names_nothing(error):
    assert live_holders(_Platform(error=error), {}, ignores_other_blockers=False) == []


def test_a_macos_assertion_and_a_windows_request_read_as_such():
    platform = _Platform([SuspendBlocker("caffeinate", "", 5, None, "PreventUserIdleSystemSleep", "assertion"),
                          SuspendBlocker("qwen.exe", "", None, None, "SYSTEM", "system")])
    texts = [holder["text"] for holder in live_holders(platform, {}, ignores_other_blockers=True)]
    assert texts[0].startswith("Claude Code") is False
    assert texts == ["Qwen Code (who 'qwen.exe') holds a SYSTEM power request: lidguard's suspend asks the OS to "
                     "ignore it (SuspendIgnoresOtherBlockers is on)"]


def test_status_names_the_session_whose_watched_process_holds_the_blocker(lidguard, tmp_path):
    program = tmp_path / "helper"  # not an agent's name: only the watched session names it
    shutil.copy(shutil.which("sleep") or "/bin/sleep", program)
    process = subprocess.Popen([str(program), "120"])
    try:
        lidguard.set_machine(otherBlockers=[{"who": "systemd-inhibit", "why": "turn", "pid": process.pid,
                                             "what": "sleep"}])
        lidguard.run("start", "--provider", "codex", "--session", "s-7", "--parent-pid", str(process.pid),
                     check=True)
        status = json.loads(lidguard.run("status", "--json", check=True).stdout)
        assert status["runtimeRunning"] is True
        assert [(holder["agent"], holder["session"], holder["pid"]) for holder in status["agentKeepAwake"]] == [
            ("Codex", "s-7", process.pid)]
        assert (f"Agent keep-awake: Codex session s-7 (pid {process.pid}) holds a sleep block inhibitor: while it "
                "holds it after its session ends, lidguard's suspend waits for it (SuspendIgnoresOtherBlockers is "
                "off)") in lidguard.run("status", check=True).stdout.splitlines()
    finally:
        lidguard.run("stop-runtime", "--force")
        process.kill()
        process.wait()
