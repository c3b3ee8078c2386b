"""The compiled descendant-CPU reader (native/proctree_linux.pyx ``descendant_cpu``) against the pure
/proc scan: the same seconds on a real process tree (both of its walks: the task children files and
the full scan), on fake /proc trees with garbage in them, and the runtime's reader uses it when active."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from proctree_native import compiled_module

from lidguard import proctree
from lidguard.platform.ancestry import linux as procfs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")

CpuReader = Callable[[int, str], "float | None"]


def readers() -> dict[str, CpuReader]:
    module = compiled_module()
    return {
        "pure": lambda pid, root: procfs.descendant_cpu_seconds(pid, proc_root=root),
        "native": lambda pid, root: module.descendant_cpu(pid, root),
        "native-scan": lambda pid, root: module.descendant_cpu(pid, root, False),
    }


def read_all(pid: int, root: str = "/proc") -> dict[str, float | None]:
    return {name: read(pid, root) for name, read in readers().items()}


def assert_same(values: dict[str, float | None], expected: float | None) -> None:
    for name, value in values.items():
        if expected is None:
            assert value is None, name
        else:
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-9), name


# A tree that burns CPU, reaps one child per level (its time moves into the parent's cutime), then
# sleeps: level 0 -> 2 x level 1 -> 2 x level 2 each. "ready" on stdout once the subtree sleeps.
TREE_SCRIPT = textwrap.dedent("""
    import subprocess, sys, time
    def burn(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    level = int(sys.argv[1])
    burn(0.1)
    kids = []
    if level < 2:
        subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.05\\n"
                        "while time.process_time() < end: pass"], check=True)
        for _ in range(2):
            kids.append(subprocess.Popen([sys.executable, __file__, str(level + 1)], stdout=subprocess.PIPE))
        for kid in kids:
            assert kid.stdout.readline() == b"ready\\n"
    print("ready", flush=True)
    time.sleep(600)
