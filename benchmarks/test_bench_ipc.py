"""IPC round trip against a real runtime process (fake platform), and the cost of a cold client.

Ratios are computed against a baseline measured in the same run: a bare Unix-socket echo round trip.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lidguard.ipc.client import send_request
from lidguard.platform.paths import resolve_paths


@pytest.fixture
def runtime_socket(isolated_home: Path):
    env = {**os.environ, "LIDGUARD_PLATFORM": "fake"}
    subprocess.run([sys.executable, "-m", "lidguard", "start", "--provider", "claude", "--session", "bench"],
                   env=env, check=True, capture_output=True)
    path = resolve_paths().socket_file  # derived from the data folder (platform/paths.py)
    yield path
    subprocess.run([sys.executable, "-m", "lidguard", "remove-session", "--all"], env=env, capture_output=True)
    subprocess.run(["pkill", "-f", f"XDG_RUNTIME_DIR={isolated_home}"], capture_output=True)
    for pid in subprocess.run(["pgrep", "-f", "lidguard run-server"], capture_output=True, text=True).stdout.split():
        try:
            if f"{isolated_home}".encode() in Path(f"/proc/{pid}/environ").read_bytes():
                os.kill(int(pid), 9)
        except OSError:
            pass


@pytest.fixture
def echo_socket(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("echo")) / "e.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                connection.sendall(b'{"v":1,"Succeeded":true}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    stop.set()
    server.close()


def test_bench_ipc_status_round_trip(benchmark, runtime_socket):
    response = benchmark(lambda: send_request(runtime_socket, {"Command": "status"}))
    assert response["Succeeded"]


def test_bench_ipc_baseline_socket_echo(benchmark, echo_socket):
    response = benchmark(lambda: send_request(echo_socket, {"Command": "status"}))
    assert response["Succeeded"]


def test_ipc_round_trip_ratio_to_socket_echo(runtime_socket, echo_socket):
    def median(path: Path, rounds: int = 200) -> float:
        samples = []
        for _ in range(rounds):
            started = time.perf_counter()
            send_request(path, {"Command": "status"})
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)

    runtime = median(runtime_socket)
    echo = median(echo_socket)
    print(f"\nIPC status round trip: runtime {runtime * 1e6:.0f} us, bare socket echo {echo * 1e6:.0f} us, "
          f"ratio {runtime / echo:.1f}x")
    assert runtime > 0 and echo > 0
