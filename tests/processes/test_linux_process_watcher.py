"""LinuxProcessWatcher: pidfd exit waiting on real processes, and the polling fallback."""

from __future__ import annotations

import errno
import os
import subprocess
import types
from collections.abc import Iterator

import anyio
import pytest

from lidguard import proctree
from lidguard.platform.api import ProcessWatcher
from lidguard.platform.linux import process as linux_process
from lidguard.platform.linux.process import LinuxProcessWatcher

pytestmark = pytest.mark.anyio

GUARD_SECONDS = 20  # only a hang guard: every wait below ends as soon as the child is gone


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def waiting_child() -> Iterator[subprocess.Popen[bytes]]:
    """A child that exits on its own as soon as the test closes its stdin."""
    child = subprocess.Popen(["sh", "-c", "read _ignored"], stdin=subprocess.PIPE)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


@pytest.fixture
def sleeping_child() -> Iterator[subprocess.Popen[bytes]]:
    """A child that only exits when the test kills it."""
    with subprocess.Popen(["sleep", "600"]) as child:
        try:
            yield child
        finally:
            child.kill()


@pytest.fixture
def reaped_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.fixture
def zombie_pid() -> Iterator[int]:
    """An exited child left unreaped (waitid(2) with WNOWAIT), reaped after the test."""
    child = subprocess.Popen(["true"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    try:
        yield child.pid
    finally:
        child.wait()


def _needs_pidfd(watcher: LinuxProcessWatcher) -> None:
    if watcher.describe() != "pidfd":
        pytest.skip(f"pidfds are not available here: {watcher.describe()}")


def _release(child: subprocess.Popen[bytes]) -> None:
    assert child.stdin is not None
    child.stdin.close()


def _open_pidfds() -> set[str]:
    """This process's open pidfds, known by what they are (not by number: a number free before the wait may
    be any fd's - listdir's own, or one a collected object closed - and reused by the pidfd)."""
    pidfds = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:[pidfd]":
                pidfds.add(name)
        except OSError:  # listdir's own descriptor, closed by now
            pass
    return pidfds


async def test_watcher_satisfies_the_protocol() -> None:
    watcher = LinuxProcessWatcher()
    assert isinstance(watcher, ProcessWatcher)
    assert watcher.is_alive(os.getpid())
    assert watcher.read_ancestry(os.getpid())[0].pid == os.getpid()


async def test_wait_for_exit_returns_when_child_exits(waiting_child: subprocess.Popen[bytes]) -> None:
    watcher = LinuxProcessWatcher()
    _needs_pidfd(watcher)
    exited = anyio.Event()

    async def watch() -> None:
        await watcher.wait_for_exit(waiting_child.pid)
        exited.set()

    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await anyio.wait_all_tasks_blocked()
            assert not exited.is_set()
            _release(waiting_child)
    assert exited.is_set()
    assert not watcher.is_alive(waiting_child.pid)  # exited: a zombie until the fixture reaps it


async def test_wait_for_exit_returns_when_child_is_killed(sleeping_child: subprocess.Popen[bytes]) -> None:
    watcher = LinuxProcessWatcher()
    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(watcher.wait_for_exit, sleeping_child.pid)
            await anyio.wait_all_tasks_blocked()
            sleeping_child.kill()


async def test_wait_for_exit_returns_at_once_for_gone_and_zombie_processes(
    reaped_pid: int, zombie_pid: int
) -> None:
    watcher = LinuxProcessWatcher()
    with anyio.fail_after(GUARD_SECONDS):
        await watcher.wait_for_exit(reaped_pid)
        await watcher.wait_for_exit(zombie_pid)
        await watcher.wait_for_exit(0)


async def test_cancelled_wait_closes_its_pidfd(waiting_child: subprocess.Popen[bytes]) -> None:
    watcher = LinuxProcessWatcher()
    _needs_pidfd(watcher)
    before = _open_pidfds()
    with anyio.move_on_after(GUARD_SECONDS) as guard:
        async with anyio.create_task_group() as group:
            group.start_soon(watcher.wait_for_exit, waiting_child.pid)
            await anyio.wait_all_tasks_blocked()
            assert len(_open_pidfds() - before) == 1  # the wait's pidfd
            group.cancel_scope.cancel()
    assert not guard.cancelled_caught
    assert _open_pidfds() == before


async def test_polling_fallback_when_pidfd_open_is_not_implemented(
    monkeypatch: pytest.MonkeyPatch, waiting_child: subprocess.Popen[bytes]
) -> None:
    def not_implemented(pid: int, flags: int = 0) -> int:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", not_implemented)
    watcher = LinuxProcessWatcher(poll_interval_seconds=0.01)
    assert watcher.describe() == "polling (pidfd_open failed with ENOSYS)"
    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(watcher.wait_for_exit, waiting_child.pid)
            await anyio.wait_all_tasks_blocked()
            _release(waiting_child)


async def test_pidfd_failure_at_wait_time_switches_to_polling(
    monkeypatch: pytest.MonkeyPatch, waiting_child: subprocess.Popen[bytes]
) -> None:
    watcher = LinuxProcessWatcher(poll_interval_seconds=0.01)
    _needs_pidfd(watcher)

    def seccomp_denied(pid: int, flags: int = 0) -> int:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "pidfd_open", seccomp_denied)
    with anyio.fail_after(GUARD_SECONDS):
        async with anyio.create_task_group() as group:
            group.start_soon(watcher.wait_for_exit, waiting_child.pid)
            await anyio.wait_all_tasks_blocked()
            _release(waiting_child)
    assert watcher.describe() == "polling (pidfd_open failed with EPERM)"


async def test_transient_pidfd_failure_polls_once_and_keeps_pidfd(monkeypatch: pytest.MonkeyPatch) -> None:
    watcher = LinuxProcessWatcher()
    _needs_pidfd(watcher)

    def too_many_files(pid: int, flags: int = 0) -> int:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(os, "pidfd_open", too_many_files)
    monkeypatch.setattr(proctree, "is_process_alive", lambda pid: False)
    await watcher.wait_for_exit(12345)
    assert watcher.describe() == "pidfd"


async def test_polling_interval_without_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([True, True, True, False])
    slept: list[float] = []

    async def record_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.delattr(os, "pidfd_open")
    monkeypatch.setattr(proctree, "is_process_alive", lambda pid: next(answers))
    monkeypatch.setattr(linux_process.anyio, "sleep", record_sleep)
    watcher = LinuxProcessWatcher()
    assert watcher.describe() == "polling (this Python has no os.pidfd_open)"
    await watcher.wait_for_exit(4242)
    assert slept == [1.0, 1.0, 1.0]


def test_old_anyio_without_wait_readable_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(linux_process, "anyio", types.SimpleNamespace(sleep=anyio.sleep))  # anyio 4.4-4.6
    assert LinuxProcessWatcher().describe() == "polling (anyio < 4.7 cannot wait on a plain file descriptor)"
