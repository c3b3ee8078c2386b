"""The ``watch`` stream inside the runtime (MockClock): order, coalescing, newest-only, the cap,
keep-alives and a reader that takes nothing."""

from __future__ import annotations

import json
import socket

import anyio
import pytest
from lidguard_runtime_harness import Harness, assert_nothing_left_applied, closed_lid_machine, run_mock, with_runtime
from test_runtime_cancellation import CancelAtStep

from lidguard.runtime import watch_stream
from lidguard.runtime.components.status_stream import COALESCE_SECONDS, RECHECK_SECONDS, Watcher


def _decode(line: bytes) -> dict:
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    message = json.loads(line)
    assert isinstance(message, dict)
    return message


def _ids(message: dict) -> list[str]:
    return [session["SessionIdentifier"] for session in message["Sessions"]]


async def _open(h: Harness) -> Watcher:
    """As the server does: the watch request refreshed the machine snapshot, then the watcher opens."""
    await h.send("status")
    watcher = h.runtime.status_stream.open()
    assert watcher is not None
    return watcher


async def _take(watcher: Watcher, seconds: float = 5.0) -> dict:
    with anyio.fail_after(seconds):
        return _decode(await watcher.take())


def test_a_watcher_gets_the_state_at_once_then_every_change_in_order_with_the_status_body():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        stream = h.runtime.status_stream
        status = await h.send("status")  # the watch request refreshes the machine snapshot the same way
        watcher = stream.open()
        assert watcher is not None
        first = await _take(watcher, 0.001)  # at once: no wait at all
        assert first["Watch"] is True and first["Sequence"] == 1 and _ids(first) == []
        assert {k: v for k, v in first.items() if k not in ("Watch", "Sequence")} == status
        seen = [first]
        await h.start("a")
        seen.append(await _take(watcher))
        await h.start("b")
        seen.append(await _take(watcher))
        await h.send("remove-session", Provider="Claude", SessionIdentifier="a")
        seen.append(await _take(watcher))
        assert [_ids(m) for m in seen] == [[], ["a"], ["a", "b"], ["b"]]
        assert [m["Sequence"] for m in seen] == [1, 2, 3, 4]
        stream.close(watcher)

    run_mock(lambda: with_runtime(harness, body))


def test_pause_pending_suspend_and_a_settings_problem_each_stream_a_line():
    harness = Harness(machine=closed_lid_machine())

    async def body(h: Harness) -> None:
        watcher = await _open(h)
        await _take(watcher)
        await h.start("a")
        await _take(watcher)
        await h.stop("a")
        pending = await _take(watcher)
        assert pending["PendingSuspend"] is not None and pending["PendingSuspend"]["DeadlineUtc"]
        await h.send("pause", PauseSeconds=600)
        paused = await _take(watcher)
        assert paused["Paused"] is not None and paused["PendingSuspend"] is None
        assert paused["ProtectionHeldBack"]
        await h.send("resume")
        resumed = await _take(watcher)
        assert resumed["Paused"] is None
        await h.start("b", SettingsProblem="The settings file is broken.")
        broken = await _take(watcher)
        assert _ids(broken) == ["b"] and broken["Sequence"] > resumed["Sequence"]

    run_mock(lambda: with_runtime(harness, body))


def test_a_burst_of_changes_is_coalesced_into_one_line_per_interval_carrying_the_newest_state():
    harness = Harness()

    async def body(h: Harness) -> None:
        stream = h.runtime.status_stream
        watcher = await _open(h)
        received: list[tuple[float, dict]] = []

        async def reader() -> None:
            while True:
                line = await watcher.take()
                received.append((anyio.current_time(), _decode(line)))

        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            await anyio.sleep(1)
            for number in range(50):
                await h.start(f"s{number:02}")
            await anyio.sleep(2)
            group.cancel_scope.cancel()
        counts = [len(message["Sessions"]) for _, message in received]
        assert counts[0] == 0 and counts[-1] == 50
        assert len(received) <= 4, counts  # the state at once, the first change, then the rest in one line
        assert stream.lines_built == len(received)
        times = [at for at, _ in received[1:]]
        assert all(later - earlier >= COALESCE_SECONDS - 1e-9 for earlier, later in zip(times, times[1:], strict=False))

    run_mock(lambda: with_runtime(harness, body))


