"""Fault injection on the start path: for each file a hook-driven start touches (``FAULT_FILES``) and
each fault (``FAULTS``), a real ``lidguard claude-hook`` UserPromptSubmit with no runtime running still
ends with keep-awake protection applied (the fake platform's ``protection-applied``, the session in
``status``), and the hook exits 0 with empty output within its budget.

``LIDGUARD_FAULT_TABLE=<file>`` appends one ``file<TAB>fault<TAB>outcome<TAB>seconds`` line per case
(the closing note's table: ``python3 tests/faults/fault_table.py <file>``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from lidguard.hooks.runner import START_REPLY_TIMEOUT_SECONDS

from .fault_matrix import FAULT_FILES, FAULTS, KNOWN_FAILURES, FaultFile, apply_fault, enospc_env

# A start may launch the runtime and waits for its reply up to START_REPLY_TIMEOUT_SECONDS; the rest
# is interpreter start-up on a loaded 2-core machine.
START_HOOK_BUDGET_SECONDS = START_REPLY_TIMEOUT_SECONDS + 5.0
PROMPT = {"session_id": "fault-s1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "go"}


def _cases() -> list[object]:
    cases = []
    for fault_file in FAULT_FILES:
        for fault in FAULTS:
            marks = []
            reason = KNOWN_FAILURES.get((fault_file.name, fault))
            if reason is not None:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            cases.append(pytest.param(fault_file, fault, marks=marks, id=f"{fault_file.name}-{fault}"))
    return cases


def _protected(lidguard) -> bool:
    return any(action.get("action") == "protection-applied" for action in lidguard.actions())


def _session_active(lidguard, env: dict[str, str]) -> bool:
    result = subprocess.run([sys.executable, "-m", "lidguard", "status", "--json"], env=env, text=True,
                            capture_output=True, timeout=30)
    if result.returncode != 0:
        return False
    return any(session.get("sessionIdentifier") == "fault-s1" for session in json.loads(result.stdout)["sessions"])


def _record(fault_file: FaultFile, fault: str, outcome: str, seconds: float) -> None:
    table = os.environ.get("LIDGUARD_FAULT_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as handle:
            handle.write(f"{fault_file.name}\t{fault}\t{outcome}\t{seconds:.1f}\n")


@pytest.mark.parametrize(("fault_file", "fault"), _cases())
def test_a_hook_driven_start_protects_whatever_the_file_holds(lidguard, fault_file: FaultFile, fault: str,
                                                              load_allowance):
    elsewhere = lidguard.home / "elsewhere"
    elsewhere.mkdir()
    target = apply_fault(lidguard.data_dir, fault_file, fault, elsewhere)
    env = enospc_env(lidguard.env, fault_file) if fault == "ENOSPC" else lidguard.env
    outcome, seconds = "failed", 0.0
    allowance = load_allowance(20.0)  # two interpreters (hook, runtime) start here
    try:
        began = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=env,
                                input=json.dumps(PROMPT).encode(), capture_output=True,
                                timeout=START_HOOK_BUDGET_SECONDS + 30)
        seconds = time.monotonic() - began
        assert (result.returncode, result.stdout) == (0, b""), result.stderr
        assert seconds < START_HOOK_BUDGET_SECONDS + allowance, (seconds, allowance)
        # The runtime applies protection before it answers the start; status confirms the session.
        assert lidguard.wait_until(lambda: _protected(lidguard)), lidguard.actions()
        assert lidguard.wait_until(lambda: _session_active(lidguard, env))
        if fault == "ENOSPC":  # the injection took effect: not one byte reached the file
            path = lidguard.data_dir / fault_file.relative_path
            assert not path.exists() or path.is_socket() or path.stat().st_size == 0
        if target is not None and fault_file.name != "settings.json":
            assert target.read_bytes() == b"{}\n", "a log, journal or backup never writes through a symlink"
        outcome = "protected"
    finally:
        _record(fault_file, fault, outcome, seconds)
