"""The runtime's gate (``runtime/gate.py``): one holder at a time, first come first served, free to take
when free, and never stranded by a cancellation - on trio and asyncio."""

from __future__ import annotations

import asyncio
import random

import anyio
import pytest
from lidguard_runtime_harness import BACKENDS, run_mock, run_on

from lidguard.runtime.gate import Gate


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_free_gate_is_taken_without_a_trip_through_the_event_loop(backend: str) -> None:
    """Every request takes the gate; an ``anyio.Lock`` checkpoints on each take (a whole scheduling round)."""
    async def body() -> None:
        gate = Gate()
        ran: list[int] = []

        async def other() -> None:
            ran.append(1)

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(other)  # runs at this task's next checkpoint, not before
            for _ in range(100):
                async with gate:
                    assert gate.locked()
            assert ran == [] and not gate.locked()
        assert ran == [1]

    run_on(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_holder_at_a_time_in_the_order_they_came(backend: str) -> None:
    async def body() -> None:
        gate = Gate()
        holders: list[int] = []
        order: list[int] = []
        chance = random.Random(7)

        async def worker(index: int, pause: float) -> None:
            async with gate:
                order.append(index)
                holders.append(index)
                assert len(holders) == 1, holders
                await anyio.sleep(pause)  # a holder that awaits keeps everyone else out
                holders.remove(index)

        async with gate:  # everyone queues behind this holder, in start order
            async with anyio.create_task_group() as task_group:
                for index in range(30):
                    task_group.start_soon(worker, index, chance.choice([0, 0, 0.001]))
                    await anyio.sleep(0)  # each has queued before the next starts
                gate.release()
                assert gate.locked(), "handed straight to the first waiter"
                await anyio.sleep(0)
            await gate.acquire()  # back for the ``async with`` to release
        assert order == list(range(30)) and not gate.locked()

    run_on(backend, body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_waiter_cancelled_before_its_turn_leaves_the_queue(backend: str) -> None:
    async def body() -> None:
        gate = Gate()
        got: list[str] = []

        async def waiter(name: str, scope_holder: list[anyio.CancelScope]) -> None:
            with anyio.CancelScope() as scope:
                scope_holder.append(scope)
                async with gate:
                    got.append(name)

        await gate.acquire()
        first: list[anyio.CancelScope] = []
        second: list[anyio.CancelScope] = []
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(waiter, "cancelled", first)
            await anyio.sleep(0.001)
            task_group.start_soon(waiter, "next", second)
            await anyio.sleep(0.001)
            first[0].cancel()
            await anyio.sleep(0.001)
            gate.release()
        assert got == ["next"] and not gate.locked()

    run_on(backend, body)


@pytest.mark.parametrize("then_free", [False, True])
def test_a_waiter_cancelled_as_the_gate_reaches_it_passes_it_on(then_free: bool) -> None:
    """Released (handed to the waiter) and the waiter cancelled before it runs (asyncio throws the
    cancellation into a task whose wait had already ended): the gate goes to the next waiter, or comes
    free - never held by nobody."""
    async def body() -> None:
        gate = Gate()
        got: list[str] = []

        async def waiter(name: str) -> None:
            try:
                async with gate:
                    got.append(name)
            except asyncio.CancelledError:
                got.append(f"{name} cancelled")

        await gate.acquire()
        handed = asyncio.create_task(waiter("handed"))
        await asyncio.sleep(0)
        waiters = [handed]
        if not then_free:
            waiters.append(asyncio.create_task(waiter("after")))
            await asyncio.sleep(0)
        gate.release()  # the gate now belongs to "handed"...
        handed.cancel()  # ...which is cancelled before it runs
        await asyncio.gather(*waiters)
        assert got == ["handed cancelled"] + ([] if then_free else ["after"])
        assert not gate.locked()
        async with gate:  # and anyone can take it
            pass

    asyncio.run(body())


def test_releasing_a_free_gate_is_a_bug_said_at_once() -> None:
    with pytest.raises(RuntimeError, match="not held"):
        Gate().release()


def test_many_tasks_with_random_cancellations_never_strand_the_gate() -> None:
    async def body() -> None:
        gate = Gate()
        inside: list[int] = []
        done: list[int] = []
        chance = random.Random(11)

        async def worker(index: int) -> None:
            with anyio.move_on_after(chance.choice([0.0005, 0.002, 1.0])):
                async with gate:
                    inside.append(index)
                    assert len(inside) == 1
                    await anyio.sleep(chance.choice([0, 0.001]))
                    inside.remove(index)
                    done.append(index)

        async with anyio.create_task_group() as task_group:
            for index in range(200):
                task_group.start_soon(worker, index)
        assert not gate.locked() and not inside and done

    run_mock(body)
