"""Issue 6: log writers append one line per event, trim rarely, are private and never raise."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime, timezone

import pytest

from lidguard import fileio
from lidguard.runtime.logs import SESSION_LOG_KEEP, ExceptionLog, SessionLog, SuspendHistory, SuspendHistoryEntry
from lidguard.runtime.sessions import AgentProvider, SessionKey

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _append(log: SessionLog, index: int, **fields) -> None:
    log.append(event_name="e", command="c", message=f"m{index}", now=NOW, active_session_count=0, **fields)


def test_session_log_appends_without_rewriting_and_trims_at_twice_the_retention(tmp_path, monkeypatch):
    path = tmp_path / "data" / "session-execution.log"
    log = SessionLog(path)
    rewrites = []
    real_write_atomic = fileio.write_atomic
    monkeypatch.setattr(fileio, "write_atomic", lambda *a, **k: (rewrites.append(a[0]), real_write_atomic(*a, **k)))
    for index in range(2 * SESSION_LOG_KEEP):
        _append(log, index)
    assert rewrites == [], "appending must not rewrite the file"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_text().splitlines()) == 2 * SESSION_LOG_KEEP
    _append(log, 2 * SESSION_LOG_KEEP)
    assert len(rewrites) == 1
    lines = path.read_text().splitlines()
    assert len(lines) == SESSION_LOG_KEEP
    assert json.loads(lines[-1])["Message"] == f"m{2 * SESSION_LOG_KEEP}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry["Message"] for entry in log.read()][0] == f"m{SESSION_LOG_KEEP + 1}"


def test_a_new_writer_counts_the_existing_file_and_readers_see_the_retention(tmp_path):
    path = tmp_path / "session-execution.log"
    first = SessionLog(path)
    for index in range(SESSION_LOG_KEEP + 100):
        _append(first, index)
    second = SessionLog(path)  # a later runtime
    for index in range(SESSION_LOG_KEEP + 100, 2 * SESSION_LOG_KEEP + 1):
        _append(second, index)
    assert len(path.read_text().splitlines()) == SESSION_LOG_KEEP
    assert len(SessionLog(path).read()) == SESSION_LOG_KEEP


def test_lone_surrogates_are_escaped_not_raised(tmp_path):
    path = tmp_path / "session-execution.log"
    log = SessionLog(path)
    key = SessionKey.create(AgentProvider.CLAUDE, "id\ud800", "")
    log.append(event_name="e\udfff", command="c", message="m\ud800", now=NOW, active_session_count=1, key=key,
               session_end_reason="\udc80")
    [entry] = log.read()
    assert entry["Message"] == "m\ud800" and entry["SessionIdentifier"] == "id\ud800"
    path.read_bytes().decode("utf-8")  # the file itself stays valid UTF-8


def test_log_writes_never_raise(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    log = SessionLog(blocker / "session-execution.log")
    _append(log, 1)  # ENOTDIR
    _append(log, 2, extra={"Bad": object()})
    history = SuspendHistory(blocker / "suspend-history.log")
    history.append(_history_entry("m\ud800"), keep=10)
    ExceptionLog(blocker / "log" / "exceptions.log").record("event\ud800", ValueError("\ud800"))
    good = SessionLog(tmp_path / "session-execution.log")
    _append(good, 3, extra={"Bad": object(), "Surrogate": "\udc00"})
    SuspendHistory(tmp_path / "suspend-history.log").append(_history_entry("m\ud800"), keep=10)
    assert len(good.read()) == 1


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_exception_log_survives_unprintable_errors(tmp_path):
    path = tmp_path / "log" / "exceptions.log"
    ExceptionLog(path).record("e", _Unprintable())
    ExceptionLog(path).record("f", ValueError("x\ud800"))
    text = path.read_text()
    assert "event=e" in text and "exception.message=<unprintable: RuntimeError>" in text
    assert "event=f" in text and "x\\ud800" in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def _history_entry(message: str) -> SuspendHistoryEntry:
    return SuspendHistoryEntry(recorded_at=NOW, suspend_mode="Sleep", reason="Completed", succeeded=True,
                               message=message, event_name="suspend", command_name="stop",
                               active_session_count=0, suspend_trigger_session_count=1)


@pytest.mark.parametrize("keep", [1, 10])
def test_suspend_history_keeps_its_retention(tmp_path, keep):
    path = tmp_path / "suspend-history.log"
    history = SuspendHistory(path)
    for index in range(5 * keep + 3):
        history.append(_history_entry(f"m{index}"), keep=keep)
    assert len(path.read_text().splitlines()) <= 2 * keep
    newest = history.newest_first()
    assert len(newest) == keep and newest[0]["Message"] == f"m{5 * keep + 2}"
    history.append(_history_entry("off"), keep=None)
    assert history.newest_first()[0]["Message"] == f"m{5 * keep + 2}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_append_line_is_one_write(tmp_path, monkeypatch):
    writes = []
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: (writes.append(data), real_write(fd, data))[1])
    fileio.append_line(tmp_path / "x.log", fileio.json_line({"a": "\ud800", "b": 1}))
    assert len(writes) == 1 and writes[0].endswith(b"\n")


def test_a_log_removed_or_replaced_behind_the_writer_is_recreated(tmp_path):
    path = tmp_path / "session-execution.log"
    log = SessionLog(path)
    _append(log, 1)
    path.unlink()
    _append(log, 2)
    assert [entry["Message"] for entry in log.read()] == ["m2"]
    path.rename(tmp_path / "rotated.log")
    _append(log, 3)
    assert [entry["Message"] for entry in log.read()] == ["m3"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
