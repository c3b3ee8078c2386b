"""Ancestry readers (compiled and pure) and the liveness check, on real processes and fake /proc trees."""

from __future__ import annotations

import gc
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from proctree_native import compiled_module

from lidguard import proctree
from lidguard._native import extensions_required
from lidguard.platform.api import ProcessInfo

AncestryReader = Callable[..., list[ProcessInfo]]

CHAIN_LEVELS = 10
ODD_NAME = "odd (name) x"  # a real comm with spaces and parentheses
UNICODE_ARGUMENT = "ünïcødé arg"
# Each level runs the next one and stays alive as its parent; level 0 prints its pid and waits for
# stdin to close. Level 4 goes through python and level 6 through a symlink to sh with ODD_NAME.
LEVEL_SCRIPT = """#!/bin/sh
remaining=$1
if [ "$remaining" -le 0 ]; then
  echo $$
  read _ignored
  exit 0
fi
next=$((remaining - 1))
if [ "$remaining" -eq 4 ]; then
  "$CHAIN_PYTHON" -c 'import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))' "$0" "$next" "$2"
elif [ "$remaining" -eq 6 ]; then
  "$CHAIN_ODD_SHELL" "$0" "$next" "$2"
else
  "$0" "$next" "$2"
fi
exit $?
"""


class RealChain:
    """A live chain of CHAIN_LEVELS + 1 processes; ``leaf_pid`` is the deepest one."""

    def __init__(self, directory: Path) -> None:
        script = directory / "level.sh"
        script.write_text(LEVEL_SCRIPT)
        script.chmod(0o755)
        odd_shell = directory / ODD_NAME
        odd_shell.symlink_to(shutil.which("sh") or "/bin/sh")
        environment = dict(os.environ, CHAIN_PYTHON=sys.executable, CHAIN_ODD_SHELL=str(odd_shell))
        self.top = subprocess.Popen(
            [str(script), str(CHAIN_LEVELS), UNICODE_ARGUMENT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, start_new_session=True,
        )
        assert self.top.stdout is not None
        self.leaf_pid = int(self.top.stdout.readline())

    def close(self) -> None:
        assert self.top.stdin is not None
        self.top.stdin.close()  # the leaf's `read` sees EOF and every level exits in turn
        try:
            self.top.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.top.pid, signal.SIGKILL)
            self.top.wait()
        assert self.top.stdout is not None
        self.top.stdout.close()


@pytest.fixture
def real_chain(tmp_path: Path) -> Iterator[RealChain]:
    chain = RealChain(tmp_path)
    try:
        yield chain
    finally:
        chain.close()


def _native_reader() -> AncestryReader:
    """The compiled reader, even when LIDGUARD_NO_EXTENSIONS=1 keeps it out of read_ancestry."""
    if proctree.native_active():
        return proctree.read_ancestry_native
    module = compiled_module()

    def read(pid: int, *, max_depth: int = 64, proc_root: str = "/proc") -> list[ProcessInfo]:
        return module.read_chain(pid, max_depth, proc_root, ProcessInfo)

    return read


@pytest.fixture(params=["pure", "native"])
def reader(request: pytest.FixtureRequest) -> AncestryReader:
    if request.param == "pure":
        return proctree.read_ancestry_pure
    return _native_reader()


# ---------------------------------------------------------------- real processes


def test_real_chain_parity_field_by_field(real_chain: RealChain) -> None:
    native = _native_reader()(real_chain.leaf_pid)
    pure = proctree.read_ancestry_pure(real_chain.leaf_pid)
    assert len(native) == len(pure) >= CHAIN_LEVELS + 2
    for native_info, pure_info in zip(native, pure, strict=True):
        assert native_info.pid == pure_info.pid
        assert native_info.ppid == pure_info.ppid
        assert native_info.name == pure_info.name
        assert native_info.exe == pure_info.exe
        assert native_info.cmdline == pure_info.cmdline


