"""The runtime under load, and the cost of a cold client, each beside a floor measured in the same run.

Targets (issue 6): 100 concurrent clients x 10 rounds of start / mark-session-active / stop at
>= 1,000 requests/s with nothing lost; one client sequentially at p50 <= 2 ms and p99 <= 5 ms.

What runs: a real ``lidguard run-server`` process (fake platform, isolated HOME) and, as the floor, a
trivial line-echo server on a Unix socket in its own process (one asyncio loop, like the runtime),
both driven by the same client code (``ipc.client.send_request``) from this process. The two are
measured interleaved, so a busy moment hits both alike.

The suite (ci/test.sh) runs these as plain tests with ``--benchmark-disable``: every body still
measures and asserts. Absolute targets are asserted with documented CI margins, scaled by how fast
the floor is on this machine right now (a shared 2-core CI box is slower than a laptop):

* throughput: ``runtime >= TARGET_RPS * min(1, echo / ECHO_REFERENCE_RPS) * CI_MARGIN``;
* latency: ``p50 <= TARGET_P50 * CI_MARGIN_LATENCY + echo p50`` (same for p99), the echo's own
  percentile standing for the transport and the machine's scheduling noise.

``LIDGUARD_BENCH_STRICT=1`` drops the margins (the raw targets). Without it (the suite, beside other
tests on a shared machine) wall-clock figures are printed, not asserted (bench_timing.py); what is
asserted there holds under load: nothing lost, and the CPU time (user + system) the runtime process
spends per request, against the echo server's per request in the same run (the burst and the one
sequential client; STRICT also holds the sequential client to the p50 target in CPU time). The
figures are printed either way: ``python -m pytest benchmarks/test_bench_ipc.py -q -s``.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench_timing import STRICT, ProcessTime, process_cpu_seconds, timed_process

from lidguard.ipc.client import send_request
from lidguard.platform.paths import resolve_paths

CLIENTS = 100
ROUNDS = 10
SEQUENTIAL_ROUNDS = 200  # x 3 requests
TARGET_RPS = 1000.0
TARGET_P50_MS = 2.0
TARGET_P99_MS = 5.0
# The echo floor (100 threads x 30 requests) on the development laptop-class machine the targets
# were set on; a slower or busier machine scales the throughput target down proportionally.
ECHO_REFERENCE_RPS = 6000.0
CI_MARGIN = 1.0 if STRICT else 0.8  # throughput may be 20% under the scaled target on CI
CI_MARGIN_LATENCY = 1.0 if STRICT else 1.5  # latency may be 50% over the target on CI
# A cold `lidguard status` process may take this many times a bare `python -c "import json, socket, os"`:
# status loads the settings model and the CLI to print the settings block, so it is not held to the hook
# path's 1.5x (benchmarks/test_bench_cli.py); this bound catches a status that starts waiting on connect
# retries or importing the runtime (anyio, the server) instead. Measured: 4.2x on a loaded 2-core box
# (floor 342 ms, status 1428 ms) when the settings model was pydantic; 1.8x quiet since (99 vs 55 ms).
MAX_COLD_STATUS_RATIO = 4.0 * (1.0 if STRICT else 1.5)
# STRICT: the burst's throughput against the bare echo's in the same run. Issue 22 asked for 0.5; measured
# 0.19-0.26 before the request path lost its per-event lock checkpoints and per-request lookups, 0.30-0.40 after,
# 0.35-0.43 since connections run in bare asyncio tasks and the journal coalesces (quiet, 2 cores). This floor
# keeps what was won; 0.5 is not reached (see AGENTS.md, benchmarks/).
MIN_BURST_VS_ECHO = 0.30
# Off STRICT, in CPU time (what holds under load): the runtime may spend this many times the echo server's
# CPU per request of the burst.
MAX_CPU_PER_REQUEST_VS_ECHO = 12.0
MAX_SEQUENTIAL_CPU_PER_REQUEST_S = TARGET_P50_MS / 1e3  # STRICT: the p50 target, in CPU time
# Off STRICT, the sequential client's CPU per request against the echo's in the same run: an absolute 2 ms
# failed a loaded CI run (2.23 ms) on a machine where it is 1.15-1.42 ms quiet (5.8x the echo's), 1.78 ms
# (8.2x) beside four busy loops - contention inflates the runtime's CPU per request more than the echo's.
MAX_SEQUENTIAL_CPU_VS_ECHO = 15.0
# A cold status process in CPU time against the floor's (measured ~5x with pydantic, ~2x since).
MAX_COLD_STATUS_CPU_RATIO = 9.0

ECHO_SERVER = textwrap.dedent("""
    import asyncio, sys
    REPLY = b'{"v":1,"Succeeded":true,"Message":"echo"}\\n'
    if len(sys.argv) > 2:  # a reply line the runtime sent (the client reads and decodes as much)
        REPLY = open(sys.argv[2], "rb").read()
    async def serve(reader, writer):
        try:
            await reader.readline()
            writer.write(REPLY)
            await writer.drain()
        finally:
            writer.close()
    async def main():
        server = await asyncio.start_unix_server(serve, sys.argv[1], backlog=512)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()
    asyncio.run(main())
