"""Invalid settings fail closed in the runtime (issue 19 item 3) on the fake platform and MockClock: a start
carrying ``SettingsProblem`` keeps the computer awake but changes no lid policy (restores it when it was
changed), schedules no suspend after the last session and turns Emergency Hibernation off; valid settings
end it."""

from __future__ import annotations

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, with_runtime

PROBLEM = "The settings file /x/settings.json cannot be used: it is not valid JSON. Until it is fixed, ..."


def test_a_start_with_an_unusable_settings_file_keeps_awake_only_and_never_suspends():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        reply = await h.start("a", SettingsProblem=PROBLEM)
        assert reply["Succeeded"] and h.runtime.protection.applied
        assert "protection-applied" in h.actions() and "lid-policy-changed" not in h.actions()
        assert reply["Settings"]["ChangeLidAction"] is False
        assert reply["Settings"]["EmergencyHibernationOnHighTemperature"] is False
        await h.stop("a")
        await anyio.sleep(3600)
        assert "suspend-requested" not in h.actions() and "hibernate-requested" not in h.actions()
        assert [e["Message"] for e in h.log_entries("settings-fail-closed")] == [PROBLEM]
        assert any(PROBLEM in e["Message"] for e in h.log_entries("stop-suspend-skipped"))

    run_mock(lambda: with_runtime(harness, body))


def test_an_unusable_file_mid_session_restores_the_lid_policy_and_valid_settings_end_it():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        await h.start("a")
        assert "lid-policy-changed" in h.actions()
        await h.start("b", SettingsProblem=PROBLEM)
        assert "lid-policy-restored" in h.actions() and h.runtime.protection.applied
        assert not h.paths.lid_backup_file.exists()
        settings = h.runtime.settings.replace(**{"change_lid_action": True}).to_file_json()
        await h.start("c", HasSettings=True, Settings=settings)
        assert h.actions().count("lid-policy-changed") == 2
        assert "settings-fail-closed-ended" in h.log_names()
        for session in ("a", "b", "c"):
            await h.stop(session)
        await anyio.sleep(3600)
        assert h.actions().count("suspend-requested") == 1  # valid settings: the usual suspend

    run_mock(lambda: with_runtime(harness, body))


def test_a_settings_problem_is_bounded_and_needs_no_settings():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        reply = await h.start("a", SettingsProblem="x" * 100_000)
        assert not reply["Succeeded"] and "SettingsProblem" in reply["Message"]
        reply = await h.start("a", SettingsProblem="\ud800")
        assert not reply["Succeeded"]
        # settings sent too: they win (a client sends one or the other)
        settings = h.runtime.settings.to_file_json()
        await h.start("a", HasSettings=True, Settings=settings, SettingsProblem=PROBLEM)
        assert "lid-policy-changed" in h.actions()

    run_mock(lambda: with_runtime(harness, body))
