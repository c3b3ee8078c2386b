"""Who a custom session is: the start's ProviderName kept for Custom sessions, shown, never its identity.

Cursor, Grok Build and Devin run Claude Code's hooks and are sent as ``Custom`` + ``ProviderName``
(issue 35.4); a wrapper around an agent with no hooks (Amp, Aider) starts ``--provider custom
--provider-name Amp``. Before, the runtime dropped the name of every non-MCP session: status said
``Custom`` for all of them.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from lidguard_runtime_harness import Harness, run_mock, with_runtime

from lidguard.providers import provider_display, session_label
from lidguard.runtime.journal_file import session_from_json, session_to_json
from lidguard.runtime.sessions import AgentProvider, Session, SessionKey


def _sessions(response: dict) -> list[dict]:
    return list(response.get("Sessions") or [])


def test_a_custom_session_keeps_its_name_which_never_changes_its_identity():
    harness = Harness()

    async def body(h: Harness) -> None:
        assert (await h.start("grok-1", "Custom", ProviderName="  Grok  "))["Succeeded"]
        [session] = _sessions(await h.send("status"))
        assert (session["Provider"], session["ProviderName"]) == ("Custom", "Grok")
        # a later event of the same session without the name keeps it
        await h.start("grok-1", "Custom")
        [session] = _sessions(await h.send("status"))
        assert session["ProviderName"] == "Grok"
        # the key is provider + id: a stop without the name ends it, a second name is not a second session
        await h.start("grok-1", "Custom", ProviderName="Other")
        assert len(_sessions(await h.send("status"))) == 1
        assert (await h.stop("grok-1", "Custom"))["Succeeded"]
        assert _sessions(await h.send("status")) == []

    run_mock(lambda: with_runtime(harness, body))


def test_only_custom_sessions_take_a_name_besides_mcp():
    harness = Harness()

    async def body(h: Harness) -> None:
        await h.start("c1", "Claude", ProviderName="Forged")
        await h.start("m1", "Mcp", ProviderName="tool")
        names = {s["SessionIdentifier"]: s["ProviderName"] for s in _sessions(await h.send("status"))}
        assert names == {"c1": "", "m1": "tool"}

    run_mock(lambda: with_runtime(harness, body))


def test_the_name_survives_the_journal_and_a_malformed_one_is_refused():
    now = datetime(2026, 12, 3, tzinfo=timezone.utc)
    session = Session(key=SessionKey.create(AgentProvider.CUSTOM, "grok-1"), started_at=now, last_activity_at=now,
                      agent_name="Grok")
    record = session_to_json(session)
    assert session_from_json(record).agent_name == "Grok"
    assert session_from_json({k: v for k, v in record.items() if k != "agent_name"}).agent_name == ""  # older
    for bad in (7, None, "x" * 129):
        with pytest.raises(ValueError):
            session_from_json({**record, "agent_name": bad})


@pytest.mark.parametrize(("provider", "name", "identifier", "label"), [
    ("Claude", "", "abc", "Claude:abc"),
    ("Claude", "", "Claude:/work", "Claude:/work"),
    ("Mcp", "tool", "x", "Mcp:tool:x"),
    ("Mcp", "tool", "Mcp:tool:/work", "Mcp:tool:/work"),
    ("Custom", "", "Custom:/work", "Custom:/work"),
    ("Custom", "Grok", "grok-1", "Custom:Grok:grok-1"),
    ("Custom", "Amp", "Custom:/work", "Custom:Amp:/work"),  # the fallback id of a named wrapper's start
    ("Claude", "Forged", "abc", "Claude:abc"),  # a name shows only for MCP and custom sessions
])
def test_how_a_session_is_named_in_status(provider: str, name: str, identifier: str, label: str) -> None:
    assert session_label(provider_display(provider, name), identifier) == label
