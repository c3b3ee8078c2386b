"""A real ``lidguard run-server`` process (fake platform) for the IPC boundary tests, and a raw client."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def raw_exchange(path: Path, payload: bytes, *, timeout: float = 10.0) -> bytes:
    """Sends raw bytes, half-closes, returns everything the runtime wrote back."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(payload)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def raw_request(path: Path, payload: bytes, *, timeout: float = 10.0) -> dict[str, Any]:
    reply = json.loads(raw_exchange(path, payload, timeout=timeout).split(b"\n")[0])
    assert isinstance(reply, dict)
    return reply


def request(path: Path, message: dict[str, Any]) -> dict[str, Any]:
    return raw_request(path, json.dumps({"v": 1, **message}).encode() + b"\n")


class RuntimeProcess:
    """``lidguard run-server`` started directly, so the test knows its pid and can limit it."""

    def __init__(self, lidguard: Any, *, max_open_files: int | None = None) -> None:
        self.lidguard = lidguard
        self.socket = lidguard.socket

        def limit() -> None:  # runs in the child before exec
            if max_open_files is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))

        self.output_file = lidguard.home / f"run-server-{time.monotonic_ns()}.out"
        with open(self.output_file, "wb") as output:  # a file, never a pipe nobody reads
            self.process = subprocess.Popen(
                [sys.executable, "-m", "lidguard", "run-server"], env=lidguard.env, stdin=subprocess.DEVNULL,
                stdout=output, stderr=subprocess.STDOUT, preexec_fn=limit, cwd=str(lidguard.home))

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"run-server exited {self.process.returncode}: {self.output()}")
            try:
                if request(self.socket, {"Command": "status"})["Succeeded"]:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise AssertionError(f"run-server never answered: {self.output()}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        try:
            return self.output_file.read_text(encoding="utf-8", errors="replace")[-4000:]
        except OSError:
            return ""

    def raw(self, payload: bytes, *, timeout: float = 10.0) -> dict[str, Any]:
        return raw_request(self.socket, payload, timeout=timeout)

    def raw_bytes(self, payload: bytes, *, timeout: float = 10.0) -> bytes:
        return raw_exchange(self.socket, payload, timeout=timeout)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        return request(self.socket, message)

    def assert_serving(self, expected: list[str]) -> None:
        assert self.alive(), f"the runtime died: {self.output()}"
        assert self.session_ids() == expected

    def start_session(self, name: str, provider: str = "claude") -> None:
        reply = request(self.socket, {"Command": "start", "Provider": provider, "SessionIdentifier": name})
        assert reply["Succeeded"], reply

    def session_ids(self) -> list[str]:
        reply = request(self.socket, {"Command": "status"})
        assert reply["Succeeded"], reply
        return sorted(session["SessionIdentifier"] for session in reply["Sessions"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=10)


@pytest.fixture
def runtime(lidguard: Any) -> Iterator[RuntimeProcess]:
    """A running runtime holding one session ``anchor`` (so it never idles out)."""
    process = RuntimeProcess(lidguard)
    try:
        process.wait_ready()
        process.start_session("anchor")
        yield process
    finally:
        process.stop()


@pytest.fixture
def start_runtime(lidguard: Any) -> Iterator[Any]:
    """Starts runtimes with options; every one is killed at the end."""
    started: list[RuntimeProcess] = []

    def start(**options: Any) -> RuntimeProcess:
        process = RuntimeProcess(lidguard, **options)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
