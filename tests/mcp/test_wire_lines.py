"""wire_lines.py in process: the top-level members of a JSON object read without recursion (what the MCP
wire answers a too-deep or oversized line with), and stdin read in bounded lines."""

from __future__ import annotations

import io
import json
import time

import pytest

from lidguard.mcp.wire_lines import MAX_MEMBERS, NESTED, BoundedLines, OversizedLine, top_level_members


@pytest.mark.parametrize(("text", "expected"), [
    ('{"jsonrpc":"2.0","id":7,"method":"ping"}', {"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    ('  {"params":{"id":5,"x":[{"id":4}]},"id":"six"}', {"params": NESTED, "id": "six"}),
    ('{"params":{"id":5}}', {"params": NESTED}),  # an inner id is not the request's
    ('{"\\u0069d":8,"method":"m"}', {"id": 8, "method": "m"}),  # an escaped key
    ('{"a":"]}\\"{[","b":"x\\\\","id":9}', {"a": ']}"{[', "b": "x\\", "id": 9}),  # brackets and quotes in strings
    ('{"a":' + "[" * 50_000 + "]" * 50_000 + ',"id":10}', {"a": NESTED, "id": 10}),  # any depth, no recursion
    ('{"a":[[1,[2]],{"b":[3]}],"id":11}', {"a": NESTED, "id": 11}),
    ('{"id" : 12 , "method" : "late"}', {"id": 12, "method": "late"}),
    ('{"id":1,"id":2}', {"id": 1}),  # the first one wins
    ('{"method":"m","params":{"x":"cut off', {"method": "m", "params": NESTED}),  # truncated
    ('{"id":"cut', {}),  # a value cut off is left out
    ('{"method":"m","params":{}} trailing', {"method": "m", "params": NESTED}),
    ("[1, 2]", None), ("", None), ('"text"', None),
])
def test_top_level_members(text: str, expected: dict | None) -> None:
    assert top_level_members(text) == expected


def test_top_level_members_stops_once_id_and_method_are_known() -> None:
    members = top_level_members('{"id":1,"method":"m","params":' + "[" * 10 + ',"late":1}')
    assert members == {"id": 1, "method": "m"}


def test_top_level_members_reads_at_most_max_members_keys() -> None:
    keys = ",".join(f'"k{index}":{index}' for index in range(MAX_MEMBERS - 1))
    assert top_level_members("{" + keys + ',"id":1}')["id"] == 1  # type: ignore[index]
    assert "id" not in top_level_members("{" + keys + ',"extra":0,"id":1}')  # type: ignore[operator]
    many = "{" + '"k":1,' * 170_000 + '"id":1}'
    started = time.thread_time()
    assert top_level_members(many) == {"k": 1}
    assert time.thread_time() - started < 0.1


def test_bounded_lines_cut_long_lines_and_carry_on() -> None:
    limit = 64
    exact = b"x" * limit  # a line of exactly the limit (its newline not counted) is read whole
    long_head = b'{"id":3,"method":"m","p":"'
    data = (exact + b"\n" + long_head + b"y" * 1000 + b'"}\n' + b'{"id":4}\n' + b"z" * (limit + 1) + b"\n"
            + "\u00e9\xff".encode("utf-8", errors="surrogatepass") + b"\xff\n" + b"last")
    reader = BoundedLines(io.BufferedReader(io.BytesIO(data), buffer_size=16), limit)  # type: ignore[arg-type]
    lines = []
    while (line := reader.read_line()) is not None:
        lines.append(line)
    assert lines[0] == exact.decode() + "\n"
    assert lines[1] == OversizedLine(len(long_head) + 1000 + 3, {"id": 3, "method": "m"})
    assert json.loads(lines[2]) == {"id": 4}
    assert lines[3] == OversizedLine(limit + 2, {})
    assert lines[4] == "\u00e9\u00ff\ufffd\n"  # broken UTF-8 replaced, as the SDK's reader does
    assert lines[5] == "last"  # the end of input without a newline
    assert len(lines) == 6


def test_bounded_lines_at_end_of_input_inside_a_long_line() -> None:
    reader = BoundedLines(io.BufferedReader(io.BytesIO(b'{"id":1,' + b" " * 500)), 100)  # type: ignore[arg-type]
    assert reader.read_line() == OversizedLine(508, {"id": 1})
    assert reader.read_line() is None
