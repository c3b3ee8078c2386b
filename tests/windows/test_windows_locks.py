"""The runtime lock, the launch gate and config locks with Windows semantics, on any OS.

Windows file locks are mandatory byte ranges: nobody else can read a locked byte. The runtime's
``<pid> ready`` record and the launch gate's failure record must stay readable while their locks are
held, so every lock sits on one byte past them. The fake ``msvcrt`` below keeps real lock state per
(file, byte) and refuses a byte another descriptor holds; ``os.pread``/``os.pwrite`` are removed as on
Windows.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest

from lidguard.platform import locking

RECORD_BYTES = 4096  # the most any record may hold (LaunchGate.write_record's bound)


class FakeMsvcrt(types.ModuleType):
    LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4

    def __init__(self) -> None:
        super().__init__("msvcrt")
        self.held: dict[tuple[int, int, int], int] = {}
        self.positions: list[int] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        assert nbytes == 1
        position = os.lseek(fd, 0, os.SEEK_CUR)
        self.positions.append(position)
        info = os.fstat(fd)
        key = (info.st_dev, info.st_ino, position)
        if mode == self.LK_NBLCK:
            if self.held.get(key, fd) != fd:
                raise PermissionError(13, "Permission denied")
            self.held[key] = fd
        elif mode == self.LK_UNLCK:
            if self.held.get(key) != fd:
                raise PermissionError(13, "Permission denied")
            del self.held[key]
        else:
            raise AssertionError(f"unexpected mode {mode}")

    def locked_offsets(self, path: Path) -> set[int]:
        info = os.stat(path)
        return {offset for (dev, ino, offset) in self.held if (dev, ino) == (info.st_dev, info.st_ino)}


@pytest.fixture()
def msvcrt(monkeypatch: pytest.MonkeyPatch) -> FakeMsvcrt:
    fake = FakeMsvcrt()
    monkeypatch.setitem(__import__("sys").modules, "msvcrt", fake)
    monkeypatch.setattr(locking, "sys", types.SimpleNamespace(platform="win32"))
    monkeypatch.delattr(os, "pwrite", raising=False)
    monkeypatch.delattr(os, "pread", raising=False)
    return fake


def _readable_by_others(fake: FakeMsvcrt, path: Path) -> bool:
    return all(offset >= RECORD_BYTES for offset in fake.locked_offsets(path))


def test_the_runtime_lock_leaves_its_ready_record_readable(msvcrt: FakeMsvcrt, tmp_path: Path) -> None:
    path = tmp_path / "runtime.lock"
    runtime = locking.InstanceLock(path, record_pid=True)
    assert runtime.try_acquire()
    runtime.mark_ready()

    assert msvcrt.locked_offsets(path) == {locking.WINDOWS_LOCK_OFFSET}
    assert _readable_by_others(msvcrt, path)
    assert locking.lock_holder_record(path) == f"{os.getpid()} ready\n"
    assert os.path.getsize(path) == len(f"{os.getpid()} ready\n")  # the lock past the end grew nothing
    assert not locking.InstanceLock(path).try_acquire()
    assert locking.held_by_another_process(path)

    runtime.release()
    assert msvcrt.locked_offsets(path) == set()
    assert not locking.held_by_another_process(path)
    again = locking.InstanceLock(path, record_pid=True)
    assert again.try_acquire()
    assert locking.lock_holder_record(path) == f"{os.getpid()}\n"
    again.release()


def test_the_launch_gate_record_is_read_while_the_leader_holds_it(msvcrt: FakeMsvcrt, tmp_path: Path) -> None:
    path = tmp_path / "launch.lock"
    leader, waiter = locking.LaunchGate(path), locking.LaunchGate(path)
    assert leader.open() and waiter.open()
    assert leader.try_lead()
    leader.write_record("The runtime could not start: no socket.")

    assert _readable_by_others(msvcrt, path)
    assert waiter.leader_active()
    assert waiter.read_record() == "The runtime could not start: no socket."
    assert not waiter.wait_for_leader(0.0)

    leader.close()
    assert not waiter.leader_active()
    assert waiter.wait_for_leader(0.0)
    waiter.close()
    assert msvcrt.locked_offsets(path) == set()


def test_config_locks_exclude_each_other(msvcrt: FakeMsvcrt, tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    with locking.config_lock(target):
        with pytest.raises(locking.ConfigLockError, match="Another process is changing"):
            with locking.config_lock(target, timeout=0.0):
                pass
        assert msvcrt.locked_offsets(locking.config_lock_path(target)) == {locking.WINDOWS_LOCK_OFFSET}
    assert msvcrt.locked_offsets(locking.config_lock_path(target)) == set()
    with locking.config_lock(target, timeout=0.0):
        pass
