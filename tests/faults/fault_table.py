"""Prints the fault-injection results as a text table (rows: files, columns: faults).

Usage: ``LIDGUARD_FAULT_TABLE=/tmp/faults.tsv python3 -m pytest tests/faults/test_fault_injection.py``,
then ``python3 tests/faults/fault_table.py /tmp/faults.tsv``. A cell is the hook's seconds when the start
ended protected, ``FAIL`` otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path


def render(lines: list[str]) -> str:
    cells: dict[tuple[str, str], str] = {}
    files: list[str] = []
    faults: list[str] = []
    for line in lines:
        name, fault, outcome, seconds = line.rstrip("\n").split("\t")
        files += [name] if name not in files else []
        faults += [fault] if fault not in faults else []
        cells[(name, fault)] = f"ok {seconds}s" if outcome == "protected" else "FAIL"
    width = max(len(name) for name in files)
    columns = [max(len(fault), *(len(cells.get((name, fault), "-")) for name in files)) for fault in faults]
    rows = [" | ".join([" " * width, *(fault.ljust(size) for fault, size in zip(faults, columns, strict=True))])]
    rows.append("-+-".join(["-" * width, *("-" * size for size in columns)]))
    for name in files:
        rows.append(" | ".join([name.ljust(width), *(cells.get((name, fault), "-").ljust(size)
                                                      for fault, size in zip(faults, columns, strict=True))]))
    return "\n".join(rows)


if __name__ == "__main__":
    print(render(Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()))
