"""Issue 6: the client trusts a reply only from a server of its own user (transport.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lidguard.ipc import client, transport


def _one_shot_server(path, reply: bytes) -> threading.Thread:
    listener = transport.default_transport().bind(path)
    listener.setblocking(True)

    def serve() -> None:
        with listener, contextlib.suppress(OSError):
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_listener_socket_is_private_and_own_server_is_trusted(tmp_path):
    path = tmp_path / "s.sock"
    thread = _one_shot_server(path, b'{"v":1,"Succeeded":true,"Message":"ok"}\n')
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    reply = client.send_request(path, {"Command": "status"})
    thread.join(5)
    assert reply["Succeeded"] is True and reply["Message"] == "ok"


def test_a_server_of_another_uid_is_not_trusted(tmp_path, monkeypatch):
    path = tmp_path / "s.sock"
    thread = _one_shot_server(path, b'{"v":1,"Succeeded":true,"Message":"forged"}\n')
    monkeypatch.setattr(transport, "peer_uid", lambda sock: 4242)
    reply = client.send_request(path, {"Command": "status"})
    assert reply["Succeeded"] is False and "uid 4242" in reply["Message"] and "forged" not in reply["Message"]
    thread.join(5)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to run a server as nobody")
def test_a_real_server_of_another_user_is_not_trusted():
    folder = Path(tempfile.mkdtemp(prefix="lg-peer-"))
    os.chmod(folder, 0o777)
    path = folder / "s.sock"
    server = (
        "import os,socket,sys\n"
        "s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1],0o666); s.listen(1)\n"
        "c,_=s.accept(); c.recv(65536); c.sendall(b'{\"v\":1,\"Succeeded\":true,\"Message\":\"forged\"}\\n')\n"
    )
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    process = subprocess.Popen([python, "-c", server, str(path)], user=65534, cwd="/")
    try:
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        reply = client.send_request(path, {"Command": "status"})
        assert reply["Succeeded"] is False and "uid 65534" in reply["Message"], reply
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _scripted_server(path, replies: list[bytes | None]) -> threading.Thread:
    """Answers one connection per scripted reply (None: close without answering), then goes away."""
    listener = transport.default_transport().bind(path)
    listener.setblocking(True)

    def serve() -> None:
        with listener:
            for reply in replies:
                connection, _ = listener.accept()
                with connection, contextlib.suppress(OSError):
                    connection.recv(65536)
                    if reply is not None:
                        connection.sendall(reply)
            transport.default_transport().unbind(path)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("first", [
    b'{"v":1,"Succeeded":false,"Message":"LidGuard runtime is stopping; try again in a moment."}\n',
    b'{"v":1,"Succeeded":false,"RuntimeStopping":true,"Message":"bye"}\n',
    None,
])
def test_a_start_racing_the_runtime_exit_reaches_the_next_runtime(tmp_path, monkeypatch, first):
    path = tmp_path / "s.sock"
    old = _scripted_server(path, [first])
    launched = []

    def launch() -> bool:
        if not launched:
            old.join(5)
            launched.append(_scripted_server(path, [b'{"v":1,"Succeeded":true,"Message":"Started."}\n']))
        return True

    monkeypatch.setattr(client, "launch_runtime", launch)
    reply = client.send_request(path, {"Command": "start"}, auto_start=True)
    assert reply == {"v": 1, "Succeeded": True, "Message": "Started."}
    assert len(launched) == 1


def test_without_auto_start_a_stopping_reply_is_returned_as_is(tmp_path):
    path = tmp_path / "s.sock"
    _scripted_server(path, [b'{"v":1,"Succeeded":false,"RuntimeStopping":true,"Message":"bye"}\n'])
    assert client.send_request(path, {"Command": "stop"})["Message"] == "bye"


class _FakeProcess:
    def __init__(self, alive: bool, exit_code: int = 1) -> None:
        self.alive = alive
        self.exit_code = exit_code  # run-server exits 0 at once when another runtime holds the lock

    def poll(self):
        return None if self.alive else self.exit_code


def test_a_slow_starting_runtime_is_waited_for_while_alive(tmp_path, monkeypatch):
    path = tmp_path / "s.sock"
    monkeypatch.setattr(client, "AUTO_START_WAIT_SECONDS", 0.3)
    launches = []

    def launch():
        launches.append(threading.Timer(1.2, _scripted_server, (path, [b'{"v":1,"Succeeded":true}\n'])))
        launches[-1].start()
        return _FakeProcess(alive=True)

    monkeypatch.setattr(client, "launch_runtime", launch)
    assert client.send_request(path, {"Command": "start"}, auto_start=True)["Succeeded"] is True
    assert len(launches) == 1


def test_a_launch_that_exits_at_once_is_retried_then_given_up(tmp_path, monkeypatch):
    monkeypatch.setattr(client, "AUTO_START_WAIT_SECONDS", 1.2)
    launches = []
    monkeypatch.setattr(client, "launch_runtime", lambda: launches.append(1) or _FakeProcess(alive=False))
    started = time.monotonic()
    reply = client.send_request(tmp_path / "s.sock", {"Command": "start"}, auto_start=True)
    assert reply["Succeeded"] is False and reply["RuntimeUnavailable"] is True
    assert 2 <= len(launches) <= 4 and time.monotonic() - started < 5


def test_a_launch_that_finds_the_lock_held_waits_for_the_runtime_holding_it(tmp_path, monkeypatch):
    """Many clients launch at once: all but one run-server exit 0 (lock held). Their clients must wait
    for the one that is starting - past the usual 5 s on a loaded machine - not give up."""
    path = tmp_path / "s.sock"
    monkeypatch.setattr(client, "AUTO_START_WAIT_SECONDS", 0.3)
    launches = []
    threading.Timer(1.5, _scripted_server, (path, [b'{"v":1,"Succeeded":true}\n'])).start()
    monkeypatch.setattr(client, "launch_runtime", lambda: launches.append(1) or _FakeProcess(False, exit_code=0))
    assert client.send_request(path, {"Command": "start"}, auto_start=True)["Succeeded"] is True
    assert 1 <= len(launches) <= 2  # relaunched at most every RELAUNCH_WHILE_LOCK_HELD_SECONDS
