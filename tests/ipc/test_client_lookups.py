"""What a client looks up: the runtime lock is found only when a connect fails (or a launch needs it).

Finding it resolves the user's folders (realpath, the data and run folders' checks: a dozen system
calls). A client that connects never needs it; with a hundred client threads those calls were most of
the client's CPU per request, and every hook paid them once.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from lidguard.ipc import client
from lidguard.platform import paths as paths_module
from lidguard.platform.paths import prepare_runtime_dir, resolve_paths


def _serve_lines(path: Path, replies: int) -> threading.Thread:
    """A one-line-in, one-line-out server at ``path`` for ``replies`` connections."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)

    def serve() -> None:
        with listener:
            for _ in range(replies):
                connection, _ = listener.accept()
                with connection:
                    connection.makefile("rb").readline()
                    connection.sendall(b'{"v":1,"Succeeded":true,"Message":"here"}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counted: list[int] = []
    original = paths_module.resolve_paths

    def counting() -> Any:
        counted.append(1)
        return original()

    monkeypatch.setattr(paths_module, "resolve_paths", counting)
    return counted


def test_a_client_that_connects_never_resolves_the_users_folders(isolated_home: Path, lookups: list[int]) -> None:
    socket_path = prepare_runtime_dir(resolve_paths().runtime_dir) / resolve_paths().socket_file.name
    lookups.clear()
    server = _serve_lines(socket_path, 3)
    for auto_start in (False, True, False):
        reply = client.send_request(socket_path, {"v": 1, "Command": "status"}, auto_start=auto_start)
        assert reply == {"v": 1, "Succeeded": True, "Message": "here"}
    server.join(timeout=10)
    assert lookups == []


def test_a_client_that_cannot_connect_still_learns_from_the_lock(isolated_home: Path, lookups: list[int]) -> None:
    """Nothing listens and the lock is free: "not running" at once, found through the lock."""
    socket_path = resolve_paths().socket_file
    lookups.clear()
    reply = client.send_request(socket_path, {"v": 1, "Command": "status"})
    assert reply["Succeeded"] is False and reply["RuntimeUnavailable"] is True
    assert reply["Message"] == client.RUNTIME_NOT_RUNNING
    assert lookups, "the lock decides how long to wait, so it was looked up"


def test_the_lock_of_a_socket_is_looked_up_once_per_request(isolated_home: Path, lookups: list[int]) -> None:
    lock = client._LockFileOf(resolve_paths().socket_file)
    lookups.clear()
    assert lock.find() == resolve_paths().lock_file_str
    lookups.clear()
    assert lock.find() == lock.find()
    assert lookups == []
    assert client._LockFileOf(isolated_home / "elsewhere.sock").find() is None