""")


@pytest.fixture
def sleeping_tree(tmp_path: Path) -> Iterator[int]:
    script = tmp_path / "tree.py"
    script.write_text(TREE_SCRIPT)
    top = subprocess.Popen([sys.executable, str(script), "0"], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert top.stdout is not None
        assert top.stdout.readline() == b"ready\n"
        yield top.pid
    finally:
        os.killpg(top.pid, signal.SIGKILL)
        top.wait()
        if top.stdout is not None:
            top.stdout.close()


def test_native_and_pure_read_the_same_seconds_on_a_real_sleeping_tree(sleeping_tree: int):
    values = read_all(sleeping_tree)
    pure = values["pure"]
    assert pure is not None
    # 2 x (0.1 + a reaped 0.05) at level 1 + 4 x 0.1 at level 2 (plus interpreter start-up)
    assert pure >= 0.65
    assert_same(values, pure)
    lone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert_same(read_all(lone.pid), 0.0)
    finally:
        lone.kill()
        lone.wait()
    assert_same(read_all(lone.pid), None)  # gone


def test_the_runtime_reader_uses_the_compiled_one_when_it_is_active(sleeping_tree: int,
                                                                    monkeypatch: pytest.MonkeyPatch):
    if not proctree.native_active():
        assert proctree.descendant_cpu_seconds(sleeping_tree) == read_all(sleeping_tree)["pure"]
        return  # the pure axis (LIDGUARD_NO_EXTENSIONS=1): the pure reader is the reader

    def pure_must_not_run(pid: int) -> float | None:
        raise AssertionError("the pure reader ran although the compiled one is active")

    expected = read_all(sleeping_tree)["pure"]
    monkeypatch.setattr(proctree._reader, "descendant_cpu_seconds", pure_must_not_run)
    assert proctree.descendant_cpu_seconds(sleeping_tree) == pytest.approx(expected)


def stat_line(pid: int, ppid: int, ticks: tuple[int, int, int, int], name: str = "proc") -> bytes:
    utime, stime, cutime, cstime = ticks
    return (f"{pid} ({name}) S {ppid} {pid} {pid} 0 -1 4194560 0 0 0 0 {utime} {stime} {cutime} {cstime} "
            f"20 0 1 0 100 0 0\n").encode()


def add(root: Path, pid: int, ppid: int, ticks: tuple[int, int, int, int] = (0, 0, 0, 0), *,
        name: str = "proc", stat: bytes | None = None) -> None:
    (root / str(pid)).mkdir()
    (root / str(pid) / "stat").write_bytes(stat if stat is not None else stat_line(pid, ppid, ticks, name))


def test_fake_trees_with_garbage_read_the_same(tmp_path: Path):
    hz = os.sysconf("SC_CLK_TCK")
    add(tmp_path, 1, 0, (5, 5, 900, 900), name="init")
    add(tmp_path, 10, 1, (1, 1, 0, 0), name="agent")
    add(tmp_path, 11, 10, (100, 20, 3, 4), name="sh) -c (make ) R 9")  # ')' and spaces in comm
    add(tmp_path, 12, 11, (7, 0, 0, 0))
    add(tmp_path, 13, 10, stat=b"13 (x) S 10 1 1 0 -1 0 0 0 0 0 10 10\n")  # truncated: left out
    add(tmp_path, 14, 12, stat=b"14 (x) S 12 1 1 0 -1 0 0 0 0 0 1e3 10 0 0 0\n")  # not an integer
    add(tmp_path, 15, 12, stat=b"15 no parentheses S 12 1 1 0 -1 0 0 0 0 0 1 1 1 1 0\n")
    add(tmp_path, 16, 10, stat=stat_line(16, 10, (2, 2, 0, 0))[:-1])  # no trailing newline
    add(tmp_path, 17, 10, stat=b"17 (t)\tS\t10 1 1 0 -1 0 0 0 0 0 1 2 3\x0b4 0\n")  # other whitespace
    add(tmp_path, 20, 21, (50, 0, 0, 0))  # a pid cycle beside the tree
    add(tmp_path, 21, 20, (60, 0, 0, 0))
    add(tmp_path, 30, 30, (70, 0, 0, 0))  # its own parent
    (tmp_path / "40").mkdir()  # a process directory without stat (exiting)
    (tmp_path / "self").symlink_to("10")  # not a pid
    (tmp_path / "0x10").mkdir()
    (tmp_path / "999999999999999999999").mkdir()
    assert_same(read_all(10, str(tmp_path)), (127 + 7 + 4 + 10) / hz)
    assert_same(read_all(20, str(tmp_path)), 60 / hz)
    assert_same(read_all(30, str(tmp_path)), 0.0)
    assert_same(read_all(13, str(tmp_path)), None)  # malformed root: unreadable, as gone
    assert_same(read_all(40, str(tmp_path)), None)
    assert_same(read_all(77, str(tmp_path)), None)
    for no_pid in (0, -1, 2**62, 2**64 + 10):
        assert_same(read_all(no_pid, str(tmp_path)), None)
    assert_same(read_all(1, str(tmp_path / "missing")), None)


def test_task_children_files_are_followed_through_every_thread(tmp_path: Path):
    """The children-file walk on a fake tree: children of a second thread, garbage tokens, a child that
    is gone, and a process whose task folder cannot be listed (its own time still counts)."""
    module = compiled_module()
    hz = os.sysconf("SC_CLK_TCK")
    add(tmp_path, 10, 1, (1, 1, 0, 0))
    add(tmp_path, 11, 10, (10, 0, 0, 0))
    add(tmp_path, 12, 10, (20, 0, 0, 0))
    add(tmp_path, 13, 11, (30, 0, 0, 0))
    add(tmp_path, 14, 99, (1000, 0, 0, 0))  # not listed as anyone's child: not counted

    def children(pid: int, tid: int, text: bytes) -> None:
        folder = tmp_path / str(pid) / "task" / str(tid)
        folder.mkdir(parents=True)
        (folder / "children").write_bytes(text)

    children(10, 10, b"11 ")
    children(10, 15, b"12 junk -3 0 555 11\n")  # a second thread; 555 is gone; 11 twice
    assert module.descendant_cpu(10, str(tmp_path)) == pytest.approx(30 / hz)  # 13 under 11: no task folder
    children(11, 11, b"13 ")
    assert module.descendant_cpu(10, str(tmp_path)) == pytest.approx(60 / hz)
    assert module.descendant_cpu(10, str(tmp_path), False) == pytest.approx(60 / hz)
    with pytest.raises(ValueError):
        module.descendant_cpu(10, "/" * 5000)
