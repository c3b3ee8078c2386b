"""The wheel in a folder that this interpreter would install, by its tags in pip's order of preference
(``packaging.tags.sys_tags``): a runner that built or downloaded several architectures' wheels gets its own.

    python ci/pick_wheel.py WHEEL_DIR      prints the wheel's path; exit 1 when none fits
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename


def pick(names: Iterable[str], supported: Iterable[Tag]) -> str | None:
    """The name among ``names`` whose tags come first in ``supported`` (most preferred first), else None."""
    tagged = []
    for name in names:
        try:
            tagged.append((name, parse_wheel_filename(name)[3]))
        except InvalidWheelFilename:
            continue
    for tag in supported:
        for name, tags in tagged:
            if tag in tags:
                return name
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python ci/pick_wheel.py WHEEL_DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    names = sorted(path.name for path in folder.glob("lidguard-*.whl"))
    found = pick(names, sys_tags())
    if found is None:
        print(f"pick_wheel: no wheel in {folder} fits this interpreter ({', '.join(names) or 'none there'})",
              file=sys.stderr)
        return 1
    print(folder / found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
