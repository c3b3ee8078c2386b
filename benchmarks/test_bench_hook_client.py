"""The installed hook at the speed of a compiled client (issue 36).

1. The command hook-install writes into Claude Code's settings (the native hook client ahead of a fresh
   venv's console script), run through ``sh -c`` as agents run hooks, for PreToolUse of a live session,
   against the compiled floor of any hook: a C program (compiled here with ``cc``) that reads stdin, sends
   one mark-session-active line to the runtime's socket, reads the reply and prints ``{}``, also through
   ``sh -c``. The Python hook (what was installed before) is measured in the same interleaved rounds.
   Target: <= 2.0x the floor in wall time, asserted with LIDGUARD_BENCH_STRICT=1 (a quiet machine); under
   load the CPU time of the whole ``sh -c`` is asserted (a fallback to the Python hook is ~10x).
2. The fallback path (no runtime: the client finds no socket and execs the Python hook) against the Python
   hook alone, interleaved: no slower (STRICT: wall <= 1.1x; under load CPU <= 1.15x).
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess

import pytest
from bench_timing import STRICT, ProcessTime, timed_process

from lidguard.platform.hook_client import CLIENT_NAME, hook_client_status

TARGET_RATIO = 2.0
SMOKE_CPU_RATIO = 3.0  # the client's sh -c against the floor's; a fallback to Python is >= 10x
FALLBACK_TARGET_RATIO = 1.1
FALLBACK_SMOKE_CPU_RATIO = 1.15
BENCH_ROUNDS = 30
SMOKE_ROUNDS = 9
PROMPT = {"session_id": "bench", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "run the tests"}
PRE_TOOL_USE = {"session_id": "bench", "transcript_path": "/w/t.jsonl", "cwd": "/w/app", "permission_mode": "default",
                "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "echo hello", "description": "Print hello"}, "tool_use_id": "toolu_1"}
FLOOR_SOURCE = r"""
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char buffer[65536];
    while (read(0, buffer, sizeof buffer) > 0) {}
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {0};
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) return 1;
    const char *line = argv[2];
    write(fd, line, strlen(line));
    shutdown(fd, SHUT_WR);
    ssize_t got;
    int newline = 0;
    while (!newline && (got = read(fd, buffer, sizeof buffer)) > 0) newline = memchr(buffer, '\n', got) != NULL;
    fputs("{}\n", stdout);
    return newline ? 0 : 1;
}
"""
FLOOR_LINE = ('{"v":1,"Command":"mark-session-active","Provider":"Claude","ProviderName":"",'
              '"SessionIdentifier":"bench",'
              '"WorkingDirectory":"/w/app","SessionStateReason":"pre_tool_use","ToolCallId":"toolu_1",'
              '"ToolCallState":"Running","ReplySessions":false,"ClientPlatform":"fake"}\n')


@pytest.fixture(scope="module")
def floor_program(tmp_path_factory) -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler for the compiled floor")
    folder = tmp_path_factory.mktemp("floor")
    source = folder / "floor.c"
    source.write_text(FLOOR_SOURCE)
    subprocess.run([compiler, "-O2", "-o", str(folder / "floor"), str(source)], check=True, timeout=120)
    return str(folder / "floor")


def _environment(lidguard) -> dict[str, str]:
    env = {**lidguard.env, "PYTHONPYCACHEPREFIX": str(lidguard.home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _installed_command(lidguard, env: dict[str, str], script: str, event: str) -> str:
    (lidguard.home / ".claude").mkdir(exist_ok=True)
    subprocess.run([script, "hook-install", "--provider", "claude"], env=env, check=True, capture_output=True,
                   timeout=120)
    settings = json.loads((lidguard.home / ".claude" / "settings.json").read_text())
    [command] = {handler["command"] for group in settings["hooks"][event] for handler in group["hooks"]}
    return command


def _timed(command: str, env: dict[str, str], stdin: bytes) -> ProcessTime:
    timing, completed = timed_process(["/bin/sh", "-c", command], env, stdin=stdin)
    assert completed.returncode == 0, completed.stderr
    return timing


def _pair_ratios(first: list[ProcessTime], second: list[ProcessTime]) -> tuple[float, float]:
    wall = statistics.median(a.wall / b.wall for a, b in zip(first, second, strict=True))
    cpu = statistics.median(a.cpu / max(b.cpu, 1e-6) for a, b in zip(first, second, strict=True))
    return wall, cpu


def _median_ms(times: list[ProcessTime]) -> float:
    return statistics.median(t.wall for t in times) * 1000


def _rounds(benchmark, measures: list, rounds: int) -> None:
    """Interleaved rounds, the order rotated each round (the benchmark times the first measure)."""
    order = list(measures)

    def setup() -> None:
        for measure in order[1:]:
            measure()

    benchmark.pedantic(order[0], setup=setup, rounds=rounds if not benchmark.disabled else 1, iterations=1)
    if benchmark.disabled:
        for index in range(SMOKE_ROUNDS - 1):
            for measure in order[index % len(order):] + order[:index % len(order)]:
                measure()


def test_the_installed_hook_against_the_compiled_floor(lidguard, benchmark, fresh_venv, floor_program):
    status = hook_client_status()
    assert status.usable, status.reason
    env = _environment(lidguard)
    script = str(fresh_venv.console_script)
    installed = _installed_command(lidguard, env, script, "PreToolUse")
    assert CLIENT_NAME in installed, installed
    python_hook = f"{script} claude-hook"
    floor = f"{floor_program} {lidguard.socket} '{FLOOR_LINE}'"
    payload = json.dumps(PRE_TOOL_USE).encode()
    subprocess.run([script, "claude-hook"], env=env, input=json.dumps(PROMPT).encode(), capture_output=True,
                   timeout=60)
    assert lidguard.wait_until(lambda: lidguard.socket.exists(), timeout=60)
    for _ in range(3):  # warm caches and the runtime
        for command in (floor, installed, python_hook):
            _timed(command, env, payload)
    client_times: list[ProcessTime] = []
    floor_times: list[ProcessTime] = []
    python_times: list[ProcessTime] = []
    _rounds(benchmark, [lambda: client_times.append(_timed(installed, env, payload)),
                        lambda: floor_times.append(_timed(floor, env, payload)),
                        lambda: python_times.append(_timed(python_hook, env, payload))], BENCH_ROUNDS)
    ratio, cpu_ratio = _pair_ratios(client_times, floor_times)
    before, _ = _pair_ratios(python_times, floor_times)
    figure = (f"installed hook (native client) PreToolUse {_median_ms(client_times):.1f} ms vs compiled floor "
              f"{_median_ms(floor_times):.1f} ms: ratio {ratio:.2f} (CPU {cpu_ratio:.2f}); the Python hook "
              f"{_median_ms(python_times):.1f} ms: ratio {before:.2f}; {len(client_times)} interleaved rounds")
    benchmark.extra_info.update(ratio=ratio, cpu_ratio=cpu_ratio, python_ratio=before)
    print(figure)
    log = (lidguard.data_dir / "claude-hook-events.log").read_text()
    assert "succeeded=true" in log.rsplit("kind=runtime-result", 1)[1]
    if STRICT:
        assert ratio <= TARGET_RATIO, figure
    assert cpu_ratio <= SMOKE_CPU_RATIO, figure


def test_the_fallback_is_no_slower_than_the_python_hook(lidguard, benchmark, fresh_venv):
    env = _environment(lidguard)
    script = str(fresh_venv.console_script)
    installed = _installed_command(lidguard, env, script, "PreToolUse")
    assert CLIENT_NAME in installed, installed
    python_hook = f"{script} claude-hook"
    payload = json.dumps(PRE_TOOL_USE).encode()  # no runtime, an empty journal: nothing launches it
    for _ in range(3):
        _timed(installed, env, payload)
        _timed(python_hook, env, payload)
    fallback_times: list[ProcessTime] = []
    python_times: list[ProcessTime] = []
    _rounds(benchmark, [lambda: fallback_times.append(_timed(installed, env, payload)),
                        lambda: python_times.append(_timed(python_hook, env, payload))], BENCH_ROUNDS)
    assert not lidguard.socket.exists()
    ratio, cpu_ratio = _pair_ratios(fallback_times, python_times)
    figure = (f"installed hook, no runtime (client -> Python hook) {_median_ms(fallback_times):.1f} ms vs the Python "
              f"hook {_median_ms(python_times):.1f} ms: ratio {ratio:.2f} (CPU {cpu_ratio:.2f}); "
              f"{len(fallback_times)} interleaved rounds")
    benchmark.extra_info.update(ratio=ratio, cpu_ratio=cpu_ratio)
    print(figure)
    if STRICT:
        assert ratio <= FALLBACK_TARGET_RATIO, figure
    assert cpu_ratio <= FALLBACK_SMOKE_CPU_RATIO, figure
