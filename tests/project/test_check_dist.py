"""ci/check_dist.py finds what must never reach an index: an incomplete or dirty sdist, wheel metadata
without its version, Python bound, classifiers, URLs, extras or scripts, and a Linux wheel with no
manylinux tag."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_check_dist():
    spec = importlib.util.spec_from_file_location("check_dist", ROOT / "ci" / "check_dist.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_dist"] = module
    spec.loader.exec_module(module)
    return module


check_dist = load_check_dist()

GOOD_METADATA = """Metadata-Version: 2.4
Name: lidguard
Version: 1.2.3
Requires-Python: >=3.11
Classifier: Operating System :: POSIX :: Linux
Classifier: Operating System :: MacOS
Classifier: Operating System :: Microsoft :: Windows
Classifier: Programming Language :: Python :: 3.11
Project-URL: Homepage, https://example.invalid/lidguard
Project-URL: Issues, https://example.invalid/lidguard/issues
Project-URL: Changelog, https://example.invalid/lidguard/CHANGELOG.md
Provides-Extra: mcp
Provides-Extra: notify
Provides-Extra: tray

"""
GOOD_ENTRY_POINTS = "[console_scripts]\nlidguard = lidguard.cli:main\nlidguard-notify = lidguard.notify.cli:main\n"


def write_sdist(folder: Path, files: dict[str, str], version: str = "1.2.3") -> Path:
    path = folder / f"lidguard-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"lidguard-{version}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def write_wheel(folder: Path, tag: str = "cp311-cp311-manylinux_2_5_x86_64", metadata: str = GOOD_METADATA,
                entry_points: str = GOOD_ENTRY_POINTS, version: str = "1.2.3") -> Path:
    path = folder / f"lidguard-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"lidguard-{version}.dist-info/METADATA", metadata)
        archive.writestr(f"lidguard-{version}.dist-info/entry_points.txt", entry_points)
    return path


def complete_sdist_files() -> dict[str, str]:
    return {name: "x" for name in check_dist.NEEDED_IN_SDIST}


def test_a_complete_clean_dist_passes(tmp_path: Path) -> None:
    write_sdist(tmp_path, complete_sdist_files())
    write_wheel(tmp_path)
    assert check_dist.main([str(tmp_path)]) == 0


@pytest.mark.parametrize("extra", ["src/lidguard/_native/_proctree.cpython-311-x86_64-linux-gnu.so",
                                   "native/proctree_linux.c", "src/lidguard/_native/_logind.py",
                                   ".venv/bin/python", "src/lidguard/__pycache__/cli.cpython-311.pyc",
                                   ".mypy_cache/3.11/x.json"])
def test_a_build_product_in_the_sdist_is_refused(tmp_path: Path, extra: str) -> None:
    files = complete_sdist_files() | {extra: "x"}
    problems = check_dist.sdist_problems(write_sdist(tmp_path, files), None)
    assert problems == [f"sdist ships a build product or working-tree file: {extra}"]


def test_a_missing_source_and_an_untracked_file_are_refused(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    repo = tmp_path / "repo"
    for name in check_dist.NEEDED_IN_SDIST:
        if name == "PKG-INFO":
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    files = complete_sdist_files() | {"notes-from-my-desk.txt": "x"}
    del files["native/logind_cdef.h"]
    problems = check_dist.sdist_problems(write_sdist(tmp_path, files), repo)
    assert "sdist lacks native/logind_cdef.h" in problems
    assert "sdist ships a file git does not track: notes-from-my-desk.txt" in problems


@pytest.mark.parametrize(("field", "message"), [
    ("Requires-Python: >=3.11\n", "Requires-Python is None"),
    ("Classifier: Operating System :: MacOS\n", "classifier missing: Operating System :: MacOS"),
    ("Project-URL: Changelog, https://example.invalid/lidguard/CHANGELOG.md\n", "project URL missing: changelog"),
    ("Provides-Extra: notify\n", "extras missing: notify"),
])
def test_wheel_metadata_without_a_field_is_refused(tmp_path: Path, field: str, message: str) -> None:
    wheel = write_wheel(tmp_path, metadata=GOOD_METADATA.replace(field, ""))
    assert any(message in problem for problem in check_dist.wheel_problems(wheel, False)), message


def test_a_plain_linux_tag_a_lost_script_and_the_fallback_version_are_refused(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path, tag="cp311-cp311-linux_x86_64", entry_points="[console_scripts]\n",
                        metadata=GOOD_METADATA.replace("Version: 1.2.3", "Version: 0.1.0"), version="0.1.0")
    problems = check_dist.wheel_problems(wheel, expect_scm_version=True)
    assert any("without a manylinux tag" in problem for problem in problems)
    assert any("console script missing: lidguard" in problem for problem in problems)
    assert any("setuptools-scm's fallback" in problem for problem in problems)


def test_the_pure_wheel_needs_no_manylinux_tag(tmp_path: Path) -> None:
    assert check_dist.wheel_problems(write_wheel(tmp_path, tag="py3-none-any"), False) == []
