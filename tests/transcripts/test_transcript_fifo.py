"""Issue 39.5: a FIFO as ``transcript_path`` never blocks a transcript read (non-blocking, regular files only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lidguard.runtime.components.transcripts import POLL_SECONDS, read_tail


def test_read_tail_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(read_tail(fifo))
        except OSError as error:
            outcome.append(error)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # unblock the old code's open() so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("read_tail blocked on a FIFO")
    assert isinstance(outcome[0], OSError)


def test_a_hook_with_a_fifo_transcript_leaves_the_runtime_answering(lidguard, load_allowance) -> None:
    fifo = lidguard.home / "transcript.jsonl"
    os.mkfifo(fifo)
    payload = {"session_id": "f1", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "x",
               "transcript_path": str(fifo)}
    hook = subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=lidguard.env,
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60)
    assert hook.returncode == 0
    assert lidguard.wait_until(lambda: any(s["sessionIdentifier"] == "f1"
                                           for s in lidguard.json("status")["sessions"]), timeout=60)
    later = time.time() + 60
    os.utime(fifo, (later, later))  # the FIFO "changed": the monitor reads its tail
    for _ in range(3):
        time.sleep(POLL_SECONDS)
        started = time.monotonic()
        result = lidguard.run("status", "--json", timeout=60)
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 5 + load_allowance()
    try:  # unblock a reader the old code left on open()
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_fifo_transcript_brought_back_by_the_journal_leaves_the_restarted_runtime_answering(
        lidguard, load_allowance) -> None:
    """Issue 39.5: the journal brings the FIFO path back after a crash; the restarted runtime monitors it
    again and still answers (the old code froze again on the same open())."""
    import signal

    fifo = lidguard.home / "transcript.jsonl"
    os.mkfifo(fifo)
    payload = {"session_id": "f2", "cwd": "/w/app", "hook_event_name": "UserPromptSubmit", "prompt": "x",
               "transcript_path": str(fifo)}
    subprocess.run([sys.executable, "-m", "lidguard", "claude-hook"], env=lidguard.env,
                   input=json.dumps(payload).encode(), capture_output=True, timeout=60, check=True)
    assert lidguard.wait_until(lambda: any(s["sessionIdentifier"] == "f2"
                                           for s in lidguard.json("status")["sessions"]), timeout=60)
    [pid] = lidguard.runtime_pids()
    os.kill(pid, signal.SIGKILL)
    assert lidguard.wait_until(lambda: not lidguard.runtime_pids(), timeout=30)
    later = time.time() + 60
    os.utime(fifo, (later, later))  # changed since the journaled baseline: the new monitor reads its tail
    try:
        lidguard.run("start", "--provider", "custom", "--session", "probe", check=True, timeout=60)
        for _ in range(3):
            started = time.monotonic()
            status = lidguard.run("status", "--json", timeout=60)
            assert status.returncode == 0, status.stderr
            assert time.monotonic() - started < 5 + load_allowance()
            assert "f2" in {s["sessionIdentifier"] for s in json.loads(status.stdout)["sessions"]}
            later += 60
            os.utime(fifo, (later, later))
    finally:
        try:  # unblock a reader the old code left on open()
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        lidguard.run("stop-runtime", "--force", timeout=60)
