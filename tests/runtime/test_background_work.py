"""Background work (issue 35.3): a subagent or task the agent started is work in flight until it ends,
so a turn-end stop while some runs is deferred and the machine is not suspended. MockClock, in-process."""

from __future__ import annotations

from typing import Any

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime
from lidguard_runtime_harness import with_settings as settings_with

from lidguard.runtime.sessions import AgentProvider, SessionKey

KEY = SessionKey.create(AgentProvider.CLAUDE, "s1")


def _harness(**settings: Any) -> Harness:
    return Harness(settings_with(SessionTimeoutMinutes=12, PostStopSuspendDelaySeconds=0, **settings),
                   machine=closed_lid_machine())


async def _work(h: Harness, work_id: str, state: str) -> dict[str, Any]:
    return await h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1",
                        SessionStateReason=f"Subagent:{state}", ToolCallId=work_id, ToolCallState=state,
                        BackgroundWork=True)


def test_a_turn_end_while_a_subagent_runs_is_deferred_until_it_ends_and_the_next_stop():
    async def body(h: Harness) -> None:
        await h.start()
        assert (await _work(h, "subagent:a1", "Running"))["Succeeded"]
        reply = await h.stop(IsProviderSessionEnd=True, IsTurnEnd=True)
        assert reply["Succeeded"] and "Deferred" in reply["Message"], reply
        await anyio.sleep(300)  # the subagent works on: no suspend, protection held
        session = h.runtime.state.sessions[KEY]
        assert session.pending_provider_work and session.background_work == ("subagent:a1",)
        assert "suspend-requested" not in h.actions() and "protection-released" not in h.actions()
        await _work(h, "subagent:a1", "Finished")
        assert h.runtime.state.sessions[KEY].background_work == ()
        # the agent's own follow-up turn (Claude starts one when background work ends) stops it
        await h.stop(IsProviderSessionEnd=True, IsTurnEnd=True)
        assert KEY not in h.runtime.state.sessions
        await anyio.sleep(5)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(_harness(), body))


def test_a_stop_with_no_background_work_or_a_session_end_is_not_deferred():
    async def body(h: Harness) -> None:
        await h.start()
        await _work(h, "task:1", "Running")
        await _work(h, "task:1", "Finished")
        await h.stop(IsProviderSessionEnd=True, IsTurnEnd=True)
        assert KEY not in h.runtime.state.sessions
        await h.start()
        await _work(h, "task:2", "Running")
        await h.stop(IsProviderSessionEnd=True)  # SessionEnd: the agent is gone, its subagents with it
        assert KEY not in h.runtime.state.sessions

    run_mock(lambda: with_runtime(_harness(), body))


def test_background_work_survives_a_new_turn_is_not_a_tool_and_is_abandoned_by_the_timeout():
    async def body(h: Harness) -> None:
        await h.start()
        await _work(h, "subagent:a1", "Running")
        await h.start()  # the user's next prompt while the subagent runs
        session = h.runtime.state.sessions[KEY]
        assert session.background_work == ("subagent:a1",) and session.tools_in_flight == ()
        await h.stop(IsProviderSessionEnd=True, IsTurnEnd=True)
        await anyio.sleep(12 * 60 + 2)  # silent for the whole timeout: abandoned, then suspended once
        assert h.log_entries("session-pending-provider-work-abandoned")
        assert h.runtime.state.sessions[KEY].background_work == ()
        await anyio.sleep(5)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(_harness(), body))


def test_background_work_is_kept_by_the_journal():
    async def body(h: Harness) -> None:
        await h.start()
        await _work(h, "task:7", "Running")
        session = h.runtime.state.sessions[KEY]
        from lidguard.runtime.journal_file import session_from_json, session_to_json

        assert session_from_json(session_to_json(session)).background_work == ("task:7",)

    run_mock(lambda: with_runtime(_harness(), body))


def test_an_idle_prompt_while_a_subagent_runs_after_the_stop_does_not_make_the_machine_suspend():
    async def body(h: Harness) -> None:
        await h.start()
        await _work(h, "subagent:a1", "Running")
        await h.stop(IsProviderSessionEnd=True, IsTurnEnd=True)
        await anyio.sleep(60)  # Claude: the prompt has been idle for 60 s
        reply = await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1",
                             SessionStateReason="idle_prompt")
        assert reply["Succeeded"] and "still run" in reply["Message"], reply
        assert not h.runtime.state.sessions[KEY].soft_locked
        await anyio.sleep(300)
        assert "suspend-requested" not in h.actions() and "protection-released" not in h.actions()
        await _work(h, "subagent:a1", "Finished")  # ended: a soft-lock applies again
        await h.send("mark-session-softlocked", Provider="Claude", SessionIdentifier="s1",
                     SessionStateReason="idle_prompt")
        assert h.runtime.state.sessions[KEY].soft_locked
        await anyio.sleep(5)
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(_harness(), body))
