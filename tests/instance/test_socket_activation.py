"""Socket activation: ``systemd-socket-activate`` (what a ``lidguard.socket`` unit does) listens on the
runtime's socket path and starts ``lidguard run-server`` on the first connection with the socket as
descriptor 3 (LISTEN_FDS); the runtime answers on it, the CLI finds it, and when it exits the socket
file stays the service manager's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lidguard.runtime.activation import inherited_listener


def _activator() -> str:
    path = shutil.which("systemd-socket-activate")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("systemd-socket-activate is missing (apt package systemd)")
        pytest.skip("systemd-socket-activate is not installed")
    return path


def _listening(path: str) -> bool:
    """The activator binds (the file appears) before it listens, and a connect in between is refused:
    wait for the listening state in /proc/net/unix (flag __SO_ACCEPTCON), which does not connect - a
    connect would start the runtime before the test looks."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) >= 8 and fields[7] == path and int(fields[3], 16) & 0x10000:
            return True
    return False


def _ask(path: str, message: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(30)
        client.connect(path)
        client.sendall(json.dumps(message).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def test_the_runtime_serves_on_the_socket_systemd_passes_and_leaves_it_behind(lidguard: Any) -> None:
    activator = _activator()
    run_dir = lidguard.data_dir / "run"
    run_dir.mkdir(parents=True, mode=0o700)
    os.chmod(lidguard.data_dir, 0o700)
    path = str(lidguard.socket)
    # The activator hands its program only the variables named with -E (as a unit's Environment= would).
    names = [name for name in lidguard.env if name.startswith(("LIDGUARD_", "XDG_", "PYTHON")) or name in (
        "HOME", "PATH")]
    passed = [f"--setenv={name}" for name in names]
    manager = subprocess.Popen([activator, "-l", path, *passed, sys.executable, "-m", "lidguard", "run-server"],
                               env=lidguard.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert lidguard.wait_until(lambda: _listening(path), 30), "the manager listens first"
        assert not (lidguard.data_dir / "runtime.lock").exists(), "nothing runs before the first connection"
        reply = _ask(path, {"v": 1, "Command": "status"})
        assert reply["Succeeded"] is True
        assert lidguard.runtime_pids() == [manager.pid], "the runtime is the activated process"
        assert not (lidguard.data_dir / "launch.lock").exists(), "no client launched a runtime of its own"
        log = (lidguard.data_dir / "session-execution.log").read_text()
        [note] = [json.loads(line) for line in log.splitlines() if "ipc-socket-activation" in line]
        assert note["Succeeded"] is True
        identity = os.lstat(path).st_ino
        # The CLI finds the activated runtime and works through it.
        lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
        assert [s["sessionIdentifier"] for s in lidguard.json("status")["sessions"]] == ["s1"]
        assert lidguard.runtime_pids() == [manager.pid]
        lidguard.run("stop-runtime", "--force", check=True)
        assert manager.wait(timeout=30) == 0
        assert os.lstat(path).st_ino == identity, "the service manager's socket file is left in place"
    finally:
        if manager.poll() is None:
            manager.send_signal(signal.SIGKILL)
            manager.wait()


def test_a_cli_call_reaches_the_runtime_through_the_service_managers_socket(lidguard: Any) -> None:
    """The client connects before it looks at the lock: with the socket unit listening, the first
    session start activates the runtime through systemd instead of launching one of its own."""
    activator = _activator()
    (lidguard.data_dir / "run").mkdir(parents=True, mode=0o700)
    names = [name for name in lidguard.env if name.startswith(("LIDGUARD_", "XDG_", "PYTHON")) or name in (
        "HOME", "PATH")]
    manager = subprocess.Popen([activator, "-l", str(lidguard.socket), *[f"--setenv={n}" for n in names],
                                sys.executable, "-m", "lidguard", "run-server"],
                               env=lidguard.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert lidguard.wait_until(lambda: _listening(str(lidguard.socket)), 30)
        lidguard.run("start", "--provider", "claude", "--session", "s1", check=True)
        assert lidguard.runtime_pids() == [manager.pid]
        assert [a["action"] for a in lidguard.actions()][:2] == ["protection-applied", "lid-policy-changed"]
        lidguard.run("stop-runtime", "--force", check=True)
        assert manager.wait(timeout=30) == 0
    finally:
        if manager.poll() is None:
            manager.send_signal(signal.SIGKILL)
            manager.wait()


def test_descriptors_that_are_not_for_this_process_or_not_a_socket_are_ignored(tmp_path) -> None:
    environ = {"LISTEN_PID": "1", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "x"}
    assert inherited_listener(tmp_path / "s.sock", environ, pid=2) == (None, None)
    assert environ == {}, "never passed on to what the runtime starts"
    environ = {"LISTEN_PID": "2", "LISTEN_FDS": "many"}
    sock, note = inherited_listener(tmp_path / "s.sock", environ, pid=2)
    assert sock is None and note is not None and "not a number" in note
    # The first descriptor is some other socket (a UDP one here): closed, as it was taken, and bound instead.
    # Not by replacing descriptor 3 of this process: in a pytest-xdist worker that is the pipe the worker
    # reads its commands from (a worker once ended its session early, tests still pending, when this test
    # swapped it for a UDP socket).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
        passed = os.dup(other.fileno())
        sock, note = inherited_listener(tmp_path / "s.sock", {"LISTEN_PID": "2", "LISTEN_FDS": "1"}, pid=2,
                                        first_fd=passed)
        assert sock is None and note is not None and f"descriptor {passed} is not a listening" in note
        assert not _is_open(passed), "a descriptor it took and did not use is closed"


def test_no_test_replaces_a_low_descriptor_of_the_test_process() -> None:
    """Descriptors 3 and 4 of a pytest-xdist worker are its command pipes: an in-process test that dup2()s
    over them can end the worker's session with tests still pending (xdist's INTERNALERROR 'assert not
    crashitem'). Tests pass their own descriptors (``inherited_listener(first_fd=...)``) instead."""
    import ast

    offenders = []
    for path in sorted(Path(__file__).resolve().parents[1].rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dup2"
                    and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, int) and node.args[1].value > 2):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
