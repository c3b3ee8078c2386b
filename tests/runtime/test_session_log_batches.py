"""The session log written in batches (issue 36, the runtime burst): the same lines in the same order as
one write per line made, a reply only once its own lines are in the kernel (a kill -9 loses nothing
acknowledged, as with the journal's group commit), every line flushed before a suspend request and
before the runtime exits."""

from __future__ import annotations

import json
from typing import Any

import anyio
from lidguard_runtime_harness import Harness, closed_lid_machine, run_mock, run_on, with_runtime

from lidguard.platform.api import SuspendMode, SuspendResult


def _file_lines(harness: Harness) -> list[tuple[str, str]]:
    """(EventName, Message) of every line in the log file itself (never through the runtime)."""
    path = harness.paths.session_log_file
    if not path.exists():
        return []
    return [(entry["EventName"], entry["Message"])
            for entry in (json.loads(line) for line in path.read_bytes().splitlines() if line.strip())]


def _record_log_calls(harness: Harness) -> list[tuple[object, str, str]]:
    """Every ``Runtime.log`` call in call order: (the task that made it, EventName, Message)."""
    calls: list[tuple[object, str, str]] = []
    runtime = harness.runtime
    real_log = runtime.log

    def recording(event_name: str, command: str, message: str, **fields: Any) -> None:
        try:
            task: object = anyio.get_current_task().id
        except RuntimeError:  # no event loop
            task = None
        calls.append((task, event_name, message))
        real_log(event_name, command, message, **fields)

    runtime.log = recording  # type: ignore[method-assign]
    return calls


def _count_log_writes(harness: Harness) -> list[int]:
    """One entry per write of the session log file, the number of lines it held."""
    writes: list[int] = []
    log_file = harness.runtime.session_log._file._file
    real_write = log_file.write

    def counting(data: bytes) -> None:
        writes.append(data.count(b"\n"))
        real_write(data)

    log_file.write = counting  # type: ignore[method-assign]
    return writes


def test_concurrent_requests_share_log_writes_in_order_and_each_reply_follows_its_own_lines() -> None:
    harness = Harness()
    calls = _record_log_calls(harness)
    writes = _count_log_writes(harness)
    late: list[str] = []

    async def client(h: Harness, index: int) -> None:
        me = anyio.get_current_task().id
        for round_number in range(3):
            session = {"Provider": "Claude", "SessionIdentifier": f"c{index}-{round_number}",
                       "WorkingDirectory": "/tmp/w", "ReplySessions": False}
            for command, extra in (("start", {}), ("mark-session-active", {"SessionStateReason": "PreToolUse:Bash"}),
                                   ("stop", {})):
                reply = await h.send(command, **session, **extra)
                assert reply["Succeeded"], reply
                mine = [(name, message) for task, name, message in calls if task == me]
                written = set(_file_lines(h))
                late.extend(f"{name}: {message}" for name, message in mine if (name, message) not in written)

    async def body(h: Harness) -> None:
        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(client, h, index)

    run_on("asyncio", lambda: with_runtime(harness, body))
    assert not late, late[:5]  # a reply never left before its own lines were written
    assert _file_lines(harness) == [(name, message) for _, name, message in calls]  # the same lines, in order
    assert sum(writes) == len(calls)
    # requests handled side by side shared writes (the 20 starts of the first loop pass at least: one write)
    assert len(writes) <= len(calls) - 19, (len(writes), len(calls))


def test_lines_logged_outside_a_request_are_written_at_exit() -> None:
    harness = Harness()
    calls = _record_log_calls(harness)

    async def body(h: Harness) -> None:
        assert (await h.start())["Succeeded"]
        h.runtime.log("test-outside-a-request", "test", "Logged by no request, right before the exit.")

    run_mock(lambda: with_runtime(harness, body))
    lines = _file_lines(harness)
    assert ("test-outside-a-request", "Logged by no request, right before the exit.") in lines
    assert lines == [(name, message) for _, name, message in calls]


def test_every_line_logged_before_a_suspend_request_is_written_before_it() -> None:
    harness = Harness(machine=closed_lid_machine())
    calls = _record_log_calls(harness)
    seen: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]] = []  # (file, logged) at the request
    suspender = harness.platform.suspend
    real_suspend = suspender.suspend

    def recording(mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:
        seen.append((_file_lines(harness), [(name, message) for _, name, message in calls]))
        return real_suspend(mode, ignore_other_blockers=ignore_other_blockers)

    suspender.suspend = recording  # type: ignore[method-assign]

    async def body(h: Harness) -> None:
        await h.start()
        await h.stop()
        await anyio.sleep(10.5)  # the post-stop delay (10 s) passes: the suspend is requested
        assert h.actions().count("suspend-requested") == 1

    run_mock(lambda: with_runtime(harness, body))
    [(in_file, logged)] = seen
    assert in_file == logged
    assert any(name == "stop-suspend-scheduled" for name, _ in in_file)


def test_a_line_logged_by_a_request_that_then_waits_is_written_while_it_waits() -> None:
    """A request may wait long after it logged (a Stop held for the phone's reply: minutes): its lines go to
    the file on the next pass of the loop, not only with its reply - a reader (or a kill -9) meanwhile must
    not find the log missing what already happened."""
    harness = Harness()
    during: list[list[tuple[str, str]]] = []

    async def body(h: Harness) -> None:
        assert (await h.start())["Succeeded"]
        runtime = h.runtime
        real_handle = runtime._handle

        async def handle_then_wait(message: dict[str, Any], wire_checked: bool) -> dict[str, Any]:
            reply = await real_handle(message, wire_checked)
            if message.get("Command") == "mark-session-active":
                await anyio.sleep(300)  # a long hold after the request logged its lines
            return reply

        runtime._handle = handle_then_wait  # type: ignore[method-assign]

        async with anyio.create_task_group() as group:
            group.start_soon(lambda: h.send("mark-session-active", Provider="Claude", SessionIdentifier="s1",
                                            SessionStateReason="PreToolUse:Bash"))
            await anyio.sleep(60)  # well inside the hold
            during.append(_file_lines(h))
            group.cancel_scope.cancel()

    run_mock(lambda: with_runtime(harness, body))
    [lines] = during
    assert any(name == "session-activity-recorded" for name, _ in lines), lines
