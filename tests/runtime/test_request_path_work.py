"""Work a request does once, not twice (issue 22, the burst): each shortcut is held to the full path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lidguard_runtime_harness import Harness, run_mock, with_runtime

from lidguard.runtime import requests, server


def _count_wire_checks(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    checked: list[dict[str, Any]] = []
    real = requests.check_wire_message

    def counting(message: dict[str, Any]) -> None:
        checked.append(message)
        real(message)

    monkeypatch.setattr(requests, "check_wire_message", counting)
    monkeypatch.setattr(server, "check_wire_message", counting)
    return checked


def test_a_request_through_the_server_is_wire_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = _count_wire_checks(monkeypatch)
    harness = Harness()

    async def body(h: Harness) -> None:
        line = json.dumps({"v": 1, "Command": "start", "Provider": "Claude", "SessionIdentifier": "once"}).encode()
        reply = await server._answer(h.runtime, line, "line")
        assert reply["Succeeded"], reply
        assert len(checked) == 1

    run_mock(lambda: with_runtime(harness, body))


@pytest.mark.parametrize("field", ["SessionIdentifier", "WorkingDirectory", "Other\ud800"])
def test_a_bad_request_is_refused_by_the_server_and_by_the_runtime_called_directly(field: str) -> None:
    """The server's look answers before the runtime; a caller of ``handle_message`` that did not look (the
    default) still gets the refusal from ``parse_request``."""
    harness = Harness()
    message = {"v": 1, "Command": "start", "Provider": "Claude", "SessionIdentifier": "s",
               field: "lone \udc80 surrogate"}

    async def body(h: Harness) -> None:
        line = json.dumps(message).encode()
        through_server = await server._answer(h.runtime, line, "line")
        direct = await h.runtime.handle_message(message)
        for reply in (through_server, direct):
            assert reply["Succeeded"] is False and "lone UTF-16 surrogate" in reply["Message"], reply
        assert not h.runtime.state.sessions

    run_mock(lambda: with_runtime(harness, body))
