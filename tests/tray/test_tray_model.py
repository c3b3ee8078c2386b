"""The tray's pure model: every state -> icon state + tooltip, and the menu per state."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from lidguard.tray.model import MAX_MENU_SESSIONS, TrayState, menu_entries, tray_view

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)


def _session(number: int, **extra):
    return {"SessionIdentifier": f"s{number}", "Provider": "Claude", "ProviderName": "",
            "WorkingDirectory": f"/home/me/project-{number}", "StartedAt": "2026-12-01T11:00:00Z",
            "SoftLockState": "None", "RunningToolCount": 0, **extra}


def _status(sessions=(), **extra):
    return {"Succeeded": True, "RuntimeUnavailable": False, "ActiveSessionCount": len(sessions),
            "Sessions": list(sessions), "Settings": {"ChangeLidAction": False, "SuspendMode": "Sleep"},
            "LidSwitchState": "Open", "PendingSuspend": None, "Paused": None, "ProtectionHeldBack": [], **extra}


def _menu(view):
    return {entry.key: entry for entry in menu_entries(view) if entry.key not in ("session", "separator")}


CASES = [
    ("no runtime", None, {}, TrayState.IDLE, "idle, no session (the runtime is not running; it starts"),
    ("runtime gone", {"Succeeded": False, "RuntimeUnavailable": True, "Message": "not running"}, {}, TrayState.IDLE,
     "the runtime is not running"),
    ("runtime, 0 sessions", _status(), {}, TrayState.IDLE, "idle, no session"),
    ("2 sessions", _status([_session(1), _session(2)]), {}, TrayState.PROTECTING, "protecting 2 sessions."),
    ("protecting through a lid close", _status([_session(1)], Settings={"ChangeLidAction": True,
                                                                        "SuspendMode": "Sleep"}), {},
     TrayState.PROTECTING_THROUGH_LID_CLOSE, "protecting 1 session; closing the lid keeps it awake"),
    ("pending", _status(PendingSuspend={"Mode": "Hibernate", "Reason": "Completed", "Stage": "delay",
                                        "DeadlineUtc": (NOW + timedelta(seconds=95)).strftime("%Y-%m-%dT%H:%M:%SZ")}),
     {}, TrayState.SUSPEND_PENDING, "Hibernate in 1:35"),
    ("paused", _status([_session(1)], Paused={"UntilUtc": None}), {}, TrayState.PAUSED,
     "paused until resume (1 session"),
    ("held back", _status([_session(1)], ProtectionHeldBack=["on battery below 20%"]), {}, TrayState.HELD_BACK,
     "held back (on battery below 20%)"),
    ("running, no answer", None, {"runtime_running": True}, TrayState.ERROR, "does not answer"),
    ("runtime failure", {"Succeeded": False, "Message": "boom"}, {}, TrayState.ERROR, "runtime error: boom"),
    ("broken settings", _status([_session(1)]), {"settings_error": "settings.json is not JSON"}, TrayState.ERROR,
     "settings file is unusable (settings.json is not JSON)"),
]


@pytest.mark.parametrize(("name", "status", "options", "state", "tooltip"), CASES, ids=[case[0] for case in CASES])
def test_every_state_has_its_icon_and_tooltip(name, status, options, state, tooltip):
    view = tray_view(status, now=NOW, **options)
    assert view.state is state
    assert tooltip in view.tooltip


def test_paused_until_shows_the_local_time():
    until = datetime(2026, 12, 1, 12, 30, tzinfo=timezone.utc)
    view = tray_view(_status(Paused={"UntilUtc": "2026-12-01T12:30:00Z"}), now=NOW)
    assert f"paused until {until.astimezone().strftime('%H:%M')}" in view.tooltip


def test_the_countdown_never_goes_negative_and_a_bad_deadline_says_soon():
    past = _status(PendingSuspend={"Mode": "Sleep", "DeadlineUtc": "2026-12-01T11:00:00Z"})
    assert tray_view(past, now=NOW).tooltip == "LidGuard: Sleep in 0 s."
    bad = _status(PendingSuspend={"Mode": "Sleep", "DeadlineUtc": "\ud800 not a time"})
    assert tray_view(bad, now=NOW).tooltip == "LidGuard: Sleep soon."


def test_menu_when_protecting():
    menu = _menu(tray_view(_status([_session(1), _session(2)]), now=NOW))
    assert menu["pause-30m"].enabled and menu["pause-30m"].default
    assert menu["pause-2h"].enabled and not menu["resume"].enabled
    assert not menu["sleep-now"].enabled  # sessions are protected
    assert menu["change-lid-action"].enabled and menu["change-lid-action"].checked is False
    assert menu["suspend-mode"].enabled and menu["suspend-mode"].checked is False
    assert menu["open-status"].enabled and menu["quit"].enabled
    assert [entry.default for entry in menu_entries(tray_view(_status(), now=NOW))].count(True) == 1


def test_menu_when_paused_resumes_on_click_and_may_sleep():
    view = tray_view(_status([_session(1)], Paused={"UntilUtc": None},
                             Settings={"ChangeLidAction": True, "SuspendMode": "Hibernate"}), now=NOW)
    menu = _menu(view)
    assert menu["resume"].enabled and menu["resume"].default and not menu["pause-30m"].default
    assert menu["sleep-now"].enabled
    assert menu["change-lid-action"].checked is True and menu["suspend-mode"].checked is True


def test_menu_without_a_runtime_uses_the_stored_settings_and_can_pause():
    view = tray_view(None, now=NOW, stored_settings={"ChangeLidAction": True, "SuspendMode": "Sleep"})
    menu = _menu(view)
    assert menu["pause-30m"].enabled and not menu["resume"].enabled and menu["sleep-now"].enabled
    assert menu["change-lid-action"].checked is True
    unknown = _menu(tray_view(None, now=NOW, runtime_running=True))
    assert not unknown["change-lid-action"].enabled and not unknown["sleep-now"].enabled
    labels = [entry.label for entry in menu_entries(tray_view(None, now=NOW, runtime_running=True))]
    assert "Runtime not reachable" in labels


def test_menu_lists_sessions_with_provider_folder_state_since_and_bounds_them():
    sessions = [_session(number) for number in range(MAX_MENU_SESSIONS + 5)]
    sessions[0]["SoftLockState"] = "SoftLocked"
    sessions[1]["RunningToolCount"] = 2
    sessions[2]["WorkingDirectory"] = "/x/" + "a" * 500 + "\x1b[31m"
    view = tray_view(_status(sessions), now=NOW)
    lines = [entry.label for entry in menu_entries(view) if entry.key == "session"]
    since = datetime(2026, 12, 1, 11, 0, tzinfo=timezone.utc).astimezone().strftime("%H:%M")
    assert lines[0] == f"Claude - /home/me/project-0 - waiting for the user since {since}"
    assert lines[1].endswith(f"running tools since {since}")
    assert len(lines[2]) < 120 and "\x1b" not in lines[2]
    assert lines[-1] == "... and 5 more" and len(lines) == MAX_MENU_SESSIONS + 1


@pytest.mark.parametrize("garbage", [
    {"Sessions": "nope", "ActiveSessionCount": -3, "Settings": [], "Paused": "yes", "PendingSuspend": 7,
     "ProtectionHeldBack": "x"},
    {"Sessions": [None, 1, "s", {"Provider": 5}], "ActiveSessionCount": 10 ** 30},
    {"Sessions": [{"StartedAt": "\ud800", "WorkingDirectory": "\ud800"}]},
])
def test_garbage_replies_never_raise(garbage):
    view = tray_view(_status(**garbage), now=NOW)
    assert isinstance(view.state, TrayState)
    assert menu_entries(view)


def test_other_commands_never_import_the_toolkit():
    """Building the CLI parser (every command but ``tray`` itself) loads no pystray, Pillow or tray app."""
    import subprocess
    import sys

    code = ("import sys, lidguard.cli.full as full; full.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pystray', 'PIL', 'Xlib') "
            "or m in ('lidguard.tray.app', 'lidguard.tray.icons', 'lidguard.tray.model')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_refused_watcher_shows_the_polled_state_and_says_why():
    # Issue 39 item 9: ipc.watch polls status while the runtime refuses the stream (all slots taken).
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    refused = "The runtime already streams its state to 16 watchers; try again later."
    view = tray_view(_status([_session(1)], WatchRefused=refused), now=now)
    assert view.state is TrayState.PROTECTING
    assert view.tooltip.startswith("LidGuard: protecting 1 session") and "watcher slots taken): polling" in view.tooltip
    assert "refused" not in tray_view(_status([_session(1)]), now=now).tooltip


def test_idle_without_a_runtime_is_not_the_error_and_no_state_reads_as_a_closed_lid():
    """Issue 33.8: 10 minutes after the last session the runtime has exited - the normal state, not an error."""
    idle = tray_view(None, now=NOW)
    assert idle.state is TrayState.IDLE and "error" not in idle.tooltip.lower()
    assert [entry.label for entry in menu_entries(idle) if entry.key == "session"] == ["No session"]
    assert _menu(idle)["sleep-now"].enabled
    for state in TrayState:
        assert "closed" not in state.value and "lid-protected" not in state.value
    lid = tray_view(_status([_session(1)], Settings={"ChangeLidAction": True, "SuspendMode": "Sleep"}), now=NOW)
    assert "closed" not in lid.tooltip.lower()


def test_idle_error_and_working_icons_differ():
    pytest.importorskip("PIL")
    from lidguard.tray.icons import draw_icon

    drawn = {state: draw_icon(state, "dark", 32).tobytes() for state in TrayState}
    assert len(set(drawn.values())) == len(TrayState)


def _labels(sessions):
    view = tray_view(_status(sessions), now=NOW)
    return [entry.label for entry in menu_entries(view) if entry.key == "session"]


def test_two_sessions_in_one_folder_are_told_apart_by_their_id():
    same = {"WorkingDirectory": "/home/me/app"}
    labels = _labels([_session(1, SessionIdentifier="0f3a9c2e-1111-4aaa-8bbb-000000000001", **same),
                      _session(2, SessionIdentifier="7b12d4e0-2222-4ccc-8ddd-000000000002", **same),
                      _session(3)])
    assert labels[0].startswith("Claude - /home/me/app [0f3a9c2e] - active since ")
    assert labels[1].startswith("Claude - /home/me/app [7b12d4e0] - active since ")
    assert labels[2].startswith("Claude - /home/me/project-3 - active")  # alone in its folder: no id
    # Ids alike in their first 8 characters: the prefix grows until they differ.
    labels = _labels([_session(1, SessionIdentifier="rollout-2026-12-01-aaaa", **same),
                      _session(2, SessionIdentifier="rollout-2026-12-01-bbbb", **same)])
    assert "[rollout-2026-12-01-a]" in labels[0] and "[rollout-2026-12-01-b]" in labels[1]
    # Another provider in the same folder is already told apart by its name.
    assert "[" not in "".join(_labels([_session(1, **same), _session(2, Provider="Codex", **same)]))


def test_the_hover_text_answers_safe_to_close_the_lid() -> None:
    """Issue 38.3: the tray says the same answer as `lidguard status`'s first line."""
    protected = tray_view(_status([_session(1)]), now=NOW)
    assert protected.title.splitlines()[-1] == protected.readiness
    assert protected.readiness.startswith("Safe to close the lid: ")
    idle = tray_view(None, now=NOW)
    assert idle.readiness == "Safe to close the lid: not yet - lidguard is not running, so no agent is protected"
    wedged = tray_view(None, now=NOW, runtime_running=True)
    assert "not answering" in wedged.readiness
