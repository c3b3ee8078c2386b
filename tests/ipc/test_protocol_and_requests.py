"""The wire format and the request boundary, without a runtime."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lidguard.ipc import protocol
from lidguard.ipc.limits import MAX_PROCESS_IDENTIFIER
from lidguard.ipc.protocol import MAX_NESTING_DEPTH, ProtocolError, decode_message, encode_message
from lidguard.runtime.requests import RequestError, check_wire_message, parse_request


@pytest.mark.parametrize("line", [
    b"[" * 1000 + b"]" * 1000,
    b'{"v":1,"x":' + b"[" * 100_000 + b"}",
    b'{"v":1,"x":' + b'{"a":' * 70 + b"1" + b"}" * 70 + b"}",
    b"\xed\xa0\x80",
    b'{"v":1e400}',
    b'{"v":' + b"9" * 5000 + b"}",
    b'{"v":true}',
    b"",
    b"null",
])
def test_decode_refuses_with_a_protocol_error(line):
    with pytest.raises(ProtocolError):
        decode_message(line)


def test_nesting_up_to_the_limit_is_fine_and_brackets_in_strings_do_not_count():
    deep = b'{"v":1,"x":' + b"[" * (MAX_NESTING_DEPTH - 1) + b"]" * (MAX_NESTING_DEPTH - 1) + b"}"
    assert decode_message(deep)["v"] == 1
    text = b'{"v":1,"x":"' + b"[" * 5000 + b'\\"' + b"{" * 5000 + b'"}'
    assert decode_message(text)["x"].startswith("[[[")


def test_decode_turns_any_exception_into_a_protocol_error(monkeypatch):
    def explode(*args, **kwargs):
        raise MemoryError("boom") if False else RuntimeError("boom")

    monkeypatch.setattr(protocol.json, "loads", explode)
    with pytest.raises(ProtocolError):
        decode_message(b'{"v":1}')


def test_encode_never_raises_and_is_ascii():
    line = encode_message({"Message": "a\ud800b é", "Nan": float("nan")})
    line.decode("ascii")
    assert json.loads(line)["Succeeded"] is False
    line = encode_message({"Message": "a\ud800b é"})
    assert json.loads(line)["Message"] == "a\ud800b é"
    circular: dict = {}
    circular["self"] = circular
    assert json.loads(encode_message(circular))["Succeeded"] is False


def _start(**fields):
    return {"v": 1, "Command": "start", "Provider": "claude", "SessionIdentifier": "s", **fields}


@pytest.mark.parametrize(("fields", "named"), [
    ({"SessionIdentifier": "x" * 513}, "SessionIdentifier"),
    ({"ProviderName": "p" * 129}, "ProviderName"),
    ({"WorkingDirectory": "/" * 4097}, "WorkingDirectory"),
    ({"SessionEndReason": "r" * 513}, "SessionEndReason"),
    ({"WatchedProcessIdentifier": MAX_PROCESS_IDENTIFIER + 1}, "WatchedProcessIdentifier"),
    ({"WatchedProcessIdentifier": -1}, "WatchedProcessIdentifier"),
    ({"WatchedProcessIdentifier": 1.5}, "WatchedProcessIdentifier"),
    ({"WatchedProcessIdentifier": True}, "WatchedProcessIdentifier"),
    ({"WorkingDirectory": "/tmp/\udcff"}, "WorkingDirectory"),
    ({"Settings": {"Nested": ["\ud800"]}}, "Settings"),
    ({"\ud800": 1}, "\\ud800"),
])
def test_request_bounds_are_refused_naming_the_field(fields, named):
    with pytest.raises(RequestError, match="The request field") as caught:
        parse_request(_start(**fields))
    assert named in str(caught.value)
    str(caught.value).encode("utf-8")


def test_requests_within_bounds_parse():
    request = parse_request(_start(WatchedProcessIdentifier=MAX_PROCESS_IDENTIFIER, SessionIdentifier="x" * 512,
                                   Force=True, SessionEndReason="é😀"))
    assert request.watched_process_identifier == MAX_PROCESS_IDENTIFIER and request.force
    check_wire_message({"v": 1, "Command": "status", "WatchedProcessIdentifier": None})
    assert "shutdown" in protocol.COMMANDS


_WIRE_KEYS = ["Command", "Provider", "ProviderName", "SessionIdentifier", "IsProviderSessionEnd", "MatchAllSessions",
              "WatchedProcessIdentifier", "WorkingDirectory", "HasSettings", "Settings", "Force", "WaitForFollowUp",
              "FollowUpWaitSeconds", "RequestId", "SentAtUnixMilliseconds", "ToolCallState", "PauseSeconds",
              "IfNotRunning", "SessionStateReason", "Other"]
_WIRE_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=20),
    st.sampled_from(["start", "Running", "Finished", "yes", "OFF", "x" * 600]), st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(st.sampled_from(_WIRE_KEYS), _WIRE_VALUES, max_size=8))
def test_any_wire_object_is_a_typed_request_or_one_request_error(message):
    """The runtime's request boundary (no validation library behind it): whatever object arrives,
    parse_request returns fields of their declared types inside their bounds, or RequestError."""
    try:
        request = parse_request(message)
    except RequestError as error:
        assert str(error).startswith("The request field ")
        return
    assert type(request.command) is str and len(request.command) <= 64
    assert request.provider is None or type(request.provider) is str
    for flag in (request.is_provider_session_end, request.match_all_sessions, request.has_settings, request.force,
                 request.wait_for_follow_up, request.stop_hook_active, request.has_pending_provider_work,
                 request.if_not_running):
        assert type(flag) is bool
    pid = request.watched_process_identifier
    assert pid is None or 0 <= pid <= MAX_PROCESS_IDENTIFIER
    assert request.settings is None or isinstance(request.settings, dict)
    assert request.tool_call_state in ("", "Running", "Finished")
    assert request.pause_seconds is None or (type(request.pause_seconds) is int and request.pause_seconds >= 1)
    assert request.sent_at_milliseconds is None or type(request.sent_at_milliseconds) is int
    assert request.follow_up_wait_seconds is None or request.follow_up_wait_seconds >= 1
    assert type(request.working_directory) is str and type(request.request_id) is str
    assert type(request.session_state_reason) is str


@pytest.mark.parametrize(("fields", "expected"), [
    ({"Force": "yes", "MatchAllSessions": 0, "HasSettings": 1.0}, (True, False, True)),
    ({"Force": "OFF", "MatchAllSessions": "t", "HasSettings": False}, (False, True, False)),
])
def test_flags_read_as_the_wire_always_read_them(fields, expected):
    request = parse_request(_start(**fields))
    assert (request.force, request.match_all_sessions, request.has_settings) == expected


@pytest.mark.parametrize(("fields", "message"), [
    ({"Force": "maybe"}, "The request field Force is invalid: it must be true or false."),
    ({"Force": None}, "The request field Force is invalid: it must be true or false."),
    ({"Command": 5}, "The request field Command is invalid: it must be text."),
    ({"ProviderName": 5}, "The request field ProviderName is invalid: it must be text."),
    ({"PauseSeconds": 5.0}, "The request field PauseSeconds is invalid: it must be an integer."),
    ({"PauseSeconds": 0}, "The request field PauseSeconds is invalid: it must be from 1 to"),
    ({"SentAtUnixMilliseconds": True}, "The request field SentAtUnixMilliseconds is invalid: it must be an integer."),
    ({"Settings": [1]}, "The request field Settings is invalid: it must be a JSON object."),
    ({"ToolCallState": "running"}, "The request field ToolCallState is invalid: it must be Running, Finished or"),
])
def test_a_bad_field_is_one_sentence_naming_it(fields, message):
    with pytest.raises(RequestError) as caught:
        parse_request(_start(**fields))
    assert str(caught.value).startswith(message)


def test_a_request_without_a_command_is_refused():
    with pytest.raises(RequestError, match="The request field Command is invalid: it is required."):
        parse_request({"v": 1, "Provider": "claude"})


def _depth_exceeds_by_regex(text: bytes, limit: int) -> bool:
    """The original scan (escapes, then strings, removed by regex): the oracle for the faster one."""
    import re
    from itertools import accumulate

    if text.count(b"[") + text.count(b"{") <= limit:
        return False
    without_strings = re.sub(rb'"[^"]*"', b"", re.sub(rb"\\.", b"", text, flags=re.DOTALL))
    steps = [{91: 1, 123: 1, 93: -1, 125: -1}.get(byte, 0) for byte in without_strings]
    return max(accumulate(steps, initial=0)) > limit


@settings(max_examples=3000, deadline=None)
@given(text=st.binary(max_size=80).map(lambda raw: bytes(b'[]{}"\\a,:'[byte % 9] for byte in raw)),
       limit=st.integers(min_value=0, max_value=6))
def test_nesting_depth_scan_matches_the_regex_scan(text: bytes, limit: int) -> None:
    assert protocol.nesting_depth_exceeds(text, limit) is _depth_exceeds_by_regex(text, limit)


@pytest.mark.parametrize("text", [
    b'{"v":1,"Sessions":[' + b",".join([b'{"a":"x","b":[1,{"c":null}]}'] * 100) + b"]}",  # a wide reply
    b'{"v":1,"a":"' + b"[" * 100 + b'"}',  # brackets inside a string
    b'{"v":1,"a":"\\"' + b"[" * 100 + b'"}',  # ... after an escaped quote
    b"[" * (MAX_NESTING_DEPTH + 1) + b"]" * (MAX_NESTING_DEPTH + 1),
    b'["\\\\",' * 70 + b"]" * 70,
    b'"' + b"[" * 70,  # a stray quote: what follows it still counts
])
def test_nesting_depth_scan_on_wide_and_tricky_lines(text: bytes) -> None:
    assert protocol.nesting_depth_exceeds(text) is _depth_exceeds_by_regex(text, MAX_NESTING_DEPTH)
