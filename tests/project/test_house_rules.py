"""Project-wide rules: OS code placement, the hook hot path's imports, module size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_os_code_lives_only_under_platform():
    result = subprocess.run([sys.executable, str(ROOT / "ci" / "check_os_code.py")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_the_checker_flags_os_code_elsewhere(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "ci"))
    try:
        import check_os_code
    finally:
        sys.path.pop(0)
    package = tmp_path / "lidguard"
    (package / "runtime").mkdir(parents=True)
    (package / "runtime" / "bad.py").write_text("import sys, fcntl\nif sys.platform == 'linux':\n    pass\n")
    (package / "platform").mkdir()
    (package / "platform" / "ok.py").write_text("import sys, fcntl\nprint(sys.platform)\n")
    monkeypatch.setattr(check_os_code, "PACKAGE", package)
    findings = [line for path in sorted(package.rglob("*.py")) for line in check_os_code.findings_for(path)]
    assert len(findings) == 2 and all("runtime/bad.py" in line for line in findings)


def test_modules_stay_small():
    too_big = [f"{path.relative_to(ROOT)}: {count} lines"
               for path in (ROOT / "src" / "lidguard").rglob("*.py")
               if (count := len(path.read_text(encoding="utf-8").splitlines())) > 600]
    assert not too_big


def test_hook_side_modules_import_only_the_standard_library():
    probe = (
        "import sys\n"
        "import lidguard.ipc.client, lidguard.ipc.protocol, lidguard.proctree, lidguard.hooks.agent_process\n"
        "heavy = {'pydantic', 'anyio', 'httpx', 'psutil', 'rich', 'mcp', 'trio', 'cffi'}\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
