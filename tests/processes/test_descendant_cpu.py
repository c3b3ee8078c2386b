"""The CPU time of a process's descendants (the running-tool check): the pure table walk, the ps time
format, and the Linux /proc reader on real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lidguard import proctree
from lidguard.platform.ancestry.cputime import parse_ps_cpu_table, parse_ps_time, sum_descendants


def test_only_descendants_count_and_cycles_are_harmless():
    table = {1: (0, 100.0), 10: (1, 5.0), 11: (10, 2.5), 12: (11, 0.5), 20: (1, 50.0), 30: (30, 9.0),
             40: (41, 1.0), 41: (40, 1.0)}
    assert sum_descendants(table, 10) == 3.0
    assert sum_descendants(table, 12) == 0.0
    assert sum_descendants(table, 99) is None
    assert sum_descendants(table, 40) == 1.0  # 41 counted once, 40 never counts itself


@pytest.mark.parametrize(("text", "seconds"), [("0:01.50", 1.5), ("01:02:03", 3723.0), ("2-00:00:01", 172801.0),
                                               ("12", 12.0), ("x:1", None), ("-1:00", None), ("1:2:3:4", None),
                                               ("nan", None)])
def test_ps_time_format(text, seconds):
    assert parse_ps_time(text) == seconds


def test_ps_table_skips_malformed_lines():
    table = parse_ps_cpu_table("  1     0   0:10.00\n 2 1 0:01.00\ngarbage\n 3 x 0:01\n 4 2 1-\n")
    assert table == {1: (0, 10.0), 2: (1, 1.0)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the /proc reader is Linux's")
def test_linux_reader_sees_a_child_burning_cpu_and_nothing_for_a_childless_or_gone_process():
    burner = "import time\nend = time.process_time() + 5\nwhile time.process_time() < end: pass\n"
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burner!r}])"],
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        first = proctree.descendant_cpu_seconds(parent.pid)
        while (first is None or first < 0.2) and time.monotonic() < deadline:
            time.sleep(0.05)
            first = proctree.descendant_cpu_seconds(parent.pid)
        assert first is not None and first >= 0.2
        later = first
        while later <= first and time.monotonic() < deadline:
            time.sleep(0.05)
            later = proctree.descendant_cpu_seconds(parent.pid)
        assert later > first  # the tool is still working
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # the burner too
        parent.wait()
    assert proctree.descendant_cpu_seconds(parent.pid) is None  # gone
    lone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert proctree.descendant_cpu_seconds(lone.pid) == 0.0
    finally:
        lone.kill()
        lone.wait()
