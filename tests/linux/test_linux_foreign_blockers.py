"""Another program's sleep blocker on the Linux backend against dbusmock's strict logind (issue 34.3).

The "other program" is this test holding a logind inhibitor through the binding (who = backup-tool);
the strict mock refuses every sleep request while any block on sleep is held. ListInhibitors names
it (the template reports uid 1000, pid 123456 for every inhibitor), the runtime does not even ask while
SuspendIgnoresOtherBlockers is off, waits (polling: the mock emits no PropertiesChanged by itself)
and suspends once after the release; with the setting on it asks logind and is refused by the mock
(a real logind lets root through: tests/reallogind). The BlockInhibited listener is tested on a
PropertiesChanged the mock emits.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from lidguard.platform import load_platform
from lidguard.platform.api import SuspendBlocker, Unsupported
from lidguard.platform.linux._binding import LogindConnection
from lidguard.platform.linux.blockers import BlockInhibitedChanges, blockers_from_inhibitors
from lidguard.platform.linux.suspend import LinuxSuspender
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.runtime.components import blocked_suspend
from lidguard.settings.model import Settings, headless_defaults

pytestmark = pytest.mark.dbus

MANAGER = "org.freedesktop.login1.Manager"


def _settings(**changes: Any) -> Settings:
    return Settings.from_raw({**headless_defaults().to_file_json(), "PostStopSuspendDelaySeconds": 0, **changes})


def _closed_lid(root: Path) -> None:
    state = root / "proc" / "acpi" / "button" / "lid" / "LID0" / "state"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text("state:      closed\n")
    (root / "sys" / "class" / "drm" / "card0-eDP-1").mkdir(parents=True, exist_ok=True)
    (root / "sys" / "class" / "drm" / "card0-eDP-1" / "status").write_text("connected\n")


@pytest.fixture
def linux_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = tmp_path / "machine"
    _closed_lid(root)
    monkeypatch.setenv("LIDGUARD_SYSFS_ROOT", str(root))
    monkeypatch.setenv("LIDGUARD_PLATFORM", "linux")
    return root


def _hold(what: str, who: str, why: str, mode: str = "block") -> int:
    with LogindConnection() as connection:
        return connection.inhibit(what, who, why, mode)


def test_blockers_are_block_inhibitors_on_sleep_that_are_not_lidguards():
    entries = [("sleep:idle", "backup-tool", "Nightly backup", "block", 1001, 4242),
               ("sleep", "lidguard", "LidGuard is keeping the system awake", "block", 0, 77),
               ("sleep", "updater", "prepare", "delay", 0, 88),
               ("idle", "player", "video", "block", 1000, 99),
               ("shutdown:sleep", "apt", "upgrade", "block", 0, 0)]
    assert blockers_from_inhibitors(entries) == [
        SuspendBlocker("backup-tool", "Nightly backup", 4242, 1001, "sleep:idle", "block"),
        SuspendBlocker("apt", "upgrade", None, 0, "shutdown:sleep", "block")]


def test_list_blockers_reads_list_inhibitors_and_block_inhibited(binding_active, logind_mock):
    suspender = LinuxSuspender()
    assert suspender.list_blockers() == []
    fds = [_hold("sleep:idle", "backup-tool", "Nightly backup"), _hold("sleep", "lidguard", "own"),
           _hold("sleep", "updater", "prepare", "delay")]
    try:
        [blocker] = logind_mock.wait_for_inhibitors(lambda entries: len(entries) == 3) and suspender.list_blockers()
        assert blocker == SuspendBlocker("backup-tool", "Nightly backup", 123456, 1000, "sleep:idle", "block")
        logind_mock.add_property("BlockInhibited", "sleep:idle")
        from lidguard.platform.linux.blockers import read_block_inhibited

        assert read_block_inhibited() == "sleep:idle"
    finally:
        for fd in fds:
            os.close(fd)
    logind_mock.wait_for_inhibitors(lambda entries: not entries)
    assert suspender.list_blockers() == []


def test_the_block_inhibited_listener_wakes_when_a_block_inhibitor_starts_and_stops(binding_active, logind_mock):
    logind_mock.follow_block_inhibited()
    from lidguard.platform.linux.blockers import read_block_inhibited

    changes = BlockInhibitedChanges()
    fds: list[int] = []

    async def main() -> None:
        async def take() -> None:
            # gdbus subscribes asynchronously: take and drop inhibitors until the listener saw one (bounded).
            for _ in range(100):
                fds.append(_hold("sleep", "backup-tool", "Nightly backup"))
                await anyio.sleep(0.1)
                os.close(fds.pop())
                await anyio.sleep(0.1)

        async with anyio.create_task_group() as group:
            group.start_soon(take)
            with anyio.fail_after(30):
                await changes.wait()
            group.cancel_scope.cancel()

    try:
        anyio.run(main, backend="trio")
        while fds:  # the cancel may land between a take and its release: let go of it first
            os.close(fds.pop())
        logind_mock.wait_for_inhibitors(lambda entries: not entries)
        fd = _hold("sleep:idle", "backup-tool", "Nightly backup")
        try:
            assert read_block_inhibited() == "sleep:idle"
        finally:
            os.close(fd)
        logind_mock.wait_for_inhibitors(lambda entries: not entries)
        assert read_block_inhibited() == ""
    finally:
        changes.close()
        for fd in fds:
            os.close(fd)
    changes.close()  # idempotent


def _run(runtime: Runtime, body: Any) -> None:
    async def main() -> None:
        async with anyio.create_task_group() as task_group:
            await runtime.run(task_group)
            await body()
            task_group.cancel_scope.cancel()
        await runtime.shutdown()

    anyio.run(main, backend="trio")


async def _wait_for(predicate: Any, seconds: float = 30.0) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.05)


async def _start_and_stop(runtime: Runtime) -> None:
    started = await runtime.handle_message({"Command": "start", "Provider": "Claude", "SessionIdentifier": "s1"})
    assert started["Succeeded"], started["Message"]
    await runtime.handle_message({"Command": "stop", "Provider": "Claude", "SessionIdentifier": "s1",
                                  "IsProviderSessionEnd": True, "SessionEndReason": "Stop"})


@pytest.mark.parametrize("listener", [True, False], ids=["block-inhibited-listener", "poll-fallback"])
def test_a_foreign_sleep_block_is_named_waited_for_and_one_suspend_follows_its_release(
        binding_active, logind_mock, linux_machine, monkeypatch, listener):
    if listener:
        logind_mock.follow_block_inhibited()  # the listener wakes the wait; its 10 s check stays as it is
    else:
        def unavailable(self: Any) -> Any:
            raise Unsupported("suspend_blocker_changes", "no gdbus (test)")

        monkeypatch.setattr(LinuxSuspender, "blocker_changes", unavailable)
        monkeypatch.setattr(blocked_suspend, "POLL_SECONDS", 0.2)  # the 2 s poll, shortened for the real clock
    runtime = Runtime(platform=load_platform("linux"), paths=resolve_paths(), settings=_settings())
    fd = _hold("sleep", "backup-tool", "Nightly backup")
    released: list[float] = []

    async def body() -> None:
        await _start_and_stop(runtime)
        await _wait_for(lambda: runtime.suspend_history.newest_first())
        [entry] = runtime.suspend_history.newest_first()
        assert entry["EventName"] == "stop-suspend-blocked" and entry["Succeeded"] is False
        assert entry["Blockers"][0]["Who"] == "backup-tool" and entry["Blockers"][0]["Pid"] == 123456
        status = await runtime.handle_message({"Command": "status"})
        assert status["SuspendBlocked"]["Blockers"][0]["Why"] == "Nightly backup"
        assert runtime.emergency.monitoring
        await anyio.sleep(1)  # several polls while it is still held
        assert logind_mock.get_method_calls("Suspend") == []  # never asked while it was listed
        os.close(fd)
        released.append(time.monotonic())
        await _wait_for(lambda: logind_mock.accepted_calls("Suspend"))
        await anyio.sleep(1)

    try:
        _run(runtime, body)
    finally:
        if not released:
            os.close(fd)
    [accepted] = logind_mock.accepted_calls("Suspend")
    assert accepted["held"] == []
    # Woken by PropertiesChanged (the listener's own check is every 10 s), or one 0.2 s poll later.
    assert accepted["at"] - released[0] < 5
    assert len(logind_mock.get_method_calls("Suspend")) == 1
    assert runtime.suspend_history.newest_first()[0]["Succeeded"] is True


def test_suspend_ignores_other_blockers_asks_logind_anyway(binding_active, logind_mock, linux_machine, monkeypatch):
    monkeypatch.setattr(blocked_suspend, "POLL_SECONDS", 0.2)
    runtime = Runtime(platform=load_platform("linux"), paths=resolve_paths(),
                      settings=_settings(SuspendIgnoresOtherBlockers=True))
    fd = _hold("sleep", "backup-tool", "Nightly backup")

    async def body() -> None:
        await _start_and_stop(runtime)
        await _wait_for(lambda: runtime.suspend_history.newest_first())

    try:
        _run(runtime, body)
    finally:
        os.close(fd)
    assert [args for _, args in logind_mock.get_method_calls("Suspend")] == [[False]]  # asked despite it
    [entry] = runtime.suspend_history.newest_first()
    # The strict mock refuses even so (a real logind lets root through, and a user with the
    # suspend-ignore-inhibit grant): the refusal names the blocker read after it.
    assert "BlockedByInhibitorLock" in entry["Message"] and entry["Blockers"][0]["Who"] == "backup-tool"
