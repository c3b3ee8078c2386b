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


# The hook hot path: every module a hook or a session command (start/stop/mark-*) imports.
HOOK_PATH_MODULES = (
    "lidguard", "lidguard.ipc.client", "lidguard.ipc.protocol", "lidguard.ipc.transport", "lidguard.ipc.limits",
    "lidguard.proctree", "lidguard.providers", "lidguard.switches", "lidguard.platform.paths",
    "lidguard.platform.locking", "lidguard.cli", "lidguard.cli.fast", "lidguard.shared.raw_settings",
    "lidguard.cli.output",
)


def _hook_package_modules() -> list[str]:
    """Every module of the hooks package (the provider hook commands live there)."""
    package = ROOT / "src" / "lidguard" / "hooks"
    return sorted(f"lidguard.hooks.{path.stem}" for path in package.glob("*.py")
                  if path.stem not in ("__init__", "__main__"))


def test_hook_side_modules_import_only_the_standard_library():
    modules = [*HOOK_PATH_MODULES, *_hook_package_modules()]
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "heavy = {'pydantic', 'anyio', 'httpx', 'psutil', 'rich', 'mcp', 'trio', 'cffi', 'tomlkit', 'watchfiles',\n"
        "         'starlette', 'uvicorn', 'jinja2', 'argparse'}\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_hook_path_probe_can_fail():
    """The probe above reports a heavy import when one happens (it is not vacuous)."""
    probe = "import sys, pydantic\nprint(sorted(n for n in sys.modules if n.split('.')[0] in {'pydantic'}))\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() != "[]"


def test_the_runtime_never_imports_an_os_backend():
    """Issue 18 (layout): the runtime sees the platform through platform.api and the IPC transport seam;
    it never imports platform/linux, macos or windows (the named pipe loop comes from ipc.transport)."""
    import ast

    runtime = Path(__file__).resolve().parents[2] / "src" / "lidguard" / "runtime"
    found = []
    for path in sorted(runtime.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                parts = ((node.module or "").split(".") + [alias.name for alias in node.names])
                if "platform" in parts and set(parts) & {"linux", "macos", "windows"}:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def _imports_of(path: Path) -> list[str]:
    """Absolute module names a lidguard source file imports (relative imports resolved)."""
    import ast

    package_parts = ["lidguard", *path.relative_to(ROOT / "src" / "lidguard").parent.parts]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package_parts[:len(package_parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.extend([module] if node.module else [f"{module}.{alias.name}" for alias in node.names])
    return names


def test_nothing_below_the_cli_imports_from_it():
    """cli/ is the top floor: hooks/, mcp/, installers/, the runtime... never import lidguard.cli."""
    package = ROOT / "src" / "lidguard"
    offenders = [f"{path.relative_to(package)}: {name}"
                 for path in sorted(package.rglob("*.py"))
                 if path.relative_to(package).parts[0] not in ("cli", "__main__.py")
                 for name in _imports_of(path) if name == "lidguard.cli" or name.startswith("lidguard.cli.")]
    assert not offenders