""")


def _stop_process(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


class Runtime:
    """A ``lidguard run-server`` child of this test (its pid is ours to stop)."""

    def __init__(self) -> None:
        self.socket = resolve_paths().socket_file
        self.env = {**os.environ, "LIDGUARD_PLATFORM": "fake"}
        self.process = subprocess.Popen([sys.executable, "-m", "lidguard", "run-server"], env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        _wait_until(self._answers, 20, "lidguard run-server to answer status")

    def _answers(self) -> bool:
        if self.process.poll() is not None:
            stderr = self.process.stderr.read().decode() if self.process.stderr else ""
            raise AssertionError(f"run-server exited with {self.process.returncode}: {stderr}")
        return bool(send_request(self.socket, {"Command": "status"}).get("Succeeded"))

    def status(self) -> dict[str, Any]:
        return send_request(self.socket, {"Command": "status"})

    def stop(self) -> None:
        if self.process.poll() is None:
            send_request(self.socket, {"Command": "shutdown", "Force": True}, reply_timeout=5)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        _stop_process(self.process)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def runtime(isolated_home: Path) -> Iterator[Runtime]:
    server = Runtime()
    try:
        yield server
    finally:
        server.stop()


ECHO_PIDS: dict[Path, int] = {}  # echo socket -> the echo server's pid (its CPU time is read)


@contextlib.contextmanager
def echo_server(path: Path, reply_file: Path | None = None) -> Iterator[Path]:
    command = [sys.executable, "-c", ECHO_SERVER, str(path)] + ([str(reply_file)] if reply_file else [])
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
    ECHO_PIDS[path] = process.pid
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield path
    finally:
        ECHO_PIDS.pop(path, None)
        _stop_process(process)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture
def echo_socket(tmp_path: Path) -> Iterator[Path]:
    with echo_server(tmp_path / "echo.sock") as path:
        yield path


def _session(client: int, round_number: int) -> dict[str, Any]:
    # what a hook sends: it never reads the session list, so it asks for none ("ReplySessions": false)
    return {"Provider": "Claude", "SessionIdentifier": f"bench-{client}-{round_number}",
            "WorkingDirectory": "/tmp/bench", "ReplySessions": False}


def _round(path: Path, client: int, round_number: int, latencies: list[float]) -> list[dict[str, Any]]:
    """start, mark-session-active, stop of one session; returns the three replies."""
    session = _session(client, round_number)
    replies = []
    for request in ({"Command": "start", **session},
                    {"Command": "mark-session-active", **session, "SessionStateReason": "PreToolUse:Bash"},
                    {"Command": "stop", **session}):
        started = time.perf_counter()
        replies.append(send_request(path, request))
        latencies.append(time.perf_counter() - started)
    return replies


def concurrent_load(path: Path) -> tuple[float, list[list[dict[str, Any]]], list[float]]:
    """CLIENTS threads released together, ROUNDS rounds each: (requests/s, replies per client, latencies)."""
    barrier = threading.Barrier(CLIENTS + 1)
    replies: list[list[dict[str, Any]]] = [[] for _ in range(CLIENTS)]
    latencies: list[list[float]] = [[] for _ in range(CLIENTS)]
    errors: list[BaseException] = []

    def client(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            for round_number in range(ROUNDS):
                replies[index] += _round(path, index, round_number, latencies[index])
        except BaseException as error:  # reported below, never swallowed
            errors.append(error)

    threads = [threading.Thread(target=client, args=(index,), daemon=True) for index in range(CLIENTS)]
    for thread in threads:
        thread.start()
    barrier.wait(timeout=30)
    started = time.perf_counter()
    for thread in threads:
        thread.join(timeout=120)
    elapsed = time.perf_counter() - started
    assert not errors, errors[:3]
    assert not any(thread.is_alive() for thread in threads), "a client never finished"
    return CLIENTS * ROUNDS * 3 / elapsed, replies, [value for values in latencies for value in values]


def sequential_latencies(path: Path, rounds: int, offset: int = 0) -> list[float]:
    latencies: list[float] = []
    for round_number in range(rounds):
        for reply in _round(path, 10_000 + offset, round_number, latencies):
            assert reply.get("Succeeded"), reply
    return latencies


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def _assert_nothing_lost(runtime: Runtime, replies: list[list[dict[str, Any]]]) -> None:
    for client, client_replies in enumerate(replies):
        assert len(client_replies) == ROUNDS * 3, f"client {client} got {len(client_replies)} replies"
        for round_number in range(ROUNDS):
            start, active, stop = client_replies[round_number * 3: round_number * 3 + 3]
            key = f"Claude:bench-{client}-{round_number}"
            assert start.get("Succeeded") and start.get("Message", "").startswith(f"Started {key}."), start
            assert active.get("Succeeded") and "not active" not in active.get("Message", ""), active
            assert stop.get("Succeeded") and stop.get("Message") == f"Stopped {key}.", stop
    status = runtime.status()
    assert status.get("Succeeded"), status
    assert runtime.process.poll() is None, "the runtime died under load"


def _report(lines: list[str]) -> None:
    print("\n" + "\n".join(f"  {line}" for line in lines), file=sys.stderr)


def test_hundred_concurrent_clients_lose_nothing_and_meet_the_throughput_target(
        benchmark: Any, runtime: Runtime, echo_socket: Path, tmp_path: Path) -> None:
    anchor = {"Provider": "Claude", "SessionIdentifier": "bench-anchor"}
    assert send_request(runtime.socket, {"Command": "start", **anchor})["Succeeded"]
    runtime_rates: list[float] = []
    echo_rates: list[float] = []
    latencies: list[float] = []
    cpu_ratios: list[float] = []  # runtime CPU per request / echo CPU per request, per run
    typical: list[dict[str, Any]] = []  # a reply of the median size
    requests = CLIENTS * ROUNDS * 3

    def measure() -> None:
        echo_cpu = process_cpu_seconds(ECHO_PIDS[echo_socket])
        echo_rates.append(concurrent_load(echo_socket)[0])
        echo_cpu = process_cpu_seconds(ECHO_PIDS[echo_socket]) - echo_cpu
        runtime_cpu = process_cpu_seconds(runtime.process.pid)
        rate, replies, round_latencies = concurrent_load(runtime.socket)
        runtime_cpu = process_cpu_seconds(runtime.process.pid) - runtime_cpu
        _assert_nothing_lost(runtime, replies)
        if not typical:
            ordered = sorted((reply for client in replies for reply in client),
                             key=lambda reply: len(reply["Sessions"]))
            typical.append(ordered[len(ordered) // 2])
        runtime_rates.append(rate)
        latencies.extend(round_latencies)
        # /proc counts in clock ticks: an echo run under one tick counts as one
        cpu_ratios.append((runtime_cpu / requests) / (max(echo_cpu, 0.01) / requests))

    benchmark.pedantic(measure, rounds=1, iterations=1)
    measure()  # twice in every mode: the better of two runs on both sides
    [session] = runtime.status()["Sessions"]  # only the anchor is left: nothing lost, nothing stuck
    assert session["SessionIdentifier"] == "bench-anchor"
    runtime_rps, echo_rps = max(runtime_rates), max(echo_rates)
    # Issue 22's second reference: the same burst against an echo that answers with one of the runtime's own
    # reply lines (every reply lists every session, ~50 here), so the client reads and decodes as much.
    reply_file = tmp_path / "typical-reply.json"
    reply_file.write_bytes(json.dumps(typical[0], separators=(",", ":")).encode() + b"\n")
    typical_bytes = reply_file.stat().st_size
    with echo_server(tmp_path / "sized-echo.sock", reply_file) as sized_socket:
        sized_rps = max(concurrent_load(sized_socket)[0] for _ in range(2))
    required = TARGET_RPS * min(1.0, echo_rps / ECHO_REFERENCE_RPS) * CI_MARGIN
    benchmark.extra_info.update(runtime_rps=runtime_rps, echo_rps=echo_rps, required_rps=required,
                                sized_echo_rps=sized_rps, typical_reply_bytes=typical_bytes)
    _report([f"{CLIENTS} clients x {ROUNDS} rounds x 3 requests: runtime {runtime_rps:.0f} req/s "
             f"(runs: {', '.join(f'{rate:.0f}' for rate in runtime_rates)}), echo floor {echo_rps:.0f} req/s, "
             f"required {required:.0f} req/s (target {TARGET_RPS:.0f})",
             f"runtime / echo = {runtime_rps / echo_rps:.2f}; echo answering a runtime reply "
             f"({typical_bytes} B): {sized_rps:.0f} req/s, runtime / that echo = {runtime_rps / sized_rps:.2f}",
             f"under load: p50 {percentile(latencies, 0.5) * 1e3:.1f} ms, "
             f"p99 {percentile(latencies, 0.99) * 1e3:.1f} ms",
             f"CPU per request, runtime / echo: {', '.join(f'{ratio:.1f}' for ratio in cpu_ratios)} "
             f"(at most {MAX_CPU_PER_REQUEST_VS_ECHO:.0f})"])
    if STRICT:
        assert runtime_rps >= required, (
            f"runtime {runtime_rps:.0f} req/s < required {required:.0f} req/s (echo floor {echo_rps:.0f} req/s)")
        assert runtime_rps >= MIN_BURST_VS_ECHO * echo_rps, f"runtime / echo = {runtime_rps / echo_rps:.2f}"
    assert min(cpu_ratios) <= MAX_CPU_PER_REQUEST_VS_ECHO, cpu_ratios


def test_one_sequential_client_meets_the_latency_targets(benchmark: Any, runtime: Runtime,
                                                         echo_socket: Path) -> None:
    """Rounds of start / mark-session-active / stop with no other session: every start takes protection
    and every stop gives it up and evaluates suspend (the worst case for an agent's hooks)."""
    sequential_latencies(runtime.socket, 10, offset=1)  # warm-up: first imports and code paths
    runtime_samples: list[float] = []
    echo_samples: list[float] = []
    rounds_per_slice = 20

    runtime_cpu: list[float] = []
    echo_cpu: list[float] = []

    def measure() -> None:
        # interleaved slices, so noise lands on both sides alike
        for index in range(SEQUENTIAL_ROUNDS // rounds_per_slice):
            before = process_cpu_seconds(ECHO_PIDS[echo_socket])
            echo_samples.extend(sequential_latencies(echo_socket, rounds_per_slice, offset=index))
            echo_cpu.append(process_cpu_seconds(ECHO_PIDS[echo_socket]) - before)
            before = process_cpu_seconds(runtime.process.pid)
            runtime_samples.extend(sequential_latencies(runtime.socket, rounds_per_slice, offset=index))
            runtime_cpu.append(process_cpu_seconds(runtime.process.pid) - before)

    benchmark.pedantic(measure, rounds=1, iterations=1)
    cpu_per_request = sum(runtime_cpu) / len(runtime_samples)
    echo_cpu_per_request = max(sum(echo_cpu), 0.01) / len(echo_samples)  # /proc counts whole clock ticks
    p50, p99 = percentile(runtime_samples, 0.5), percentile(runtime_samples, 0.99)
    echo_p50, echo_p99 = percentile(echo_samples, 0.5), percentile(echo_samples, 0.99)
    allowed_p50 = TARGET_P50_MS / 1e3 * CI_MARGIN_LATENCY + echo_p50
    allowed_p99 = TARGET_P99_MS / 1e3 * CI_MARGIN_LATENCY + echo_p99
    benchmark.extra_info.update(p50_ms=p50 * 1e3, p99_ms=p99 * 1e3, echo_p50_ms=echo_p50 * 1e3,
                                echo_p99_ms=echo_p99 * 1e3)
    _report([f"one client, {len(runtime_samples)} requests: runtime p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
             f"mean {statistics.fmean(runtime_samples) * 1e3:.2f} ms; echo floor p50 {echo_p50 * 1e3:.2f} ms, "
             f"p99 {echo_p99 * 1e3:.2f} ms; allowed p50 {allowed_p50 * 1e3:.2f} ms, p99 {allowed_p99 * 1e3:.2f} ms",
             f"runtime CPU per request {cpu_per_request * 1e3:.2f} ms "
             f"(STRICT: at most {MAX_SEQUENTIAL_CPU_PER_REQUEST_S * 1e3:.2f} ms), "
             f"echo {echo_cpu_per_request * 1e3:.3f} ms, "
             f"runtime / echo {cpu_per_request / echo_cpu_per_request:.1f} (at most {MAX_SEQUENTIAL_CPU_VS_ECHO:.0f})"])
    by_command = {command: runtime_samples[index::3]
                  for index, command in enumerate(("start", "mark-session-active", "stop"))}
    _report([f"  {command}: p50 {percentile(samples, 0.5) * 1e3:.2f} ms, p99 {percentile(samples, 0.99) * 1e3:.2f} ms"
             for command, samples in by_command.items()])
    assert runtime.status()["ActiveSessionCount"] == 0
    if STRICT:
        assert p50 <= allowed_p50, f"p50 {p50 * 1e3:.2f} ms > {allowed_p50 * 1e3:.2f} ms"
        assert p99 <= allowed_p99, f"p99 {p99 * 1e3:.2f} ms > {allowed_p99 * 1e3:.2f} ms"
        assert cpu_per_request <= MAX_SEQUENTIAL_CPU_PER_REQUEST_S, f"{cpu_per_request * 1e3:.2f} ms CPU per request"
    assert cpu_per_request <= MAX_SEQUENTIAL_CPU_VS_ECHO * echo_cpu_per_request, \
        f"{cpu_per_request * 1e3:.2f} ms CPU per request, {cpu_per_request / echo_cpu_per_request:.1f}x the echo's"


def _process_seconds(command: list[str], env: dict[str, str], expect: Callable[[str], bool]) -> ProcessTime:
    timing, completed = timed_process(command, env)
    stdout = completed.stdout.decode()
    assert completed.returncode == 0 and expect(stdout), (stdout, completed.stderr)
    return timing


def test_cold_status_process_against_the_floor(benchmark: Any, runtime: Runtime) -> None:
    """A whole ``lidguard status`` process (the user waits on it) beside ``python -c "import json, socket, os"``."""
    env = {**runtime.env, "PYTHONDONTWRITEBYTECODE": "0"}
    floor_command = [sys.executable, "-c", "import json, socket, os"]
    status_command = [sys.executable, "-m", "lidguard", "status"]
    floor: list[ProcessTime] = []
    status: list[ProcessTime] = []

    def measure() -> None:
        for _ in range(7):  # interleaved pairs; the median of each side
            floor.append(_process_seconds(floor_command, env, lambda out: out == ""))
            status.append(_process_seconds(status_command, env, lambda out: "Active sessions: 0" in out))

    _process_seconds(status_command, env, lambda out: True)  # warm the page cache and the bytecode
    benchmark.pedantic(measure, rounds=1, iterations=1)
    floor_s, status_s = statistics.median(t.wall for t in floor), statistics.median(t.wall for t in status)
    cpu_ratio = statistics.median(s.cpu / f.cpu for s, f in zip(status, floor, strict=True))
    benchmark.extra_info.update(status_ms=status_s * 1e3, floor_ms=floor_s * 1e3, cpu_ratio=cpu_ratio)
    _report([f"cold `lidguard status`: {status_s * 1e3:.0f} ms, floor `python -c \"import json, socket, os\"` "
             f"{floor_s * 1e3:.0f} ms, ratio {status_s / floor_s:.2f}x (max {MAX_COLD_STATUS_RATIO}x, asserted with "
             f"LIDGUARD_BENCH_STRICT=1); CPU time {cpu_ratio:.2f}x (max {MAX_COLD_STATUS_CPU_RATIO}x)"])
    if STRICT:
        assert status_s <= floor_s * MAX_COLD_STATUS_RATIO
    assert cpu_ratio <= MAX_COLD_STATUS_CPU_RATIO
