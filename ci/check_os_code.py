"""House rule 1 (design/STYLE.md): OS code lives only under platform/ and _native/ (and proctree).

Flags, outside those places: ``sys.platform``, ``os.name``, imports of OS-only modules and imports
of ``lidguard._native``. Exit 1 with one line per finding.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "lidguard"
ALLOWED = ("platform/", "_native/", "proctree.py")
OS_ONLY_MODULES = {"fcntl", "msvcrt", "winreg", "_winapi", "termios", "pwd", "grp", "resource"}


def findings_for(path: Path) -> list[str]:
    relative = path.relative_to(PACKAGE).as_posix()
    if relative.startswith(ALLOWED):
        return []
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        where = f"src/lidguard/{relative}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in (("sys", "platform"), ("os", "name")):
                found.append(f"{where}: {node.value.id}.{node.attr} outside platform/")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OS_ONLY_MODULES or "_native" in alias.name:
                    found.append(f"{where}: import {alias.name} outside platform/")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in OS_ONLY_MODULES or "_native" in module.split("."):
                found.append(f"{where}: from {module} import outside platform/")
    return found


def main() -> int:
    findings = [line for path in sorted(PACKAGE.rglob("*.py")) for line in findings_for(path)]
    for line in findings:
        print(line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
