"""Issue 6: nothing a request does kills the runtime; it keeps running with its sessions."""

from __future__ import annotations

import json

import pytest

from lidguard.ipc.limits import MAX_PROCESS_IDENTIFIER, MAX_SESSION_IDENTIFIER_CHARS


def test_deep_nesting_gets_a_failure_reply(runtime):
    payload = b'{"v":1,"Command":"status","x":' + b"[" * 1000 + b"]" * 1000 + b"}\n"
    assert len(payload) < 4096
    reply = runtime.raw(payload)
    assert reply["Succeeded"] is False and "nested" in reply["Message"]
    bare = runtime.raw(b"[" * 5000 + b"\n")
    assert bare["Succeeded"] is False
    runtime.assert_serving(["anchor"])


@pytest.mark.parametrize("field", ["Command", "SessionIdentifier", "WorkingDirectory", "ProviderName",
                                   "SessionEndReason", "SessionStateReason", "TranscriptPath", "Provider"])
def test_lone_surrogates_are_refused_naming_the_field(runtime, field):
    message = {"v": 1, "Command": "start", "Provider": "mcp", "ProviderName": "tool", "SessionIdentifier": "s2",
               "SessionEndReason": "r", "SessionStateReason": "r"}
    message[field] = "a\ud800b"
    payload = json.dumps(message).encode() + b"\n"  # the escape "\ud800" on the wire
    reply = runtime.raw(payload)
    assert reply["Succeeded"] is False
    assert field in reply["Message"] or "Unsupported command" in reply["Message"], reply["Message"]
    raw_surrogate = payload.replace(b"\\ud800", b"\xed\xa0\x80")  # the surrogate as (invalid) UTF-8 bytes
    assert runtime.raw(raw_surrogate)["Succeeded"] is False
    runtime.assert_serving(["anchor"])


def test_surrogates_in_stop_and_mark_requests_never_reach_the_logs(runtime):
    for command in ("stop", "mark-session-active", "mark-session-softlocked", "remove-session"):
        reply = runtime.request({"Command": command, "Provider": "claude", "SessionIdentifier": "anchor",
                                 "SessionEndReason": "\udfff", "SessionStateReason": "\udc80"})
        assert reply["Succeeded"] is False, (command, reply)
    runtime.assert_serving(["anchor"])


def test_long_session_ids_are_refused_and_replies_stay_small(runtime):
    long_id = "x" * (400 * 1024)
    for index in range(4):
        reply = runtime.request({"Command": "start", "Provider": "codex", "SessionIdentifier": f"{index}{long_id}"})
        assert reply["Succeeded"] is False and "SessionIdentifier" in reply["Message"]
    longest = "y" * MAX_SESSION_IDENTIFIER_CHARS
    assert runtime.request({"Command": "start", "Provider": "codex", "SessionIdentifier": longest})["Succeeded"]
    assert runtime.request({"Command": "stop", "Provider": "codex", "SessionIdentifier": longest})["Succeeded"]
    runtime.assert_serving(["anchor"])


def test_out_of_range_process_identifiers_are_refused(runtime):
    for pid in (2**31, 99999999999999999999, -1, 10**400):
        payload = ('{"v":1,"Command":"start","Provider":"codex","SessionIdentifier":"p",'
                   f'"WatchedProcessIdentifier":{pid}}}\n').encode()
        reply = runtime.raw(payload)
        assert reply["Succeeded"] is False and "WatchedProcessIdentifier" in reply["Message"], reply
    assert runtime.request({"Command": "start", "Provider": "codex", "SessionIdentifier": "p",
                            "WatchedProcessIdentifier": MAX_PROCESS_IDENTIFIER})["Succeeded"]
    cleaned = runtime.request({"Command": "cleanup-orphans"})
    assert cleaned["Succeeded"] is True, cleaned
    runtime.assert_serving(["anchor"])


def test_huge_numbers_and_binary_get_failure_replies(runtime):
    for payload in (b'{"v":1e400,"Command":"status"}\n', b'{"v":1,"Command":"status","HasSettings":1e400}\n',
                    b'{"v":' + b"9" * 5000 + b',"Command":"status"}\n', b"\x00\xff\xfe\x80\n",
                    b'{"v":1,"Command":"start","Provider":"codex","SessionIdentifier":1e400}\n'):
        reply = runtime.raw(payload)
        assert reply["Succeeded"] is False, (payload[:40], reply)
    runtime.assert_serving(["anchor"])


def test_replies_are_ascii_json_lines(runtime):
    reply = runtime.raw_bytes(b'{"v":1,"Command":"\xc3\xa9t\xc3\xa9"}\n')
    assert reply.endswith(b"\n") and reply.count(b"\n") == 1
    reply.decode("ascii")
    assert "Unsupported command" in json.loads(reply)["Message"]