def test_real_chain_shape(real_chain: RealChain, reader: AncestryReader) -> None:
    chain = reader(real_chain.leaf_pid)
    assert chain[0].pid == real_chain.leaf_pid
    for child, parent in itertools.pairwise(chain):
        assert child.ppid == parent.pid
    pids = [info.pid for info in chain]
    # CHAIN_LEVELS + 1 shell levels plus the python process between levels 4 and 3.
    assert pids.index(real_chain.top.pid) == CHAIN_LEVELS + 1
    assert pids[CHAIN_LEVELS + 2] == os.getpid()
    levels = chain[: CHAIN_LEVELS + 2]
    assert ODD_NAME in [info.name for info in levels]
    assert any(info.exe == os.path.realpath(sys.executable) for info in levels)
    assert all(UNICODE_ARGUMENT in info.cmdline for info in levels)
    assert chain[-1].ppid == 0 or len(chain) == 64


def test_real_chain_respects_max_depth(real_chain: RealChain, reader: AncestryReader) -> None:
    chain = reader(real_chain.leaf_pid, max_depth=3)
    assert [info.pid for info in chain] == [info.pid for info in reader(real_chain.leaf_pid)[:3]]


def test_read_ancestry_defaults_to_this_process(reader: AncestryReader) -> None:
    chain = proctree.read_ancestry()
    assert chain[0].pid == os.getpid()
    assert chain[0].ppid == os.getppid()
    assert chain[0].exe == os.path.realpath(sys.executable)
    assert reader(os.getpid()) == chain


def test_missing_pid_gives_empty_chain(reader: AncestryReader) -> None:
    assert reader(0) == []
    assert reader(-5) == []
    assert reader(2**22 + 1) == []  # above the kernel's pid_max limit


def test_read_ancestry_uses_the_compiled_reader_when_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int, str, type]] = []

    class StubModule:
        @staticmethod
        def read_chain(pid: int, max_depth: int, proc_root: str, record_type: type) -> list[Any]:
            calls.append((pid, max_depth, proc_root, record_type))
            return [record_type(pid, 1, "stub", "/bin/stub", ("stub", "-x"))]

    monkeypatch.setattr(proctree, "_native", StubModule())
    assert proctree.native_active()
    assert proctree.read_ancestry(1234, max_depth=7) == [ProcessInfo(1234, 1, "stub", "/bin/stub", ("stub", "-x"))]
    assert calls == [(1234, 7, "/proc", ProcessInfo)]  # the records are built by the compiled walk


def test_read_ancestry_falls_back_to_pure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proctree, "_native", None)
    assert not proctree.native_active()
    assert proctree.read_ancestry() == proctree.read_ancestry_pure(os.getpid())
    with pytest.raises(proctree.Unsupported):
        proctree.read_ancestry_native(os.getpid())


@pytest.mark.skipif(not extensions_required(), reason="only when LIDGUARD_REQUIRE_EXTENSIONS=1 (CI wheels)")
def test_native_module_is_active_when_required() -> None:
    assert proctree.native_active(), proctree.native_status_reason()
    assert proctree.native_status_reason() == "compiled module active"


def test_no_extensions_switch_forces_pure() -> None:
    environment = dict(os.environ, LIDGUARD_NO_EXTENSIONS="1")
    environment.pop("LIDGUARD_REQUIRE_EXTENSIONS", None)
    code = "import lidguard.proctree as p; print(p.native_active()); print(p.native_status_reason())"
    output = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert output == ["False", "disabled by LIDGUARD_NO_EXTENSIONS=1"]


# ---------------------------------------------------------------- is_process_alive


def test_live_process_is_alive() -> None:
    assert proctree.is_process_alive(os.getpid())
    with subprocess.Popen(["sh", "-c", "read _ignored"], stdin=subprocess.PIPE) as child:
        assert proctree.is_process_alive(child.pid)
        assert child.stdin is not None
        child.stdin.close()  # `read` sees EOF and the shell exits; leaving `with` reaps it
    assert not proctree.is_process_alive(child.pid)