def test_nothing_is_sent_when_nothing_changed_and_a_slow_watcher_holds_only_the_newest_line():
    harness = Harness()

    async def body(h: Harness) -> None:
        stream = h.runtime.status_stream
        idle = await _open(h)
        await _take(idle)
        for _ in range(20):
            await h.send("status")
            h.runtime.state_changed()  # a mark without a change
        await anyio.sleep(RECHECK_SECONDS * 2)
        assert idle.pending is None and stream.sequence == 1
        for number in range(10):  # never taken: each line replaces the one before
            await h.start(f"s{number}")
            await anyio.sleep(COALESCE_SECONDS * 2)
        assert stream.sequence == 11
        newest = _decode(idle.pending or b"")
        assert newest["Sequence"] == 11 and len(newest["Sessions"]) == 10
        assert (await _take(idle))["Sequence"] == 11

    run_mock(lambda: with_runtime(harness, body))


def test_at_most_max_watchers_and_the_publisher_ends_when_the_last_one_leaves():
    harness = Harness()

    async def body(h: Harness) -> None:
        stream = h.runtime.status_stream
        watchers = [stream.open() for _ in range(stream.max_watchers)]
        assert all(w is not None for w in watchers)
        assert stream.open() is None
        stream.close(watchers.pop())  # type: ignore[arg-type]
        again = stream.open()
        assert again is not None and stream.watcher_count == stream.max_watchers
        for watcher in [*watchers, again]:
            stream.close(watcher)  # type: ignore[arg-type]
        await anyio.sleep(1)
        assert stream.watcher_count == 0 and stream._publisher is None
        await h.start("a")  # nobody watches: nothing is built
        await anyio.sleep(1)
        assert stream.sequence == 1

    run_mock(lambda: with_runtime(harness, body))


def _pair(send_buffer: int | None = None) -> tuple[socket.socket, socket.socket]:
    server, client = socket.socketpair()
    if send_buffer is not None:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, send_buffer)
    server.setblocking(False)
    client.setblocking(False)
    return server, client


async def _read_line(sock: socket.socket, buffer: bytearray) -> bytes:
    while b"\n" not in buffer:
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            await anyio.wait_readable(sock)
            continue
        if not chunk:
            return b""
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line + b"\n"


def test_a_quiet_stream_sends_keep_alives_and_ends_when_the_client_closes():
    harness = Harness()

    async def body(h: Harness) -> None:
        server, client = _pair()
        buffer = bytearray()
        await h.send("status")
        async with anyio.create_task_group() as group:
            group.start_soon(watch_stream.serve_watcher, h.runtime.status_stream, server)
            first = _decode(await _read_line(client, buffer))
            started = anyio.current_time()
            alive = _decode(await _read_line(client, buffer))
            assert alive == {"v": 1, "Succeeded": True, "Watch": True, "KeepAlive": True,
                             "Sequence": first["Sequence"]}
            assert anyio.current_time() - started == pytest.approx(watch_stream.KEEPALIVE_SECONDS)
            client.close()
            with anyio.fail_after(1):
                while h.runtime.status_stream.watcher_count:
                    await anyio.sleep(0.01)
        server.close()

    run_mock(lambda: with_runtime(harness, body))


def test_a_client_that_takes_nothing_is_dropped_after_the_stall_limit_and_never_blocks_requests():
    harness = Harness()

    async def body(h: Harness) -> None:
        server, client = _pair(send_buffer=4096)
        long_folder = "/" + "f" * 3000
        await h.send("status")
        async with anyio.create_task_group() as group:
            group.start_soon(watch_stream.serve_watcher, h.runtime.status_stream, server)
            started = anyio.current_time()
            for number in range(40):  # big lines nobody reads: the socket buffer fills up
                reply = await h.start(f"s{number}", WorkingDirectory=long_folder)
                assert reply["Succeeded"]
                await anyio.sleep(COALESCE_SECONDS)
            assert anyio.current_time() - started < watch_stream.STALL_SECONDS  # requests were never held up
            with anyio.fail_after(watch_stream.STALL_SECONDS * 3):
                while h.runtime.status_stream.watcher_count:
                    await anyio.sleep(0.5)
        client.close()
        server.close()

    run_mock(lambda: with_runtime(harness, body))


