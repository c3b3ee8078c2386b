"""``"ReplySessions": false``: a request that needs no session list (every hook event) gets a reply
whose ``Sessions`` is empty and whose ``SessionsOmitted`` counts them all; ``ActiveSessionCount`` and
the rest of the reply stay. Other values (absent, true, garbage) get the full list."""

from __future__ import annotations

import json
from typing import Any

from lidguard_runtime_harness import Harness, run_mock, with_runtime

from lidguard.runtime.responses import encode_reply


def _wire(reply: dict[str, Any]) -> dict[str, Any]:
    return json.loads(encode_reply(reply))


def test_a_reply_without_sessions_counts_them_and_keeps_everything_else() -> None:
    harness = Harness()

    async def body(h: Harness) -> None:
        for name in ("a", "b", "c"):
            assert (await h.start(name))["Succeeded"]
        full = _wire(await h.send("status"))
        brief = _wire(await h.send("status", ReplySessions=False))
        assert len(full["Sessions"]) == 3 and "SessionsOmitted" not in full
        assert brief["Sessions"] == [] and brief["SessionsOmitted"] == 3 and brief["ActiveSessionCount"] == 3
        assert {k: v for k, v in brief.items() if k not in ("Sessions", "SessionsOmitted")} == \
            {k: v for k, v in full.items() if k != "Sessions"}
        started = _wire(await h.start("d", ReplySessions=False))
        assert started["Succeeded"] and started["Message"].startswith("Started Claude:d.")
        assert started["Sessions"] == [] and started["SessionsOmitted"] == 4 == started["ActiveSessionCount"]
        active = _wire(await h.send("mark-session-active", Provider="Claude", SessionIdentifier="d",
                                    ReplySessions=False))
        assert active["Succeeded"] and active["Sessions"] == []
        # the brief reply did not leak into the cached full one
        assert len(_wire(await h.send("status"))["Sessions"]) == 4
        for value in (True, None, 0, "false", [], {"x": 1}):
            assert len(_wire(await h.send("status", ReplySessions=value))["Sessions"]) == 4, value
        stopped = _wire(await h.stop("d", ReplySessions=False))
        assert stopped["Message"] == "Stopped Claude:d." and stopped["SessionsOmitted"] == 3

    run_mock(lambda: with_runtime(harness, body))


def test_a_failure_reply_without_sessions_is_still_readable() -> None:
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("a")
        refused = _wire(await h.send("no-such-command", ReplySessions=False))
        assert refused["Succeeded"] is False and "Unsupported command" in refused["Message"]
        assert refused["Sessions"] == [] and refused["SessionsOmitted"] == 1
        empty = _wire(await Harness().runtime.handle_message({"v": 1, "Command": "status", "ReplySessions": False}))
        assert empty["Sessions"] == [] and "SessionsOmitted" not in empty

    run_mock(lambda: with_runtime(harness, body))


def test_a_brief_reply_never_orders_or_encodes_the_session_list(monkeypatch: Any) -> None:
    """The list a hook will not read is not built and then dropped (at 100 sessions that was most of
    the runtime's work per hook event); a full request still builds it, also after a brief one."""
    from lidguard.runtime import responses

    built: list[int] = []
    original = responses._cache.sessions

    def counting(state: Any) -> Any:
        built.append(len(state.sessions))
        return original(state)

    monkeypatch.setattr(responses._cache, "sessions", counting)
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("a")
        built.clear()
        for name in ("b", "c"):
            assert (await h.start(name, ReplySessions=False))["Succeeded"]
            await h.send("mark-session-active", Provider="Claude", SessionIdentifier=name, ReplySessions=False)
        assert (await h.stop("b", ReplySessions=False))["Succeeded"]
        assert (await h.send("no-such-command", ReplySessions=False))["SessionsOmitted"] == 2
        assert built == []
        assert len(_wire(await h.send("status"))["Sessions"]) == 2 and built

    run_mock(lambda: with_runtime(harness, body))
