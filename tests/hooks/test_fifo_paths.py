"""Issue 39 item 5 (the rest): a FIFO at any path the hooks or the runtime open never blocks them.

Every read of such a path goes through ``fileio_open`` (non-blocking, regular files only): the hook event
log (its append, its trim - which opened the file with a plain ``open()`` -, `hook-events`), the Claude /
Codex / Copilot transcript tails, the Codex rollout tails and the session journal. Each reader runs in a
thread; one still blocked after the bound is released (a writer opens the FIFO) and fails the test."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lidguard.hooks.eventlog import HookEventLog, latest_lines
from lidguard.runtime.components import codex_rollouts, transcripts
from lidguard.runtime.journal_file import read_journal

BOUND_SECONDS = 10.0


def _never_blocks(fifo: Path, function: Callable[[], Any]) -> Any:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # noqa: BLE001 - reported below
            outcome["error"] = error

    began = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(BOUND_SECONDS)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the blocked open() returns: the thread ends
        thread.join(BOUND_SECONDS)
        pytest.fail(f"blocked on the FIFO {fifo.name} for {time.monotonic() - began:.1f} s")
    return outcome


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "claude-hook-events.log"
    os.mkfifo(path)
    return path


def test_the_hook_log_trim_never_blocks_on_a_fifo(fifo: Path):
    log = HookEventLog(str(fifo))
    outcome = _never_blocks(fifo, log._trim)
    assert isinstance(outcome.get("error"), OSError)  # refused (the append counts it as a failed write)


def test_the_hook_log_append_and_hook_events_never_block_on_a_fifo(fifo: Path):
    log = HookEventLog(str(fifo))
    _never_blocks(fifo, lambda: log.write("received", (("action", "activity"),)))
    assert log.failures == 1
    assert _never_blocks(fifo, lambda: latest_lines(fifo, 10)) == {"value": []}


@pytest.mark.parametrize("reader", ["transcript", "rollout", "journal"])
def test_runtime_readers_never_block_on_a_fifo(fifo: Path, reader: str):
    if reader == "transcript":
        outcome = _never_blocks(fifo, lambda: transcripts.read_tail(fifo))
        assert isinstance(outcome.get("error"), OSError)
    elif reader == "rollout":
        assert _never_blocks(fifo, lambda: codex_rollouts.read_tail(fifo)) == {"value": (None, False)}
    else:
        outcome = _never_blocks(fifo, lambda: read_journal(fifo))
        assert outcome["value"].problem is not None and outcome["value"].records == []
