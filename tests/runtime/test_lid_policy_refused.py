"""A lid-close change the OS refuses for want of a permission never costs keep-awake (issue 32):
the fake platform refuses like a missing sudoers rule, polkit grant or powercfg access would."""

from __future__ import annotations

from lidguard.platform.fake import FakeMachine, FakePlatform
from lidguard.runtime.protection import ProtectionCoordinator, protection_target
from lidguard.settings.model import headless_defaults

HINT = "the lid-close action needs a permission the fake does not grant"


def test_a_refused_lid_change_keeps_keep_awake_says_why_and_is_retried_only_on_request(tmp_path):
    platform = FakePlatform(FakeMachine(lid_policy_refusal=HINT))
    backup = tmp_path / "pending-lid-action-backup.json"
    logged: list[tuple[str, str]] = []
    coordinator = ProtectionCoordinator(platform, backup, lambda event, message: logged.append((event, message)))
    target = protection_target(headless_defaults())
    coordinator.converge(target)  # no exception: never fatal
    assert [a["action"] for a in platform.actions] == ["protection-applied", "lid-policy-refused"]
    assert coordinator.applied and coordinator.current == target  # no retry storm on every event
    assert coordinator.lid_held_back == f"keeping awake; {HINT}"
    assert not backup.exists(), "nothing changed, so no restore is owed"
    assert platform.machine.lid_ac_action == 1 and not platform.lid_policy_held
    assert [event for event, _ in logged] == ["lid-action-change-refused"]
    coordinator.converge(target)
    assert len(logged) == 1
    platform.machine.lid_policy_refusal = None  # the permission appears
    assert coordinator.retry_refused_lid()
    coordinator.converge(target)
    assert coordinator.lid_held_back is None and platform.lid_policy_held
    assert platform.machine.lid_ac_action == 0 and backup.exists()
    assert not coordinator.retry_refused_lid()
    coordinator.converge(None)
    assert platform.machine.lid_ac_action == 1 and not backup.exists()
    assert [a["action"] for a in platform.actions][-1] == "protection-released"


def test_a_refusal_read_from_the_fake_state_file(tmp_path):
    machine = FakeMachine.from_json({"lidPolicyRefusal": HINT})
    assert machine.lid_policy_refusal == HINT


def test_a_runtime_start_keeps_awake_when_the_lid_change_is_refused_and_a_settings_change_retries(lidguard):
    lidguard.set_machine(lidPolicyRefusal=HINT)
    result = lidguard.run("start", "--provider", "custom", "--session", "s1")
    assert result.returncode == 0, result.stderr
    assert f"Lid-close action held back: keeping awake; {HINT}" in result.stdout
    actions = [a["action"] for a in lidguard.actions()]
    assert "protection-applied" in actions and "lid-policy-refused" in actions
    assert "lid-policy-changed" not in actions
    status = lidguard.json("status")
    assert status["lidPolicyHeldBack"] == f"keeping awake; {HINT}"
    assert [s["sessionIdentifier"] for s in status["sessions"]] == ["s1"]
    doctor = lidguard.json("doctor")
    assert doctor["lidPolicyHeldBack"] == f"keeping awake; {HINT}"
    assert f"Lid-close action held back: keeping awake; {HINT}" in lidguard.run("doctor").stdout
    lidguard.run("mark-session-active", "--provider", "custom", "--session", "s1", check=True)
    assert [a["action"] for a in lidguard.actions()].count("lid-policy-refused") == 1, "no retry per event"
    lidguard.set_machine()  # the permission appears; a settings change tries again
    lidguard.run("settings", "--session-timeout-minutes", "30", check=True)
    assert "lid-policy-changed" in [a["action"] for a in lidguard.actions()]
    assert lidguard.json("status")["lidPolicyHeldBack"] is None
    lidguard.run("stop", "--provider", "custom", "--session", "s1", check=True)
