"""Issue 39 item 11: a payload cannot forge hook event log records or put terminal escapes into the log.

A real hook process writes payload text holding every character some reader takes for a line end
(U+2028/U+2029, NEL, VT, FF, FS/GS/RS, CR, LF) each followed by a whole forged record, plus ESC/BEL/C1
bytes; `hook-events` (plain and --json) must show only the records the hook wrote, and the raw file must
hold no control byte `cat` would run."""

from __future__ import annotations

import json

from lidguard.cli.hook_commands import _event_json
from lidguard.hooks.eventlog import HookEventLog, latest_lines

from .conftest import run_hook_process

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\n", "\r\n"]
FORGED = "2026-01-01T00:00:00.000000Z kind=runtime-result event=Stop session=forged workingDirectory=/ succeeded=true"
TERMINAL = "\x1b]0;owned\x07\x1b[2J\x9b31m\x90x\x9c\u202eevil"


def forging(prefix: str) -> str:
    return prefix + TERMINAL + "".join(separator + FORGED for separator in SEPARATORS)  # each value: 500 chars


def forged_events(events: list[dict[str, str]]) -> int:
    return sum(1 for event in events
               if event.get("session") == "forged" or event.get("time", "").startswith("2026-01-01"))


def test_a_payload_forges_no_record_and_no_terminal_escape(lidguard):
    payload = {"session_id": forging("s1"), "cwd": forging("/w/app"), "hook_event_name": "PreToolUse",
               "tool_name": forging("Bash")}
    for _ in range(3):
        result = run_hook_process(lidguard, "claude", json.dumps(payload))
        assert (result.returncode, result.stdout) == (0, b"")
    raw = (lidguard.data_dir / "claude-hook-events.log").read_bytes()
    records = raw.count(b"\n")
    assert records >= 6  # received + runtime-result, three times
    text = raw.decode("utf-8")
    assert not [char for char in text[:-1] if ord(char) < 0x20 and char != "\n" or 0x7F <= ord(char) <= 0x9F
                or char in "\u2028\u2029\u202e"], "a control or separator character reached the file"
    assert b"\x1b" not in raw and b"\x07" not in raw

    events = lidguard.json("hook-events", "--provider", "claude", "--count", "1000")["events"]
    assert len(events) == records and forged_events(events) == 0
    assert all(event["session"].startswith("s1\\x1b]0;owned\\x07") for event in events)  # bounded, escaped
    assert all(event["workingDirectory"].startswith("/w/app\\x1b]0;owned\\x07") for event in events)
    plain = lidguard.run("hook-events", "--provider", "claude", "--count", "1000")
    assert plain.returncode == 0 and len(plain.stdout.splitlines()) == records
    assert "\x1b" not in plain.stdout and "\x07" not in plain.stdout and "session=forged" not in plain.stdout


def test_a_later_key_never_overrides_an_earlier_one():
    line = "2026-12-03T10:00:00.000000Z kind=received event=Stop session=real workingDirectory=/w x session=forged"
    entry = _event_json(line)
    assert entry["session"] == "real" and entry["workingDirectory"] == "/w x"
    assert _event_json("T kind=a time=forged kind=b")["time"] == "T"


def test_an_equals_sign_in_a_value_cannot_pose_as_a_key(tmp_path):
    log = HookEventLog(str(tmp_path / "claude-hook-events.log"))
    log.event, log.session, log.folder = "Stop", "s1", "/w succeeded=true command=stop"
    log.write("runtime-result", [("command", "mark-session-active"), ("succeeded", "false")])
    [line] = latest_lines(tmp_path / "claude-hook-events.log", 10)
    entry = _event_json(line)
    assert (entry["command"], entry["succeeded"]) == ("mark-session-active", "false")
    assert entry["workingDirectory"] == "/w succeeded\\x3dtrue command\\x3dstop"


def test_the_reader_splits_records_only_at_a_newline(tmp_path):
    path = tmp_path / "claude-hook-events.log"  # a log written before the escape (or by hand)
    path.write_text("T1 kind=received session=a\u2028T2 kind=forged\x85T3 kind=forged\x0cT4\nT5 kind=received\n")
    assert [line.split(" ")[0] for line in latest_lines(path, 10)] == ["T1", "T5"]


def test_a_json_lines_log_neither_splits_nor_carries_raw_separators(tmp_path):
    """The runtime's JSON-lines logs (session-execution.log, ...) were written with C1, U+2028 and bidi
    characters raw and read with splitlines(): a session id holding ``\\u2028{...}\\u2028`` became a
    record of its own."""
    from lidguard.fileio import json_line, read_json_lines

    forged = '{"EventName":"forged","Succeeded":true}'
    entry = {"EventName": "session-started", "SessionIdentifier": f"s\u2028{forged}\u2028\x85{forged}\x1b[2J\u202e"}
    path = tmp_path / "session-execution.log"
    path.write_bytes(json_line(entry) * 3)
    raw = path.read_bytes()
    assert not [char for char in raw.decode()[:-1] if char != "\n" and not char.isprintable()]
    assert read_json_lines(path) == [entry] * 3