def test_reaped_process_is_not_alive() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    assert not proctree.is_process_alive(child.pid)


def test_zombie_counts_as_exited() -> None:
    child = subprocess.Popen(["true"])
    # Block until it exits but leave it unreaped (WNOWAIT): it is now a zombie, see waitid(2).
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    try:
        os.kill(child.pid, 0)  # kill(2) still finds a zombie, so the state check is what matters
        assert proctree.read_process_state(child.pid) == "Z"
        assert not proctree.is_process_alive(child.pid)
    finally:
        child.wait()


def test_non_positive_pids_are_never_alive() -> None:
    assert not proctree.is_process_alive(0)
    assert not proctree.is_process_alive(-1)


def test_permission_error_means_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    def deny(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(proctree.os, "kill", deny)
    assert proctree.is_process_alive(os.getpid())


# ---------------------------------------------------------------- fake /proc trees


def add_process(root: Path, pid: int, ppid: int, name: str = "proc", *, state: str = "S",
                cmdline: bytes | None = b"proc\0", exe: str | None = "/usr/bin/proc",
                stat: bytes | None = None) -> None:
    """Writes <root>/<pid>/{stat,cmdline,exe} like proc(5); None leaves a file out."""
    directory = root / str(pid)
    directory.mkdir(parents=True)
    line = stat if stat is not None else f"{pid} ({name}) {state} {ppid} {pid} {pid} 0 -1 4194560\n".encode()
    (directory / "stat").write_bytes(line)
    if cmdline is not None:
        (directory / "cmdline").write_bytes(cmdline)
    if exe is not None:
        (directory / "exe").symlink_to(exe)


def test_comm_with_spaces_and_parentheses(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 42, 1, name="my (odd) name) ")
    add_process(tmp_path, 1, 0, name="init")
    chain = reader(42, proc_root=str(tmp_path))
    assert [(info.pid, info.ppid, info.name) for info in chain] == [(42, 1, "my (odd) name) "), (1, 0, "init")]


def test_missing_and_empty_cmdline(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 30, 20, cmdline=None)
    add_process(tmp_path, 20, 10, cmdline=b"")
    add_process(tmp_path, 10, 0, cmdline=b"a\0\0b c\0")
    chain = reader(30, proc_root=str(tmp_path))
    assert [info.cmdline for info in chain] == [(), (), ("a", "", "b c")]


def test_cmdline_without_terminator_and_undecodable_bytes(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 7, 0, cmdline=b"prog\0-x\0caf\xe9")
    (info,) = reader(7, proc_root=str(tmp_path))
    assert info.cmdline == ("prog", "-x", "caf\udce9")
    assert os.fsencode(info.cmdline[2]) == b"caf\xe9"


def test_unreadable_exe_is_empty(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 3, 2, exe=None)  # missing link: kernel thread or gone
    add_process(tmp_path, 2, 1, exe=None)
    (tmp_path / "2" / "exe").write_text("not a link")  # readlink(2) fails with EINVAL
    add_process(tmp_path, 1, 0, exe="/gone/binary (deleted)")
    chain = reader(3, proc_root=str(tmp_path))
    assert [info.exe for info in chain] == ["", "", "/gone/binary (deleted)"]


def test_long_cmdline_is_read_whole(tmp_path: Path, reader: AncestryReader) -> None:
    arguments = tuple(f"argument-{index:06d}" for index in range(20_000))  # ~340 KB, many reads
    add_process(tmp_path, 9, 0, cmdline=b"\0".join(argument.encode() for argument in arguments) + b"\0")
    (info,) = reader(9, proc_root=str(tmp_path))
    assert info.cmdline == arguments


@pytest.mark.parametrize("size", [4095, 4096, 4097, 8192])
def test_files_at_the_read_buffer_size_are_read_whole(tmp_path: Path, reader: AncestryReader, size: int) -> None:
    """The compiled walk takes a read shorter than its 4096-byte buffer as the end of the file: a file that
    fills the buffer exactly must still be read on to its end (stat and cmdline alike)."""
    cmdline = b"x" * (size - 1) + b"\0"
    comm = "c" * (size - len(b"11 () S 0 11 11 0 -1 4194560\n"))
    add_process(tmp_path, 11, 0, name=comm, cmdline=cmdline)
    assert (tmp_path / "11" / "stat").stat().st_size == size
    (info,) = reader(11, proc_root=str(tmp_path))
    assert info.cmdline == ("x" * (size - 1),)
    assert (info.name, info.ppid) == (comm, 0)


def test_proc_root_missing_a_file_or_relative(tmp_path: Path, reader: AncestryReader,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    add_process(tmp_path / "proc", 5, 0)
    (tmp_path / "file").write_text("5")
    assert reader(5, proc_root=str(tmp_path / "absent")) == []
    assert reader(5, proc_root=str(tmp_path / "file")) == []
    monkeypatch.chdir(tmp_path)
    assert [info.pid for info in reader(5, proc_root="proc")] == [5]
    assert [info.pid for info in reader(5, proc_root="proc/")] == [5]


def test_parent_loop_stops(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 10, 11)
    add_process(tmp_path, 11, 10)
    add_process(tmp_path, 12, 12)
    assert [info.pid for info in reader(10, proc_root=str(tmp_path))] == [10, 11]
    assert [info.pid for info in reader(12, proc_root=str(tmp_path))] == [12]


def test_max_depth_limits_a_long_chain(tmp_path: Path, reader: AncestryReader) -> None:
    for pid in range(100, 200):
        add_process(tmp_path, pid, pid + 1)
    add_process(tmp_path, 200, 0)
    assert len(reader(100, proc_root=str(tmp_path))) == 64
    assert [info.pid for info in reader(100, max_depth=5, proc_root=str(tmp_path))] == list(range(100, 105))
    assert reader(100, max_depth=0, proc_root=str(tmp_path)) == []
    assert len(reader(100, max_depth=1000, proc_root=str(tmp_path))) == 101


def test_a_loop_or_a_huge_max_depth_past_the_first_64_processes(tmp_path: Path, reader: AncestryReader) -> None:
    """The pids seen so far grow past 64 (a loop closing after 100 processes is still found), and a huge
    max_depth costs nothing up front (the compiled walk sizes what it keeps by the chain, not by the bound)."""
    for pid in range(300, 400):
        add_process(tmp_path, pid, pid + 1 if pid < 399 else 300)
    assert [info.pid for info in reader(300, max_depth=1000, proc_root=str(tmp_path))] == list(range(300, 400))
    assert len(reader(300, max_depth=2**31 - 1, proc_root=str(tmp_path))) == 100


def test_the_compiled_walk_builds_the_records_it_is_given(real_chain: RealChain) -> None:
    """``read_chain(..., record_type)`` makes every entry a ``record_type`` (no copy into records afterwards,
    issue 22): the values of the plain tuples, field by field; ``read_ancestry`` hands out ProcessInfo."""
    module = compiled_module()
    plain = module.read_chain(real_chain.leaf_pid, 64, "/proc")
    records = module.read_chain(real_chain.leaf_pid, 64, "/proc", ProcessInfo)
    assert len(records) >= CHAIN_LEVELS + 2
    assert all(type(entry) is tuple for entry in plain)
    assert all(type(record) is ProcessInfo for record in records)
    assert [tuple(record) for record in records] == plain
    assert all(UNICODE_ARGUMENT in record.cmdline for record in records[: CHAIN_LEVELS + 2])
    if proctree.native_active():
        chain = proctree.read_ancestry(real_chain.leaf_pid)
        assert all(type(info) is ProcessInfo for info in chain)
        assert [tuple(info) for info in chain] == plain


def test_the_compiled_walk_takes_only_record_types_that_hold_five_items(tmp_path: Path) -> None:
    """Only a type made by a class statement (its instances are item slots and nothing else) is filled in
    place; anything else is a ``TypeError``, never a write past what was allocated."""
    module = compiled_module()
    add_process(tmp_path, 5, 0, cmdline=b"a\0b\0")

    class Plain:
        pass

    class Row(tuple):  # made by a class statement, like ProcessInfo
        pass

    class Derived(Row):
        pass

    # Five items written into any of these would corrupt memory (a struct sequence such as os.stat_result keeps
    # hidden fields its deallocator reads): each is refused before anything is allocated.
    for wrong in (dict, list, object, Plain, int, tuple, os.stat_result, time.struct_time, os.terminal_size):
        with pytest.raises(TypeError, match="class statement"):
            module.read_chain(5, 64, str(tmp_path), wrong)
    for record_type in (Row, Derived, ProcessInfo):
        (row,) = module.read_chain(5, 64, str(tmp_path), record_type)
        assert type(row) is record_type
        assert tuple(row) == (5, 0, "proc", "/usr/bin/proc", ("a", "b"))
    del row
    gc.collect()  # records built in place are freed like any other instance


def test_the_compiled_records_leak_nothing(real_chain: RealChain) -> None:
    """Each record owns its five values once: 2,000 walks leave no memory behind (an extra reference on any
    field keeps every walk's strings alive: megabytes)."""
    module = compiled_module()
    for _ in range(50):  # warm-up: the interpreter's own caches
        module.read_chain(real_chain.leaf_pid, 64, "/proc", ProcessInfo)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            module.read_chain(real_chain.leaf_pid, 64, "/proc", ProcessInfo)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes left behind by 2,000 walks"


def test_chain_ends_at_missing_parent_or_bad_stat(tmp_path: Path, reader: AncestryReader) -> None:
    add_process(tmp_path, 5, 4)  # 4 does not exist
    add_process(tmp_path, 8, 6)
    add_process(tmp_path, 6, 1, stat=b"6 no parentheses S 1\n")
    add_process(tmp_path, 13, 14)
    add_process(tmp_path, 14, 1, stat=b"14 (x) S\n")  # truncated: no ppid
    add_process(tmp_path, 15, 0)
    (tmp_path / "16").mkdir()  # a process directory without stat (it is exiting)
    assert [info.pid for info in reader(5, proc_root=str(tmp_path))] == [5]
    assert [info.pid for info in reader(8, proc_root=str(tmp_path))] == [8]
    assert [info.pid for info in reader(13, proc_root=str(tmp_path))] == [13]
    assert reader(16, proc_root=str(tmp_path)) == []


def test_read_process_state(tmp_path: Path) -> None:
    add_process(tmp_path, 21, 1, state="Z", name="a) Z (b")
    assert proctree.read_process_state(21, proc_root=str(tmp_path)) == "Z"
    assert proctree.read_process_state(22, proc_root=str(tmp_path)) is None


_COMM_BYTES = st.binary(min_size=0, max_size=40).filter(lambda raw: b"\0" not in raw and b"\n" not in raw)
_ARGUMENTS = st.lists(st.binary(max_size=12).filter(lambda raw: b"\0" not in raw), max_size=6)


@settings(max_examples=60, deadline=None)
@given(comm=_COMM_BYTES, arguments=_ARGUMENTS, terminated=st.booleans())
def test_parity_on_arbitrary_bytes(comm: bytes, arguments: list[bytes], terminated: bool) -> None:
    native = _native_reader()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        cmdline = b"\0".join(arguments) + (b"\0" if terminated and arguments else b"")
        add_process(root, 77, 0, stat=b"77 (" + comm + b") R 0 77 77\n", cmdline=cmdline)
        pure_chain = proctree.read_ancestry_pure(77, proc_root=directory)
        assert native(77, proc_root=directory) == pure_chain
    assert pure_chain[0].name == comm.decode("utf-8", "surrogateescape")