def test_sending_more_than_the_input_limit_after_the_request_ends_the_stream():
    harness = Harness()

    async def body(h: Harness) -> None:
        server, client = _pair()
        buffer = bytearray()
        await h.send("status")
        async with anyio.create_task_group() as group:
            group.start_soon(watch_stream.serve_watcher, h.runtime.status_stream, server)
            assert _decode(await _read_line(client, buffer))["Sequence"] == 1
            client.send(b"garbage that is ignored\n{[")
            await anyio.sleep(1)
            assert h.runtime.status_stream.watcher_count == 1
            junk = b"x" * 8192
            sent = 0
            with anyio.fail_after(10):
                while h.runtime.status_stream.watcher_count and sent <= watch_stream.INPUT_LIMIT * 2:
                    try:
                        sent += client.send(junk)
                    except BlockingIOError:
                        await anyio.sleep(0.01)
                while h.runtime.status_stream.watcher_count:
                    await anyio.sleep(0.01)
        client.close()
        server.close()

    run_mock(lambda: with_runtime(harness, body))


def test_a_watcher_never_keeps_an_idle_runtime_from_exiting():
    harness = Harness()

    async def body(h: Harness) -> None:
        watcher = await _open(h)
        await _take(watcher)
        await h.start("a")
        await h.send("remove-session", Provider="Claude", SessionIdentifier="a")
        assert not h.runtime.busy()
        with anyio.fail_after(h.runtime.settings.server_runtime_cleanup_delay_minutes * 60 + 60):
            await h.runtime.exit_requested.wait()
        assert h.runtime.status_stream.watcher_count == 1  # still watching when the exit came

    run_mock(lambda: with_runtime(harness, body))


def test_cancelling_the_runtime_at_every_step_while_a_watcher_follows_leaves_nothing_behind(monkeypatch, tmp_path):
    """As ``test_runtime_cancellation``: the task group is cancelled after task step N, for every N, while
    a watcher takes every line of a session's start, stop, pending suspend and pause."""
    def run(target: int | None) -> tuple[Harness, CancelAtStep, list[int]]:
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / f"run-{target}"))
        harness = Harness(machine=closed_lid_machine())
        instrument = CancelAtStep(target)
        sequences: list[int] = []

        async def scenario() -> None:
            with anyio.CancelScope() as outer:
                try:
                    async with anyio.create_task_group() as task_group:
                        await harness.runtime.run(task_group)
                        instrument.scope = outer
                        watcher = await _open(harness)

                        async def reader() -> None:
                            while True:
                                sequences.append(_decode(await watcher.take())["Sequence"])

                        task_group.start_soon(reader)
                        await harness.start()
                        # a start and a stop in the same instant are one line (coalesced): let the start show
                        await anyio.sleep(COALESCE_SECONDS)
                        await harness.stop()
                        await anyio.sleep(1)
                        await harness.send("pause", PauseSeconds=60)
                        await anyio.sleep(1)
                        harness.runtime.status_stream.close(watcher)
                        await anyio.sleep(1)
                        instrument.scope = None
                        task_group.cancel_scope.cancel()
                finally:
                    await harness.runtime.shutdown()

        run_mock(scenario, instruments=[instrument])
        return harness, instrument, sequences

    complete, counted, sequences = run(None)
    assert sequences == [1, 2, 3, 4] and complete.runtime.status_stream._publisher is None
    assert counted.steps > 30, counted.steps  # every step below is cancelled at; ~40 since the gate takes no checkpoint
    assert not complete.paths.exception_log_file.exists()
    for target in range(1, counted.steps + 1):
        harness, instrument, sequences = run(target)
        if not instrument.fired:
            break
        assert_nothing_left_applied(harness)
        assert sequences == sorted(set(sequences))
        log = harness.paths.exception_log_file
        assert not log.exists(), f"cancelled after step {target}: {log.read_text()}"


def test_a_settings_change_streams_a_line_at_once():
    """The tray's toggles and `lidguard settings` change the runtime's settings: watchers see it within the
    coalescing window, not at the next periodic re-check."""
    harness = Harness()

    async def body(h: Harness) -> None:
        watcher = await _open(h)
        first = await _take(watcher)
        assert first["Settings"]["ChangeLidAction"] is True
        settings = {**first["Settings"], "ChangeLidAction": False}
        assert (await h.send("settings", HasSettings=True, Settings=settings))["Succeeded"]
        changed = await _take(watcher, RECHECK_SECONDS / 2)
        assert changed["Settings"]["ChangeLidAction"] is False
        h.runtime.status_stream.close(watcher)

    run_mock(lambda: with_runtime(harness, body))
