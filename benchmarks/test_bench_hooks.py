"""Whole-process cost of an agent hook: `lidguard claude-hook` with a PreToolUse payload of a live session
(runtime running) against the floor `python -c "import json, socket, os"`, interleaved in the same run; the
same for `lidguard qwen-hook` PreToolUse and `lidguard gemini-hook` BeforeTool of its shell tool (the lid
open: status, then mark-session-active, its costliest tool event).

What is measured is what the agent runs on every tool call: the `lidguard` console script (as pip writes
it for [project.scripts]) of a fresh virtual environment (the root conftest's ``fresh_venv``: this machine's
global interpreter pre-imports typing, pathlib and more through a .pth file, which would hide what the hook
imports), reading the event JSON on stdin, telling the runtime (mark-session-active) and exiting; the
floor runs with that environment's interpreter. Both run with bytecode caching on (a private
PYTHONPYCACHEPREFIX, warmed up first), as installed packages do.

Target (issue 22): <= 1.2x the floor in wall time, asserted with LIDGUARD_BENCH_STRICT=1 (a quiet
machine). Otherwise (ci/test.sh runs the benchmarks once as plain tests, beside the rest of the suite) it
asserts what holds under load: the hook's CPU time <= SMOKE_RATIO x the floor's (bench_timing.py), which
catches heavy imports (typing + pathlib alone are ~0.3x; the full CLI with argparse and pydantic far more)
coming back. Both figures are printed.
"""

from __future__ import annotations

import json
import statistics
import subprocess

import pytest
from bench_timing import STRICT, ProcessTime, timed_process

FLOOR_CODE = "import json, socket, os"
TARGET_RATIO = 1.2
SMOKE_RATIO = 1.6  # CPU time, asserted under load: today ~1.1-1.2; typing + pathlib back would be ~1.5
BENCH_ROUNDS = 30
SMOKE_ROUNDS = 7
PROMPT = {"session_id": "bench", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "run the tests"}
PRE_TOOL_USE = {"session_id": "bench", "transcript_path": "/w/t.jsonl", "cwd": "/w/app", "permission_mode": "default",
                "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "echo hello", "description": "Print hello"}, "tool_use_id": "toolu_1"}
SHELL = {"tool_name": "run_shell_command", "tool_input": {"command": "echo hello", "description": "Print hello"}}
# provider -> (its prompt event, its tool event)
EVENTS = {
    "claude": (PROMPT, PRE_TOOL_USE),
    "qwen": (PROMPT, {**PRE_TOOL_USE, **SHELL, "permission_mode": "yolo", "tool_call_id": "call_1"}),
    "gemini": ({**PROMPT, "hook_event_name": "BeforeAgent"},
               {"session_id": "bench", "transcript_path": "/w/t.jsonl", "cwd": "/w/app",
                "hook_event_name": "BeforeTool", **SHELL}),
}


def _timed(command: list[str], env: dict[str, str], stdin: bytes) -> ProcessTime:
    timing, completed = timed_process(command, env, stdin=stdin)
    assert completed.returncode == 0, completed.stderr
    return timing


def _environment(lidguard) -> dict[str, str]:
    env = {**lidguard.env, "PYTHONPYCACHEPREFIX": str(lidguard.home / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _session_is_live(lidguard, env: dict[str, str], provider: str, script: str) -> bool:
    hook = [script, f"{provider}-hook"]
    subprocess.run(hook, env=env, input=json.dumps(EVENTS[provider][0]).encode(), capture_output=True, timeout=60)
    status = subprocess.run([script, "status", "--json"], env=env, capture_output=True, timeout=60)
    try:
        return any(s["sessionIdentifier"] == "bench" for s in json.loads(status.stdout)["sessions"])
    except (ValueError, KeyError):
        return False


@pytest.mark.parametrize("provider", list(EVENTS))
def test_pre_tool_use_of_a_live_session_against_bare_python(lidguard, benchmark, provider, fresh_venv):
    env = _environment(lidguard)
    script = str(fresh_venv.console_script)
    hook = [script, f"{provider}-hook"]
    floor = [str(fresh_venv.python), "-c", FLOOR_CODE]
    payload = json.dumps(EVENTS[provider][1]).encode()
    # The prompt auto-starts the runtime (on a loaded machine it may need more than the client's 5 s: retry).
    assert lidguard.wait_until(lambda: _session_is_live(lidguard, env, provider, script), timeout=90)
    for _ in range(3):  # warm bytecode caches and the runtime
        _timed(floor, env, payload)
        _timed(hook, env, payload)
    floors: list[ProcessTime] = []
    hooks: list[ProcessTime] = []

    def measure_floor() -> None:  # pedantic's setup: runs before each timed hook, untimed
        floors.append(_timed(floor, env, payload))

    def measure_hook() -> None:
        hooks.append(_timed(hook, env, payload))

    # Disabled (--benchmark-disable), pedantic runs one floor+hook pair: add a few more ourselves.
    benchmark.pedantic(measure_hook, setup=measure_floor, rounds=BENCH_ROUNDS, iterations=1)
    if benchmark.disabled:
        for index in range(SMOKE_ROUNDS - 1):
            first, second = (measure_hook, measure_floor) if index % 2 == 0 else (measure_floor, measure_hook)
            first()
            second()
    log = (lidguard.data_dir / f"{provider}-hook-events.log").read_text()
    assert "command=mark-session-active" in log and "succeeded=true" in log.rsplit("kind=runtime-result", 1)[1]
    # Each pair ran back to back under the same machine load: the median of the pair ratios.
    ratio = statistics.median(h.wall / f.wall for h, f in zip(hooks, floors, strict=True))
    cpu_ratio = statistics.median(h.cpu / f.cpu for h, f in zip(hooks, floors, strict=True))
    hook_ms, floor_ms = (statistics.median(t.wall for t in times) * 1000 for times in (hooks, floors))
    event = EVENTS[provider][1]["hook_event_name"]
    figure = (f"lidguard {provider}-hook {event} (live session) {hook_ms:.1f} ms vs floor {floor_ms:.1f} ms: "
              f"ratio {ratio:.2f} (CPU time {cpu_ratio:.2f}) over {len(hooks)} interleaved rounds")
    benchmark.extra_info.update(floor_median_ms=floor_ms, hook_median_ms=hook_ms, ratio=ratio, cpu_ratio=cpu_ratio)
    print(figure)
    if STRICT:
        assert ratio <= TARGET_RATIO, figure
    assert cpu_ratio <= SMOKE_RATIO, figure
