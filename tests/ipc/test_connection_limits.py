"""Issue 6: idle connections, fd exhaustion and clients that never read cannot take the runtime down."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import time

import pytest

from lidguard.ipc.protocol import encode_message

from .conftest import request


@pytest.fixture
def many_fds():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096
    if wanted < 1300:
        pytest.skip("the test process needs more than 1,300 file descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _open_idle(path, count: int) -> list[socket.socket]:
    idle = []
    for _ in range(count):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError, InterruptedError):
            sock.connect(str(path))
        idle.append(sock)
    return idle


@pytest.mark.parametrize("max_open_files", [1024, 128])
def test_idle_connections_beyond_the_fd_limit_neither_kill_nor_block_the_runtime(start_runtime, many_fds,
                                                                                   max_open_files):
    runtime = start_runtime(max_open_files=max_open_files)
    runtime.wait_ready()
    runtime.start_session("anchor")
    idle = _open_idle(runtime.socket, 1100)
    try:
        time.sleep(0.5)
        # A real client still gets through while 1,100 connections sit idle: the idle ones are dropped
        # (oldest first, with a reply saying why) instead of making it wait for their read timeout.
        reply = runtime.raw(json.dumps({"v": 1, "Command": "start", "Provider": "codex",
                                        "SessionIdentifier": "during"}).encode() + b"\n", timeout=60)
        assert reply["Succeeded"], reply
        assert runtime.alive(), runtime.output()
        dropped = 0
        for sock in idle[:50]:
            with contextlib.suppress(OSError):
                dropped += b"too many open connections" in sock.recv(65536)
        assert dropped > 0
    finally:
        for sock in idle:
            sock.close()
    runtime.assert_serving(["anchor", "during"])


def test_a_client_that_never_reads_its_reply_does_not_hold_the_runtime(runtime, load_allowance):
    # Many sessions make the status reply larger than the socket buffers.
    for index in range(80):
        runtime.request({"Command": "start", "Provider": "codex", "SessionIdentifier": f"{index:03d}" + "z" * 500,
                         "WorkingDirectory": "/" + "w" * 4000})
    open_fds = len(os.listdir(f"/proc/{runtime.process.pid}/fd"))
    allowance = load_allowance()
    stuck = []
    for _ in range(20):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(str(runtime.socket))
        sock.sendall(json.dumps({"v": 1, "Command": "status"}).encode() + b"\n")
        stuck.append(sock)  # never read
    try:
        started = time.monotonic()
        reply = request(runtime.socket, {"Command": "status"})  # lists at most 64 KiB of sessions (bounds.py)
        assert reply["ActiveSessionCount"] == 81 and len(encode_message(reply)) > 8 * 4096  # >> their buffers
        # Not held up by the stuck writers (each would hold it for the 5 s write timeout), at any load.
        assert time.monotonic() - started < 2 + allowance
        # The write timeout (5 s) closes the stuck connections: the runtime holds no descriptor for them.
        deadline = time.monotonic() + 30
        while len(os.listdir(f"/proc/{runtime.process.pid}/fd")) > open_fds and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(os.listdir(f"/proc/{runtime.process.pid}/fd")) <= open_fds
    finally:
        for sock in stuck:
            sock.close()
    assert runtime.alive()
