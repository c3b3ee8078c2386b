"""The runtime's heartbeat (components/heartbeat.py): refreshed while protection is held, gone once the
runtime owns nothing, the watchdog launched once per runtime; a heartbeat that cannot be written never
costs protection. MockClock: the 30 s period passes without waiting."""

from __future__ import annotations

import os

import pytest
from lidguard_runtime_harness import Harness, run_mock, with_runtime

from lidguard.runtime.watchdog import HEARTBEAT_FILE_NAME


def _heartbeat(h: Harness):
    return h.paths.data_dir / HEARTBEAT_FILE_NAME


def test_the_heartbeat_beats_while_protection_is_held_and_the_watchdog_launches_once():
    harness = Harness()
    launches: list[int] = []
    harness.runtime.heartbeat.launch_watchdog = lambda: launches.append(1)

    async def body(h: Harness) -> None:
        import anyio

        heartbeat = h.runtime.heartbeat
        await anyio.sleep(300)
        assert heartbeat.beats == 0 and not _heartbeat(h).exists(), "an idle runtime does not beat"
        await h.start()
        await anyio.sleep(0.001)  # the beat task runs (trio orders a batch's tasks at random)
        assert _heartbeat(h).exists() and _heartbeat(h).stat().st_mode & 0o777 == 0o600
        await anyio.sleep(heartbeat.interval * 3 + 1)
        assert heartbeat.beats == 4  # at once, then every 30 s
        await h.stop()
        await anyio.sleep(heartbeat.interval + 1)
        assert not _heartbeat(h).exists(), "owning nothing: no heartbeat for the watchdog to watch"
        beats = heartbeat.beats
        await anyio.sleep(600)
        assert heartbeat.beats == beats
        await h.start("s2")
        await anyio.sleep(1)
        assert _heartbeat(h).exists() and heartbeat.beats == beats + 1
        assert launches == [1], "one watchdog per runtime"
        assert [e["EventName"] for e in h.log_entries("watchdog-started")] == ["watchdog-started"]

    run_mock(lambda: with_runtime(harness, body))
    assert harness.runtime.heartbeat.interval == 30.0


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink"])
def test_a_heartbeat_that_cannot_be_written_costs_no_protection(kind, tmp_path):
    harness = Harness()
    path = _heartbeat(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(tmp_path / "elsewhere")

    async def body(h: Harness) -> None:
        import anyio

        response = await h.start()
        assert response["Succeeded"]
        await anyio.sleep(100)
        assert h.actions()[:2] == ["protection-applied", "lid-policy-changed"]
        assert len(h.log_entries("heartbeat-write-failed")) == 1, "said once, not every 30 s"
        assert h.runtime.heartbeat.failures == 4

    run_mock(lambda: with_runtime(harness, body))
    assert not (tmp_path / "elsewhere").exists(), "a symlink is never followed"


def test_a_watchdog_that_cannot_start_costs_no_protection():
    harness = Harness()

    def refuse() -> None:
        raise OSError(24, "Too many open files")

    harness.runtime.heartbeat.launch_watchdog = refuse

    async def body(h: Harness) -> None:
        import anyio

        assert (await h.start())["Succeeded"]
        await anyio.sleep(100)
        assert h.actions()[:2] == ["protection-applied", "lid-policy-changed"]
        [failed] = h.log_entries("watchdog-launch-failed")
        assert "Too many open files" in failed["Message"]
        assert h.runtime.heartbeat.beats == 4

    run_mock(lambda: with_runtime(harness, body))
