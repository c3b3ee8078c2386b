"""Prints the CHANGELOG.md section of one version (the GitHub release's notes; the release workflow
refuses a tag whose version has no section).

    python3 ci/changelog_section.py VERSION [CHANGELOG]

Keep a Changelog layout: `## [1.2.3] - 2026-12-03` headings; the section runs to the next `## ` heading.
Exit 1 with one line when the version has no section or an empty one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$")


def section(text: str, version: str) -> str | None:
    lines = text.splitlines()
    start = None
    for index, line in enumerate(lines):
        match = HEADING.match(line)
        if start is not None and line.startswith("## "):
            return "\n".join(lines[start:index]).strip() or None
        if match and match.group("version") == version:
            start = index + 1
    if start is None:
        return None
    body = "\n".join(lines[start:]).strip()
    # Link references at the end of the file belong to no section.
    body = "\n".join(line for line in body.splitlines() if not re.match(r"^\[[^\]]+\]: ", line)).strip()
    return body or None


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: python3 ci/changelog_section.py VERSION [CHANGELOG]", file=sys.stderr)
        return 2
    version = argv[0].removeprefix("v")
    path = Path(argv[1]) if len(argv) == 2 else Path(__file__).resolve().parents[1] / "CHANGELOG.md"
    body = section(path.read_text(encoding="utf-8"), version)
    if body is None:
        print(f"changelog_section: {path.name} has no section for {version} (add '## [{version}] - <date>')",
              file=sys.stderr)
        return 1
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
