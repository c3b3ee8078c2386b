"""ci/test.sh's two lanes (issue 34.4): the user lane runs conftest.USER_LANE_DIRS with ``-m user_lane`` as
the unprivileged lidguard-test user, the root lane ``tests benchmarks`` with ``-m "not user_lane"``.
Together they run every test of the suite exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DUMP_PLUGIN = '''
import json, os
def pytest_collection_finish(session):
    rows = [[item.nodeid, item.get_closest_marker("user_lane") is not None,
             item.get_closest_marker("root_only") is not None] for item in session.items]
    with open(os.environ["LANE_DUMP"], "w") as out:
        json.dump(rows, out)
'''


def _user_lane_dirs() -> tuple[str, ...]:
    sys.path.insert(0, str(ROOT))
    try:
        import conftest
    finally:
        sys.path.pop(0)
    return conftest.USER_LANE_DIRS


def test_the_lanes_partition_the_suite(tmp_path):
    (tmp_path / "lane_dump.py").write_text(DUMP_PLUGIN)
    dump = tmp_path / "lanes.json"
    env = {**os.environ, "LANE_DUMP": str(dump),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "-p", "lane_dump", "-p", "no:xdist", "tests", "benchmarks"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = json.loads(dump.read_text())
    dirs = _user_lane_dirs()
    everything = {nodeid for nodeid, _, _ in rows}
    # What each lane's command line selects: folders, then the mark.
    user = {nodeid for nodeid, marked, _ in rows
            if marked and any(nodeid.startswith(folder + "/") for folder in dirs)}
    root = {nodeid for nodeid, marked, _ in rows if not marked}
    assert len(everything) == len(rows) > 2000
    assert not user & root, "in both lanes"
    assert not everything - user - root, f"in neither lane: {sorted(everything - user - root)[:5]}"
    assert all(not marked for _, marked, root_only in rows if root_only), "a root_only test in the user lane"
    assert len(user) > 1000 and len(root) > 500, (len(user), len(root))


def test_ci_runs_both_lanes_with_those_selections():
    script = (ROOT / "ci" / "test.sh").read_text()
    assert "start_background user-lane user_lane user_lane" in script  # the user lane's -m expression
    assert 'root_lane="not user_lane"' in script and '-m "$root_lane"' in script
    assert "ci/test-user.sh --run" in script and "conftest.USER_LANE_DIRS" in script
    assert "LIDGUARD_EXPECT_UNPRIVILEGED=1" in (ROOT / "ci" / "test-user.sh").read_text()
    assert all((ROOT / folder).is_dir() for folder in _user_lane_dirs())


def test_the_user_lane_refuses_to_run_as_root():
    if os.geteuid() != 0:
        pytest.skip("the guard is about running as root")  # the root lane runs this
    env = {**os.environ, "LIDGUARD_EXPECT_UNPRIVILEGED": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "-p", "no:xdist", "tests/settings"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "LIDGUARD_EXPECT_UNPRIVILEGED=1 but the tests run as root" in result.stdout + result.stderr
