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


class _PipedProcess:
    """A stand-in for a launched run-server: what it prints on its stdout/stderr pipe, then its exit."""

    def __init__(self, output: bytes, exit_code: int | None, delay: float = 0.0) -> None:
        read_end, write_end = os.pipe()
        self.stdout = os.fdopen(read_end, "rb", buffering=0)
        self.exit_code = exit_code

        def write() -> None:
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(output)

        threading.Timer(delay, write).start()

    def poll(self):
        return self.exit_code

    def wait(self, timeout=None):
        return self.exit_code


def _runtime_socket_and_lock(tmp_path, monkeypatch):
    """A socket path with a runtime lock beside it, as ``send_request`` finds them for the real paths."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    from lidguard.platform.paths import resolve_paths

    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    paths.runtime_dir.mkdir(mode=0o700, exist_ok=True)
    return paths.socket_file, paths.lock_file


def test_a_runtime_that_fails_at_startup_gives_its_reason_and_is_not_relaunched(tmp_path, monkeypatch):
    path, _ = _runtime_socket_and_lock(tmp_path, monkeypatch)
    launches = []
    reason = b"lidguard: The platform backend cannot be loaded: LIDGUARD_PLATFORM must be one of ...\n"
    monkeypatch.setattr(client, "launch_runtime", lambda: launches.append(1) or _PipedProcess(reason, 1))
    started = time.monotonic()
    reply = client.send_request(path, {"Command": "start"}, auto_start=True)
    assert reply["Succeeded"] is False and reply["RuntimeUnavailable"] is True
    assert reply["Message"] == "The platform backend cannot be loaded: LIDGUARD_PLATFORM must be one of ..."
    assert len(launches) == 1 and time.monotonic() - started < 3
    again = client.send_request(path, {"Command": "start"}, auto_start=True)  # a moment later, same environment
    assert again["Message"] == reply["Message"] and len(launches) == 1


def test_a_launch_waits_for_the_readiness_line(tmp_path, monkeypatch):
    path, _ = _runtime_socket_and_lock(tmp_path, monkeypatch)
    launches = []

    def launch():
        launches.append(_scripted_server(path, [b'{"v":1,"Succeeded":true}\n']))
        return _PipedProcess(b"lidguard: runtime ready on x\n", None, delay=0.5)

    monkeypatch.setattr(client, "launch_runtime", launch)
    assert client.send_request(path, {"Command": "start"}, auto_start=True)["Succeeded"] is True
    assert len(launches) == 1


def test_a_held_runtime_lock_is_waited_for_without_launching(tmp_path, monkeypatch):
    """The lock holder is starting (or re-creating its socket): wait for it, launch nothing."""
    from lidguard.platform.locking import InstanceLock

    path, lock_file = _runtime_socket_and_lock(tmp_path, monkeypatch)
    holder = InstanceLock(lock_file)
    assert holder.try_acquire()
    launches = []
    monkeypatch.setattr(client, "launch_runtime", lambda: launches.append(1))
    threading.Timer(1.5, _scripted_server, (path, [b'{"v":1,"Succeeded":true}\n'])).start()
    try:
        assert client.send_request(path, {"Command": "start"}, auto_start=True)["Succeeded"] is True
    finally:
        holder.release()
    assert launches == []
