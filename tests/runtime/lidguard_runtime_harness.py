"""The in-process runtime harness: a fake machine, a clock the test can jump, a slow platform.

Imported by the tests of this folder (``conftest.py`` puts the folder on ``sys.path``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import httpx
import trio.testing

from lidguard.platform.api import DisplayConnector, LidState, SuspendMode, SuspendResult
from lidguard.platform.fake import FakeMachine, FakePlatform
from lidguard.platform.paths import resolve_paths
from lidguard.runtime.app import Runtime
from lidguard.settings.model import Settings, headless_defaults

BACKENDS = ["trio", "asyncio"]
EPOCH = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def run_mock(test: Callable[[], Awaitable[None]], *, instruments: list[Any] | None = None) -> None:
    options: dict[str, Any] = {"clock": trio.testing.MockClock(autojump_threshold=0)}
    if instruments:
        options["instruments"] = instruments
    anyio.run(test, backend="trio", backend_options=options)


def run_on(backend: str, test: Callable[[], Awaitable[None]]) -> None:
    """Runs a flow that needs no MockClock on trio or asyncio (real time, short and bounded)."""
    anyio.run(test, backend=backend)


class JumpClock:
    """Wall clock for tests: EPOCH + the event loop's clock (trio MockClock) + an offset the test moves.

    ``jump(seconds)`` is what a suspend/resume looks like from the inside: the wall clock leaps while
    the loop's monotonic clock does not.
    """

    def __init__(self, start: datetime = EPOCH) -> None:
        self.start = start
        self.offset = 0.0

    def now(self) -> datetime:
        try:
            loop_time = anyio.current_time()
        except Exception:  # before the loop exists
            loop_time = 0.0
        return self.start + timedelta(seconds=loop_time + self.offset)

    def jump(self, seconds: float) -> None:
        self.offset += seconds


def with_settings(**changes: Any) -> Settings:
    return Settings.from_raw({**headless_defaults().to_file_json(), **changes})


def closed_lid_machine(*displays: DisplayConnector) -> FakeMachine:
    return FakeMachine(lid=LidState.CLOSED, displays=list(displays) or [DisplayConnector("eDP-1", True)])


class WebhookReceiver:
    """An in-process HTTP receiver (httpx.MockTransport): records every POST with the loop time and
    the platform actions seen so far; ``delay`` answers late (mock time), ``down`` refuses."""

    def __init__(self, *, delay: float = 0.0, status: int = 200, down: bool = False) -> None:
        self.delay = delay
        self.status = status
        self.down = down
        self.requests: list[dict[str, Any]] = []
        self.finished: list[float] = []
        self.platform: Any = None
        self.transport = httpx.MockTransport(self._handle)

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        actions = [action["action"] for action in self.platform.actions] if self.platform is not None else []
        self.requests.append({"at": anyio.current_time(), "url": str(request.url), "body": json.loads(request.content),
                              "contentType": request.headers.get("content-type"), "actions": actions})
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if self.delay:
            await anyio.sleep(self.delay)
        self.finished.append(anyio.current_time())
        return httpx.Response(self.status, json={})

    def bodies(self, event_type: str | None = None) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if event_type is None or r["body"].get("eventType") == event_type]


class Harness:
    def __init__(self, settings: Settings | None = None, machine: FakeMachine | None = None, *,
                 platform: Any = None, clock: Any = None, offload: bool | None = None,
                 receiver: WebhookReceiver | None = None) -> None:
        self.platform = platform or FakePlatform(machine or FakeMachine())
        self.paths = resolve_paths()
        self.clock = clock or JumpClock()
        self.receiver = receiver
        if receiver is not None:
            receiver.platform = self.platform
        self.runtime = Runtime(platform=self.platform, paths=self.paths, settings=settings or headless_defaults(),
                               clock=self.clock, offload_platform_calls=offload,
                               webhook_transport=receiver.transport if receiver is not None else None)

    async def send(self, command: str, **fields: Any) -> dict[str, Any]:
        return await self.runtime.handle_message({"v": 1, "Command": command, **fields})

    async def start(self, session: str = "s1", provider: str = "Claude", **fields: Any) -> dict[str, Any]:
        return await self.send("start", Provider=provider, SessionIdentifier=session, **fields)

    async def stop(self, session: str = "s1", provider: str = "Claude", **fields: Any) -> dict[str, Any]:
        return await self.send("stop", Provider=provider, SessionIdentifier=session, **fields)

    def actions(self) -> list[str]:
        return [action["action"] for action in self.platform.actions]

    def log_names(self) -> list[str]:
        return [entry["EventName"] for entry in self.runtime.session_log.read()]

    def log_entries(self, name: str) -> list[dict[str, Any]]:
        return [entry for entry in self.runtime.session_log.read() if entry["EventName"] == name]


async def with_runtime(harness: Harness, body: Callable[[Harness], Awaitable[None]]) -> None:
    async with anyio.create_task_group() as task_group:
        await harness.runtime.run(task_group)
        await body(harness)
        task_group.cancel_scope.cancel()
    await harness.runtime.shutdown()


async def wait_until(predicate: Callable[[], bool], *, seconds: float = 5.0) -> None:
    """Polls a condition with a bound (real or mock time); fails the test if it never holds."""
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.005)


def assert_nothing_left_applied(harness: Harness) -> None:
    """Every protection applied was released and every lid-policy change was restored."""
    actions = harness.actions()
    assert actions.count("protection-applied") == actions.count("protection-released"), actions
    assert actions.count("lid-policy-changed") == (
        actions.count("lid-policy-restored") + actions.count("lid-policy-hold-dropped")), actions
    assert not harness.paths.lid_backup_file.exists()
    assert harness.platform.machine.lid_ac_action == 1 and harness.platform.machine.lid_dc_action == 1


class SlowSuspendPlatform(FakePlatform):
    """A fake whose suspend request blocks in the worker thread until released (at most ``latency`` s)."""

    def __init__(self, machine: FakeMachine, latency: float = 2.0) -> None:
        super().__init__(machine)
        self.latency = latency
        self.entered = threading.Event()
        self.release = threading.Event()
        self.finished = threading.Event()
        inner = self.suspend

        class _Slow:
            list_blockers = inner.list_blockers
            blocker_changes = inner.blocker_changes

            def suspend(inner_self, mode: SuspendMode, *, ignore_other_blockers: bool = False) -> SuspendResult:  # noqa: N805
                self.entered.set()
                self.release.wait(self.latency)
                try:
                    return inner.suspend(mode, ignore_other_blockers=ignore_other_blockers)
                finally:
                    self.finished.set()

        self.suspend = _Slow()  # type: ignore[assignment]
