"""The acceptance of the foundation issue, with real processes and the fake platform."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest


def test_start_status_stop_and_idle_exit(lidguard):
    started = lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert "Started Claude:s1." in started.stdout
    assert lidguard.runtime_pids(), "start must auto-start a runtime"
    status = lidguard.json("status")
    assert status["runtimeRunning"] is True
    assert status["activeSessionCount"] == 1
    [session] = status["sessions"]
    assert session["sessionIdentifier"] == "s1" and session["provider"] == "Claude"
    assert session["softLockState"] == "None"
    for key in ("providerName", "softLockReason", "watchedProcessIdentifier", "workingDirectory",
                "startedAtUtc", "lastActivityAtUtc"):
        assert key in session
    for key in ("lidSwitchState", "visibleDisplayMonitorCount", "settings"):
        assert key in status
    assert session["startedAtUtc"].endswith("Z")

    lidguard.run("settings", "--server-runtime-cleanup-delay-minutes", "off", check=True)
    assert "Stopped Claude:s1." in lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True).stdout
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids()), "runtime must exit when idle with cleanup off"
    second = lidguard.run("stop", "--provider", "claude", "--session", "s1")
    assert second.returncode == 1 and second.stderr.strip() == "lidguard: LidGuard runtime is not running."
    status = lidguard.json("status")
    assert status["runtimeRunning"] is False and status["activeSessionCount"] == 0


def test_second_stop_while_running_is_harmless(lidguard):
    lidguard.run("start", "--provider", "codex", "--session", "x", check=True)
    lidguard.run("stop", "--provider", "codex", "--session", "x", check=True)
    again = lidguard.run("stop", "--provider", "codex", "--session", "x", check=True)
    assert "already stopped" in again.stdout


def test_commands_other_than_start_never_start_a_runtime(lidguard):
    for args in (["status"], ["stop", "--provider", "claude", "--session", "s"], ["cleanup-orphans"],
                 ["remove-session", "--all"], ["settings", "--session-timeout-minutes", "5"]):
        lidguard.run(*args)
    assert not lidguard.runtime_pids()


def test_a_second_run_server_exits_at_once(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    second = lidguard.run("run-server", timeout=10)
    assert second.returncode == 0
    assert len(lidguard.runtime_pids()) == 1


@pytest.mark.slow
def test_one_hundred_concurrent_clients_lose_and_duplicate_nothing(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "anchor", check=True)
    sessions = [f"s{index}" for index in range(50)]

    def start(name: str) -> int:
        return lidguard.run("start", "--provider", "codex", "--session", name, timeout=60).returncode

    def stop(name: str) -> int:
        return lidguard.run("stop", "--provider", "codex", "--session", name, timeout=60).returncode

    with ThreadPoolExecutor(max_workers=100) as pool:
        results = list(pool.map(start, sessions + sessions))  # 100 concurrent starts, each id twice
    assert results == [0] * 100
    status = lidguard.json("status")
    ids = sorted(s["sessionIdentifier"] for s in status["sessions"] if s["provider"] == "Codex")
    assert ids == sorted(sessions), "every session exactly once"
    with ThreadPoolExecutor(max_workers=100) as pool:
        results = list(pool.map(stop, sessions + sessions))  # 100 concurrent stops, each id twice
    assert results == [0] * 100
    status = lidguard.json("status")
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["anchor"]
    stopped = [json.loads(line) for line in (lidguard.data_dir / "session-execution.log").read_text().splitlines()]
    assert sum(1 for entry in stopped if entry["EventName"] == "session-stopped") == 50


def test_kill_9_while_lid_policy_is_changed_restores_it_exactly_once(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    backup = lidguard.data_dir / "pending-lid-action-backup.json"
    assert backup.exists()
    assert [a["action"] for a in lidguard.actions()] == ["protection-applied", "lid-policy-changed"]
    for pid in lidguard.runtime_pids():
        os.kill(pid, signal.SIGKILL)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids())
    status = lidguard.run("status", check=True)
    assert "not running" in status.stdout
    assert not backup.exists()
    lidguard.run("status", check=True)
    lidguard.run("current-lid-state", check=True)
    restores = [a for a in lidguard.actions() if a["action"] == "lid-policy-restored"]
    assert len(restores) == 1
    assert restores[0]["alternatingCurrentAction"] == 1 and restores[0]["directCurrentAction"] == 1


def _raw_request(path, payload: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data.split(b"\n")[0])


def test_malformed_oversized_and_unknown_requests_get_errors_and_the_runtime_survives(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    cases = [
        (b"\n", "empty request"),
        (b"{not json\n", "invalid JSON"),
        (b"[1,2]\n", "JSON object"),
        (b'{"v": 7, "Command": "status"}\n', "protocol version"),
        (b'{"v": 1, "Command": "launch-missiles"}\n', "Unsupported command"),
        (b'{"v": 1, "Command": "status", "pad": "' + b"x" * (1024 * 1024 + 10) + b'"}\n', "larger than"),
        (b'{"v": 1, "Command": "status"', "incomplete request"),
    ]
    for payload, expected in cases:
        response = _raw_request(lidguard.socket, payload)
        assert response["Succeeded"] is False and expected in response["Message"], (payload[:40], response)
    assert lidguard.json("status")["activeSessionCount"] == 1


@pytest.mark.root_only
def test_socket_and_folder_are_private_and_other_users_are_refused(lidguard):
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    assert oct(lidguard.socket.stat().st_mode & 0o777) == "0o600"
    assert oct(lidguard.socket.parent.stat().st_mode & 0o777) == "0o700"
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user")
    # Open the way on purpose, so only the runtime's own peer check stands between.
    folder = lidguard.socket.parent
    while True:
        os.chmod(folder, 0o711)
        if folder == lidguard.home or folder == folder.parent:
            break
        folder = folder.parent
    os.chmod(lidguard.socket, 0o666)
    client = (
        "import json,socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "s.sendall(b'{\"v\":1,\"Command\":\"status\"}\\n'); print(s.recv(65536).decode())\n"
    )
    # The system Python: a pyenv interpreter under /root is not executable by another user.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    result = subprocess.run([python, "-c", client, str(lidguard.socket)], user=65534, capture_output=True,
                            text=True, timeout=20, cwd="/")
    assert "other users are refused" in result.stdout, result.stderr
    assert lidguard.json("status")["activeSessionCount"] == 1


def test_watched_process_exit_ends_the_session(lidguard):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lidguard.run("start", "--provider", "claude", "--session", "w", "--parent-pid", str(sleeper.pid), check=True)
        assert lidguard.json("status")["sessions"][0]["watchedProcessIdentifier"] == sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()
    assert lidguard.wait_until(lambda: lidguard.json("status")["activeSessionCount"] == 0)


def test_closed_lid_last_stop_suspends_through_the_fake_platform(lidguard):
    lidguard.set_machine(lid="closed", displays=[{"name": "eDP-1", "internal": True}])
    lidguard.run("settings", "--post-stop-suspend-delay-seconds", "0", check=True)
    lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
    lidguard.run("stop", "--provider", "claude", "--session", "s1", check=True)
    assert lidguard.wait_until(lambda: any(a["action"] == "suspend-requested" for a in lidguard.actions()))
    history = lidguard.json("suspend-history")
    assert history["entries"][0]["Reason"] == "Completed" and history["entries"][0]["Succeeded"] is True
    human = lidguard.run("suspend-history", check=True).stdout
    assert "mode=Sleep reason=Completed succeeded=True" in human


def test_concurrent_first_starts_share_one_auto_started_runtime(lidguard):
    names = [f"race{index}" for index in range(20)]
    with ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(
            lambda name: lidguard.run("start", "--provider", "claude", "--session", name, timeout=60).returncode,
            names))
    assert codes == [0] * 20
    # Launches that lost the race exit at once (exit 0, lock held); the last ones may still be starting.
    assert lidguard.wait_until(lambda: len(lidguard.runtime_pids()) == 1, timeout=30), lidguard.runtime_pids()
    assert sorted(s["sessionIdentifier"] for s in lidguard.json("status")["sessions"]) == sorted(names)
