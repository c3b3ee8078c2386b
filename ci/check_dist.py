"""Checks a built sdist and wheels before anything is published (ci/check-wheel.sh; the release workflow).

    python3 ci/check_dist.py DIST_DIR [--git-root ROOT]

- the sdist holds everything a build needs and nothing from a working tree: every file in it is tracked
  by git (when ROOT is a git checkout), never a build product (compiled modules, Cython's C output, the
  generated cffi modules, caches, virtual environments);
- every wheel's metadata: the version from setuptools-scm (not the fallback when git metadata exists),
  Requires-Python, classifiers, project URLs, the extras, both console scripts; wheels of one version;
- Linux wheels carry a manylinux tag (auditwheel repaired) unless they are pure.
One line per problem, exit 1 when there is any.
"""

from __future__ import annotations

import argparse
import email.parser
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

NEEDED_IN_SDIST = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "PKG-INFO", "MANIFEST.in",
                   "native/proctree_linux.pyx", "native/logind_build.py", "native/logind_cdef.h",
                   "native/macos_build.py", "native/macos_cdef.h", "native/windows_build.py",
                   "native/windows_cdef.h", "native/hook_client.c", "src/lidguard/__init__.py",
                   "src/lidguard/cli/__init__.py")
# Files the sdist build itself writes (setuptools' egg-info, the scm version file and setup.cfg).
SDIST_GENERATED = ("PKG-INFO", "setup.cfg")
NEVER_SHIPPED_SUFFIXES = (".so", ".pyd", ".dylib", ".pyc", ".o")
NEVER_SHIPPED_PARTS = ("__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".hypothesis", "build",
                       ".benchmarks", ".git")
GENERATED_SOURCES = ("native/proctree_linux.c", "src/lidguard/_native/_logind.py", "src/lidguard/_native/lidguard-hook",
                     "src/lidguard/_native/_windows.py", "src/lidguard/_native/_macos.py")
EXTRAS = {"mcp", "notify", "tray"}
SCRIPTS = {"lidguard", "lidguard-notify"}
FALLBACK_VERSION = "0.1.0"


def sdist_problems(sdist: Path, git_root: Path | None) -> list[str]:
    with tarfile.open(sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    top = names[0].split("/", 1)[0]
    files = {name.split("/", 1)[1] for name in names if "/" in name}
    problems = [f"sdist lacks {name}" for name in NEEDED_IN_SDIST if name not in files]
    tracked: set[str] | None = None
    if git_root is not None and (git_root / ".git").exists():
        listed = subprocess.run(["git", "-C", str(git_root), "ls-files"], capture_output=True, text=True,
                                check=True).stdout
        tracked = set(listed.splitlines())
    for name in sorted(files):
        path = PurePosixPath(name)
        if name.endswith(NEVER_SHIPPED_SUFFIXES) or any(part in NEVER_SHIPPED_PARTS for part in path.parts) \
                or name in GENERATED_SOURCES:
            problems.append(f"sdist ships a build product or working-tree file: {name}")
        elif tracked is not None and name not in tracked and name not in SDIST_GENERATED \
                and not any(part.endswith(".egg-info") for part in path.parts):
            problems.append(f"sdist ships a file git does not track: {name}")
    if not top.startswith("lidguard-"):
        problems.append(f"sdist's folder is {top!r}, not lidguard-<version>")
    return problems


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, str]:
    with zipfile.ZipFile(wheel) as archive:
        metadata_name = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        entry_points_name = metadata_name.replace("METADATA", "entry_points.txt")
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
        entry_points = archive.read(entry_points_name).decode() if entry_points_name in archive.namelist() else ""
    return metadata, entry_points


def wheel_problems(wheel: Path, expect_scm_version: bool) -> list[str]:
    problems: list[str] = []
    metadata, entry_points = wheel_metadata(wheel)
    label = wheel.name
    version = metadata.get("Version", "")
    if expect_scm_version and version == FALLBACK_VERSION:
        problems.append(f"{label}: version is setuptools-scm's fallback {FALLBACK_VERSION} despite git metadata")
    if metadata.get("Requires-Python") != ">=3.11":
        problems.append(f"{label}: Requires-Python is {metadata.get('Requires-Python')!r}, not '>=3.11'")
    classifiers = metadata.get_all("Classifier") or []
    for wanted in ("Operating System :: POSIX :: Linux", "Operating System :: MacOS",
                   "Operating System :: Microsoft :: Windows", "Programming Language :: Python :: 3.11"):
        if wanted not in classifiers:
            problems.append(f"{label}: classifier missing: {wanted}")
    urls = {entry.split(",", 1)[0].strip().lower() for entry in metadata.get_all("Project-URL") or []}
    for wanted in ("homepage", "issues", "changelog"):
        if wanted not in urls:
            problems.append(f"{label}: project URL missing: {wanted}")
    extras = set(metadata.get_all("Provides-Extra") or [])
    if not EXTRAS <= extras:
        problems.append(f"{label}: extras missing: {', '.join(sorted(EXTRAS - extras))}")
    for script in SCRIPTS:
        if f"{script} =" not in entry_points:
            problems.append(f"{label}: console script missing: {script}")
    tag = wheel.name.rsplit("-", 1)[1]
    if "linux" in tag and "manylinux" not in tag:
        problems.append(f"{label}: a Linux wheel without a manylinux tag (run auditwheel repair)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path)
    parser.add_argument("--git-root", type=Path, default=None)
    options = parser.parse_args(argv)
    sdists = sorted(options.dist.glob("lidguard-*.tar.gz"))
    wheels = sorted(options.dist.glob("lidguard-*.whl"))
    problems: list[str] = []
    if len(sdists) != 1:
        problems.append(f"expected one sdist in {options.dist}, found {len(sdists)}")
    if not wheels:
        problems.append(f"no wheel in {options.dist}")
    expect_scm = options.git_root is not None and (options.git_root / ".git").exists()
    for sdist in sdists:
        problems += sdist_problems(sdist, options.git_root)
    versions = set()
    for wheel in wheels:
        problems += wheel_problems(wheel, expect_scm)
        versions.add(wheel.name.split("-")[1])
    if len(versions) > 1:
        problems.append(f"wheels of different versions: {', '.join(sorted(versions))}")
    for problem in problems:
        print(f"check_dist: {problem}")
    if not problems:
        print(f"dist OK: {', '.join(path.name for path in sdists + wheels)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
