"""`lidguard <provider>-hook` as real processes against a real runtime (fake platform): stdlib only, the
agent found in the hook's own ancestry, closed-lid decisions, exit 0 with a dead or hung runtime,
a few hundred generated payloads, `lidguard hook-events`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lidguard.hooks.runner import HOOK_BUDGET_SECONDS

from .conftest import ENTRY, HOOK_COMMAND, assert_valid_output, run_hook_process
from .test_hook_fuzz import arguments, payloads

HEAVY = {"pydantic", "pydantic_core", "anyio", "httpx", "trio", "argparse", "cffi", "mcp", "tomlkit",
         "watchfiles"}
PROBE = (
    "import json, os, sys\n"
    "from lidguard.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "with open(os.environ['H11_MODULES_OUT'], 'w') as handle:\n"
    "    json.dump(sorted(sys.modules), handle)\n"
    "raise SystemExit(code)\n"
)
PROMPT = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "run echo hello"}
TOOL = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
PERMISSION = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "PermissionRequest", "tool_name": "Bash"}
STOP = {"session_id": "s1", "cwd": "/w/app", "hook_event_name": "Stop", "stop_hook_active": False,
        "last_assistant_message": "All done: hello"}
CLOSED = {"lid": "closed", "displays": [{"name": "eDP-1", "internal": True}]}


def sessions(lidguard):
    return {session["sessionIdentifier"]: session for session in lidguard.json("status")["sessions"]}


def start_runtime(lidguard):
    assert lidguard.wait_until(lambda: run_hook_process(lidguard, "claude", json.dumps(PROMPT)).returncode == 0
                               and "s1" in sessions(lidguard), timeout=60)


def test_a_real_hook_run_loads_only_the_standard_library(lidguard):
    out = lidguard.home / "modules.json"
    env = {**lidguard.env, "H11_MODULES_OUT": str(out)}
    lidguard.set_machine(**CLOSED)
    runs = [("claude-hook", PROMPT), ("claude-hook", TOOL), ("claude-hook", PERMISSION), ("claude-hook", STOP),
            ("copilot-hook", {"sessionId": "c", "toolName": "ask_user"}), ("codex-hook", "garbage"),
            ("gemini-hook", {**TOOL, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command"}),
            ("qwen-hook", PERMISSION)]
    for command, payload in runs:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        extra = ["--event", "preToolUse"] if command == "copilot-hook" else []
        result = subprocess.run([sys.executable, "-c", PROBE, command, *extra], env=env, input=data, text=True,
                                capture_output=True, timeout=60)
        assert result.returncode == 0 and result.stderr == "", (command, result.stderr)
        modules = set(json.loads(out.read_text()))
        heavy = sorted(name for name in modules if name.split(".")[0] in HEAVY
                       or name.startswith(("lidguard.settings", "lidguard.runtime", "lidguard.cli.full")))
        assert heavy == [], (command, heavy)
        assert "lidguard.hooks.runner" in modules
    assert "s1" not in sessions(lidguard)


def test_session_flow_with_the_agent_found_in_the_hook_ancestry(lidguard, tmp_path):
    # A stand-in `claude` (comm "claude") runs the hook through `sh -c` as Claude Code does.
    agent = tmp_path / "bin" / "claude"
    agent.parent.mkdir()
    agent.write_text('#!/bin/sh\necho $$ > "$AGENT_PID_FILE"\n/bin/sh -c "$1"\nexec sleep 120\n')
    agent.chmod(0o755)
    pid_file = tmp_path / "agent.pid"
    (tmp_path / "prompt.json").write_text(json.dumps(PROMPT))
    command = f'{sys.executable} {" ".join(ENTRY)} claude-hook < {tmp_path / "prompt.json"}'
    env = {**lidguard.env, "AGENT_PID_FILE": str(pid_file)}
    process = subprocess.Popen([str(agent), command], env=env, stdout=subprocess.DEVNULL)
    try:
        assert lidguard.wait_until(lambda: "s1" in sessions(lidguard), timeout=60)
        session = sessions(lidguard)["s1"]
        assert session["provider"] == "Claude" and session["workingDirectory"] == "/w/app"
        assert session["watchedProcessIdentifier"] == int(pid_file.read_text()) == process.pid
    finally:
        process.kill()
        process.wait()
    # The agent is gone: the runtime ends the session by itself (the watched process exited).
    assert lidguard.wait_until(lambda: "s1" not in sessions(lidguard), timeout=20)
    assert run_hook_process(lidguard, "claude", json.dumps(PROMPT)).returncode == 0
    assert run_hook_process(lidguard, "claude", json.dumps({**TOOL, "hook_event_name": "Notification",
                                                            "notification_type": "permission_prompt"})).returncode == 0
    assert sessions(lidguard)["s1"]["softLockState"] == "SoftLocked"
    assert run_hook_process(lidguard, "claude", json.dumps(TOOL)).returncode == 0
    assert sessions(lidguard)["s1"]["softLockState"] == "None"
    result = run_hook_process(lidguard, "claude", json.dumps(STOP))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "s1" not in sessions(lidguard)
    log = lidguard.data_dir / "claude-hook-events.log"
    assert "command=stop" in log.read_text() and "succeeded=true" in log.read_text()


@pytest.mark.parametrize(("provider", "payload", "args", "decision", "expected"), [
    ("claude", PERMISSION, (), "Deny", {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "deny", "interrupt": True}}}),
    ("codex", PERMISSION, (), "Allow", {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                               "decision": {"behavior": "allow"}}}),
    ("copilot", {"sessionId": "s1", "toolName": "bash"}, ("--event", "permissionRequest"), "Allow",
     {"behavior": "allow"}),
    ("opencode", {"sessionID": "s1", "permission": "bash"}, ("--event", "permission.asked"), "Deny",
     {"behavior": "deny"}),
    ("claude", {**PERMISSION, "hook_event_name": "Elicitation"}, (), "Deny",
     {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "cancel"}}),
    ("copilot", {"sessionId": "s1", "toolName": "ask_user"}, ("--event", "preToolUse"), "Deny",
     {"permissionDecision": "deny"}),
    ("qwen", PERMISSION, (), "Allow", {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                              "decision": {"behavior": "allow"}}}),
    ("gemini", {**TOOL, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command"}, (), "Deny",
     {"decision": "deny"}),
])
def test_closed_lid_decisions_through_the_real_runtime(lidguard, provider, payload, args, decision, expected):
    start_runtime(lidguard)
    lidguard.run("settings", "--closed-lid-permission-request-decision", decision.lower(), check=True)
    lidguard.set_machine(lid="open")
    result = run_hook_process(lidguard, provider, json.dumps(payload), *args)
    assert (result.returncode, result.stdout) == (0, b"")
    lidguard.set_machine(**CLOSED)  # the internal panel stays "connected": it never blocks a decision
    result = run_hook_process(lidguard, provider, json.dumps(payload), *args)
    output = assert_valid_output(provider, result.stdout.decode())
    assert result.returncode == 0 and output is not None
    inner = output.get("hookSpecificOutput", {}).get("decision", output.get("hookSpecificOutput", output))
    expected_inner = expected.get("hookSpecificOutput", {}).get("decision", expected.get("hookSpecificOutput",
                                                                                         expected))
    assert expected_inner.items() <= inner.items()
    lidguard.set_machine(lid="closed", displays=[{"name": "HDMI-1", "internal": False}])
    assert run_hook_process(lidguard, provider, json.dumps(payload), *args).stdout == b""


def test_ask_prints_nothing_and_soft_locks_the_session(lidguard):
    start_runtime(lidguard)
    lidguard.run("settings", "--closed-lid-permission-request-decision", "ask", check=True)
    lidguard.set_machine(**CLOSED)
    result = run_hook_process(lidguard, "claude", json.dumps(PERMISSION))
    assert (result.returncode, result.stdout) == (0, b"")
    session = sessions(lidguard)["s1"]
    assert (session["softLockState"], session["softLockReason"]) == ("SoftLocked", "closed_lid_permission_request_ask")


def test_a_dead_runtime_costs_a_hook_at_most_the_connect_window(lidguard, load_allowance):
    bound = HOOK_BUDGET_SECONDS + load_allowance()
    for provider, payload, args in (("claude", TOOL, ()), ("claude", PERMISSION, ()), ("claude", STOP, ()),
                                    ("copilot", {"sessionId": "s"}, ("--event", "permissionRequest"))):
        began = time.monotonic()
        result = run_hook_process(lidguard, provider, json.dumps(payload), *args)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
        assert time.monotonic() - began < bound
    assert lidguard.runtime_pids() == []  # only start events launch the runtime
    assert "runtimeUnavailable=true" in (lidguard.data_dir / "claude-hook-events.log").read_text()


def test_a_hung_runtime_is_waited_for_a_bounded_time(lidguard, load_allowance):
    lidguard.socket.parent.mkdir(parents=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(lidguard.socket))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accepts, reads, never answers
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        bound = HOOK_BUDGET_SECONDS + load_allowance()
        for payload in (TOOL, PERMISSION):
            began = time.monotonic()
            result = run_hook_process(lidguard, "claude", json.dumps(payload))
            elapsed = time.monotonic() - began
            assert (result.returncode, result.stdout) == (0, b"")
            assert elapsed < bound, (elapsed, bound)  # the budget + interpreter start-up at this load
        assert accepted
    finally:
        stop.set()
        thread.join()
        for connection in accepted:
            connection.close()
        listener.close()


@pytest.mark.parametrize("data", [b"", b"\x00\xff", b"{", b"[]", b"null", b'{"hook_event_name": 5}',
                                  b'{"hook_event_name": "UnknownEvent", "session_id": "x"}'])
def test_garbage_stdin_exits_zero_silently(lidguard, data):
    result = run_hook_process(lidguard, "claude", data)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_closed_stdin_and_stdout_and_unknown_options(lidguard):
    command = [sys.executable, *ENTRY, "copilot-hook", "--bogus", "--event"]
    result = subprocess.run(command, env=lidguard.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    result = subprocess.run(f"{sys.executable} {' '.join(ENTRY)} codex-hook <&- >&- 2>&-", shell=True,
                            env=lidguard.env, timeout=60)
    assert result.returncode == 0


@pytest.mark.timeout(600)
@pytest.mark.parametrize("provider", ["claude", "codex", "copilot", "opencode", "gemini", "qwen"])
def test_generated_payloads_through_real_processes(lidguard, provider):
    start_runtime(lidguard)
    lidguard.set_machine(**CLOSED)
    slowest = [0.0]

    @settings(max_examples=75, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(stdin=payloads(provider), args=arguments(provider), closed=st.booleans())
    def check(stdin: bytes, args: list[str], closed: bool) -> None:
        began = time.monotonic()
        result = subprocess.run([sys.executable, *ENTRY, HOOK_COMMAND[provider], *args], env=lidguard.env,
                                input=stdin, capture_output=True, timeout=60)
        slowest[0] = max(slowest[0], time.monotonic() - began)
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        assert_valid_output(provider, result.stdout.decode("utf-8"))

    check()
    assert slowest[0] < HOOK_BUDGET_SECONDS + 10, slowest  # start events may wait for the runtime's reply


def test_hook_events_command(lidguard):
    result = lidguard.run("hook-events", "--provider", "copilot")
    assert result.returncode == 0 and "No copilot hook events recorded yet" in result.stdout
    for index in range(3):
        run_hook_process(lidguard, "copilot", json.dumps({"sessionId": f"c{index}"}), "--event", "sessionStart")
    result = lidguard.run("hook-events", "--provider", "github-copilot", "--count", "2")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 2
    assert "session=c1" in lines[0] and "session=c2" in lines[1] and "event=sessionStart" in lines[1]
    assert lidguard.run("hook-events", "--provider", "x").returncode == 1
    from lidguard.agents import AGENTS

    *head, last = AGENTS  # every registered agent, in registry order
    assert lidguard.run("hook-events").stderr.strip() == (
        f"lidguard: A provider is required. Use {', '.join(head)}, or {last}.")
    assert lidguard.run("hook-events", "--provider", "claude", "--count", "-1").returncode == 1
    help_text = lidguard.run("help").stdout
    assert "hook-events" in help_text and "opencode-hook" in help_text
    assert "--event" in lidguard.run("copilot-hook", "--help").stdout


# Issue 39 item 4: an agent that never closes the hook's stdin. One tool event per provider (none starts
# or launches a runtime), written whole and left open; and nothing written at all.
OPEN_STDIN_EVENTS = {
    "claude": (TOOL, ()),
    "codex": (TOOL, ()),
    "copilot": ({"sessionId": "s1", "toolName": "bash"}, ("--event", "preToolUse")),
    "opencode": ({"sessionID": "s1", "tool": "bash"}, ("--event", "tool.execute.before")),
    "gemini": ({**TOOL, "hook_event_name": "BeforeTool", "tool_name": "run_shell_command"}, ()),
    "qwen": (TOOL, ()),
}


@pytest.mark.parametrize("written", [True, False], ids=["payload-written", "nothing-written"])
@pytest.mark.parametrize("provider", list(OPEN_STDIN_EVENTS))
def test_a_stdin_held_open_ends_the_hook_within_its_budget(lidguard, load_allowance, provider, written):
    payload, args = OPEN_STDIN_EVENTS[provider]
    bound = HOOK_BUDGET_SECONDS + load_allowance()
    process = subprocess.Popen([sys.executable, *ENTRY, HOOK_COMMAND[provider], *args], env=lidguard.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        began = time.monotonic()
        if written:
            process.stdin.write(json.dumps(payload).encode())
            process.stdin.flush()  # ... and never closed
        try:
            code = process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{provider}-hook still waits for stdin after {bound:.1f} s")
        elapsed = time.monotonic() - began
        assert code == 0 and elapsed < bound, (code, elapsed, bound)
        assert_valid_output(provider, process.stdout.read().decode("utf-8"))
        assert process.stderr.read() == b""
        log = (lidguard.data_dir / f"{provider}-hook-events.log").read_text()
        if written:  # what arrived was acted on: the event was received and sent (no runtime: unavailable)
            assert "received" in log and "Ignored the hook input" not in log, log
        else:
            assert "Ignored the hook input: stdin is empty" in log, log
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
        process.stdout.close()
        process.stderr.close()


def test_a_stopped_runtime_costs_every_hook_at_most_its_budget_and_status_says_so(lidguard, load_allowance):
    # Issue 39 item 8: a runtime that holds its lock and its socket but never answers (SIGSTOP): the
    # kernel still accepts connections on its listening socket, nothing ever replies.
    start_runtime(lidguard)
    [pid] = lidguard.runtime_pids()
    os.kill(pid, signal.SIGSTOP)
    try:
        for name, payload in (("tool", TOOL), ("permission", PERMISSION), ("prompt", PROMPT), ("stop", STOP)):
            bound = HOOK_BUDGET_SECONDS + load_allowance()  # this run's load, measured beside each hook
            began = time.monotonic()
            result = run_hook_process(lidguard, "claude", json.dumps(payload))
            elapsed = time.monotonic() - began
            assert (result.returncode, result.stderr) == (0, b""), (name, result)
            assert_valid_output("claude", result.stdout.decode("utf-8"))
            assert elapsed < bound, (name, elapsed, bound)
        bound = HOOK_BUDGET_SECONDS + load_allowance()
        began = time.monotonic()
        result = lidguard.run("status")
        elapsed = time.monotonic() - began
        assert result.returncode == 1 and result.stdout == "", result
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"lidguard: LidGuard runtime not answering (pid {pid}): "), result.stderr
        assert elapsed < bound, (elapsed, bound)
        result = lidguard.run("status", "--json")
        assert result.returncode == 1 and f"not answering (pid {pid})" in result.stderr, result
    finally:
        os.kill(pid, signal.SIGCONT)
    assert lidguard.wait_until(lambda: lidguard.run("status").returncode == 0)


NEVER_READY = (
    "import fcntl, os, sys, time\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "os.ftruncate(fd, 0)\n"
    "os.write(fd, str(os.getpid()).encode())  # '<pid>', never '<pid> ready'\n"
    "print('held', flush=True)\n"
    "time.sleep(600)\n"
)


def test_a_runtime_that_holds_its_lock_and_never_gets_ready_costs_hooks_at_most_their_budget(
        lidguard, load_allowance):
    # Issue 39 item 8: the lock held with '<pid>' and no socket, for good (a runtime stuck while starting).
    lidguard.data_dir.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", NEVER_READY, str(lidguard.data_dir / "runtime.lock")],
                              stdout=subprocess.PIPE, env=lidguard.env)
    try:
        assert holder.stdout.readline() == b"held\n"
        for name, payload in (("prompt", PROMPT), ("tool", TOOL), ("permission", PERMISSION)):
            bound = HOOK_BUDGET_SECONDS + load_allowance()  # this run's load, measured beside each hook
            began = time.monotonic()
            result = run_hook_process(lidguard, "claude", json.dumps(payload))
            elapsed = time.monotonic() - began
            assert (result.returncode, result.stderr) == (0, b""), (name, result)
            assert elapsed < bound, (name, elapsed, bound)
        assert lidguard.runtime_pids() == []  # nothing else was started beside the holder
        bound = HOOK_BUDGET_SECONDS + load_allowance()
        began = time.monotonic()
        result = lidguard.run("status")
        assert time.monotonic() - began < bound
        [line] = result.stderr.strip().splitlines()
        assert result.returncode == 1 and line.startswith(
            f"lidguard: LidGuard runtime not answering (pid {holder.pid}): "), result
        assert "is running" in line and "does not answer" in line, line
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
