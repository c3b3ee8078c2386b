"""One rule for where the set-up puts the npm agent CLIs and where the tests look: with a HOME that
is not the account's passwd home, `ci/install-agent-clis.sh` and a real agent test agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agents_clis import NPM_DIR

ROOT = Path(__file__).resolve().parents[2]


def fresh_home(tmp_path: Path) -> dict[str, str]:
    """A new HOME whose npm cache is this machine's (a link, so nothing is downloaded again)."""
    home = tmp_path / "fresh-home"
    (home / ".cache").mkdir(parents=True)
    (home / ".cache" / "lidguard-test-npm").symlink_to(NPM_DIR, target_is_directory=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("LIDGUARD_TEST_NPM_DIR", "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS")}
    env["HOME"] = str(home)
    return env


def test_the_test_modules_look_under_the_home_the_run_started_with(tmp_path):
    env = fresh_home(tmp_path)
    probe = ("import sys\nsys.path[:0] = [sys.argv[1], sys.argv[2]]\nimport agents_clis, agent_clis\n"
             "print(agents_clis.NPM_DIR)\nprint(agent_clis.NPM_DIR)\n")
    result = subprocess.run([sys.executable, "-c", probe, str(ROOT / "tests" / "agents"), str(ROOT / "tests" / "mcp")],
                            env=env, text=True, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    expected = f"{env['HOME']}/.cache/lidguard-test-npm"
    assert result.stdout.splitlines() == [expected, expected]


def test_set_up_and_one_real_agent_test_with_a_home_that_is_not_the_passwd_home(tmp_path):
    env = fresh_home(tmp_path)
    setup = subprocess.run(["bash", str(ROOT / "ci" / "install-agent-clis.sh"), "--check"], env=env, text=True,
                           capture_output=True, timeout=120)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    env["CI"] = "true"  # a missing CLI fails instead of skipping
    run = subprocess.run([sys.executable, "-m", "pytest", "tests/agents/test_agent_turns.py", "-k", "claude", "-q",
                          "-p", "no:cacheprovider", "--benchmark-disable"], cwd=ROOT, env=env, text=True,
                         capture_output=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout
