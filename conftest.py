"""Every test runs isolated (own HOME, data and runtime folders, fake platform); `lidguard` runs the
real CLI and runtime as processes inside that isolation."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ["LIDGUARD_PLATFORM"] = "fake"
# Inherited by every process a test starts: backends refuse the real system bus and systemctl.
os.environ["LIDGUARD_TEST_MODE"] = "1"
# English whatever the machine's locale (lidguard.l10n): the tests assert English texts; the tests of the
# other languages (tests/l10n) set or remove it themselves.
os.environ["LIDGUARD_UI_CULTURE"] = "en"


# The longest tests of the suite (wall time on a loaded 2-core run), started first so none of them is
# the last thing a worker runs: one started near the end made the whole run wait for it.
LONGEST_FIRST = (
    "tests/agents/test_agent_long_tool.py",  # a real two-minute tool: ~140 s
    "tests/agents/test_agent_ask_before_sleep.py",  # 5 x 60-85 s
    "tests/agents/test_agent_background_task.py",
    "tests/hooks/test_hook_fuzz.py",
    "tests/hooks/test_hook_processes.py",
    "tests/cli/test_newcomer_walk.py",  # installs from the checkout: ~90 s
    "tests/hooks/test_hook_client.py",  # the native hook client against the Python hook: ~55 s loaded
)

# The platform and CLI tests whose behaviour depends on who runs them (issue 34.4): ci/test.sh runs these
# folders as the unprivileged user `lidguard-test` (ci/test-user.sh), the rest of the suite as root. Each
# test of them not marked ``root_only`` gets the ``user_lane`` mark: the user lane selects ``user_lane``,
# the root lane ``not user_lane``, so every test runs exactly once (tests/project/test_test_lanes.py).
USER_LANE_DIRS = ("tests/cli", "tests/instance", "tests/linux", "tests/macos", "tests/windows", "tests/hooks",
                  "tests/installers", "tests/settings", "tests/agents", "tests/faults", "tests/processes")


def in_user_lane(nodeid: str, is_root_only: bool) -> bool:
    return not is_root_only and any(nodeid.startswith(folder + "/") for folder in USER_LANE_DIRS)


def pytest_configure(config: pytest.Config) -> None:
    # The user lane's guard: set by ci/test.sh for the user lane, so that lane can never run as root again
    # without anyone noticing (its tests would pass, proving nothing about a normal user).
    if os.environ.get("LIDGUARD_EXPECT_UNPRIVILEGED") == "1" and os.geteuid() == 0:
        pytest.exit("LIDGUARD_EXPECT_UNPRIVILEGED=1 but the tests run as root (the user lane must not)",
                    returncode=4)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist turns xdist_group marks into work units
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (ci/test.sh: ``-n N --dist loadgroup``) the tests of one module that share a
    module- or class-scoped fixture (a browser, a logind mock, a process chain) run on one worker, so
    that set-up happens once, as in a serial run. Tests marked ``xdist_group`` keep their own group.
    The modules of LONGEST_FIRST come first (a stable sort: each module's own order is kept)."""
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)
    for item in items:
        if in_user_lane(item.nodeid, item.get_closest_marker("root_only") is not None):
            item.add_marker(pytest.mark.user_lane)
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for name in info.names_closure:
            definitions = info.name2fixturedefs.get(name) or ()
            if definitions and definitions[-1].scope in ("module", "class", "package"):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
                break


@pytest.fixture(autouse=True)
def isolated_home(monkeypatch: pytest.MonkeyPatch) -> Path:
    # A short path: Unix socket paths are limited to ~107 bytes.
    home = Path(tempfile.mkdtemp(prefix="lg-"))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))
    monkeypatch.setenv("LIDGUARD_PLATFORM", "fake")
    for variable in ("LIDGUARD_FAKE_STATE", "LIDGUARD_FAKE_ACTIONS", "LIDGUARD_SYSFS_ROOT"):
        monkeypatch.delenv(variable, raising=False)
    (home / "run").mkdir(mode=0o700)
    yield home
    shutil.rmtree(home, ignore_errors=True)



def poll_pause(last_poll_seconds: float, minimum: float) -> float:
    """The pause before the next poll of a bounded wait: ``minimum``, or twice what the last poll took when
    that is longer. A poll that starts a process (``lidguard status --json``: ~0.3 s of CPU, more under load;
    a D-Bus question through /usr/bin/python3) then keeps at most a third of a core busy while it waits,
    not a whole one - CPU is the suite's limit on 2 cores, and a busy poller slows the very thing it waits
    for. A slow poll means a loaded machine, where waiting a little longer costs nothing."""
    return max(minimum, 2.0 * last_poll_seconds)


class LidguardProcesses:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.state_file = home / "fake-state.json"
        self.actions_file = home / "fake-actions.jsonl"
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_RUNTIME_DIR": str(home / "run"),
            "LIDGUARD_PLATFORM": "fake",
            "LIDGUARD_FAKE_STATE": str(self.state_file),
            "LIDGUARD_FAKE_ACTIONS": str(self.actions_file),
        }
        self.env.pop("PYTEST_CURRENT_TEST", None)
        self.data_dir = home / "data" / "LidGuard"
        # platform/paths.py: the socket is derived from the data folder alone (XDG_RUNTIME_DIR plays no part).
        self.socket = self.data_dir / "run" / "runtime.sock"

    def run(self, *args: str, input_text: str | None = None, check: bool = False,
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "lidguard", *args], env=self.env, text=True,
                                capture_output=True, input=input_text, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"lidguard {' '.join(args)} failed: {result.stderr}")
        return result

    def json(self, *args: str) -> Any:
        result = self.run(*args, "--json", check=True)
        return json.loads(result.stdout)

    def set_machine(self, **state: Any) -> None:
        self.state_file.write_text(json.dumps(state))

    def actions(self) -> list[dict[str, Any]]:
        if not self.actions_file.exists():
            return []
        return [json.loads(line) for line in self.actions_file.read_text().splitlines() if line.strip()]

    def runtime_pids(self) -> list[int]:
        return self.pids_of_this_home("lidguard run-server")

    def pids_of_this_home(self, pattern: str) -> list[int]:
        """Processes whose command line matches ``pattern`` (pgrep -f) started with this test's HOME."""
        result = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
        pids = []
        for pid in result.stdout.split():
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            # HOME, not XDG_RUNTIME_DIR: a test may start the runtime from an environment without it.
            if f"\0HOME={self.home}\0".encode() in b"\0" + environ:
                pids.append(int(pid))
        return pids

    def wait_until(self, predicate, timeout: float = 30.0) -> bool:
        """Bounded polling: True as soon as ``predicate`` holds (the bound costs nothing then); 30 s by
        default for a loaded 2-core CI run. A test that expects something NOT to happen passes its own
        short ``timeout``. Between polls: ``poll_pause`` (a predicate that starts ``lidguard status``
        polls at most a third of the time)."""
        deadline = time.monotonic() + timeout
        while True:
            began = time.monotonic()
            if predicate():
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            time.sleep(min(poll_pause(now - began, 0.05), deadline - now))

    def kill_runtimes(self) -> None:
        for pid in self.runtime_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def load_allowance_seconds(factor: float = 10.0) -> float:
    """Extra seconds a process test may allow for this machine's load right now: ``factor`` x the slower of
    two bare interpreter starts (``python -c "import json, socket, os"``) timed now. Quiet: ~0.3-0.5 s;
    beside a loaded suite on 2 cores the interpreter itself takes 0.5-1 s to start, and a fixed bound of a
    few seconds on a lidguard process failed there. Bounds written as "budget + allowance" still catch a
    process that waits for a timeout it should not wait for."""
    floors = []
    for _ in range(2):
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "import json, socket, os"], check=True, timeout=120)
        floors.append(time.monotonic() - began)
    return factor * max(floors)


@pytest.fixture
def load_allowance() -> Callable[..., float]:
    """``load_allowance()``: seconds to add to a process test's wall-clock bound (see
    ``load_allowance_seconds``)."""
    return load_allowance_seconds


@pytest.fixture
def lidguard(isolated_home: Path) -> Iterator[LidguardProcesses]:
    processes = LidguardProcesses(isolated_home)
    yield processes
    processes.kill_runtimes()


class FreshVenv:
    """A new virtual environment (``python -m venv --without-pip``) that reaches lidguard as an editable
    install does: a ``.pth`` line with the source folder under test, then the current interpreter's
    site-packages for the dependencies (a path line, so their own ``.pth`` files never run). Nothing is
    imported at start-up beyond what Python itself needs: this machine's global interpreter pre-imports
    ``typing``, ``re``, ``pathlib``... through a ``.pth``, which hides what the hook path costs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")
        self.console_script = self.bin / "lidguard"  # as pip writes it for [project.scripts]


def make_fresh_venv(root: Path, source: Path | None = None) -> FreshVenv:
    """``source``: the folder holding the ``lidguard`` package (default: the one this run imports)."""
    import sysconfig

    import lidguard

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120,
                   capture_output=True)
    venv = FreshVenv(root)
    purelib = subprocess.run([str(venv.python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    source = source or Path(lidguard.__file__).resolve().parent.parent
    # Also every site-packages folder of this run (a venv made with --system-site-packages has two).
    dependencies = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"),
                                  *(entry for entry in sys.path if entry.endswith(("site-packages", "dist-packages")))])
    Path(purelib, "lidguard-under-test.pth").write_text("\n".join([str(source), *dependencies]) + "\n")
    venv.console_script.write_text(f"#!{venv.python}\nimport sys\nfrom lidguard.cli import main\n"
                                   "if __name__ == '__main__':\n"
                                   "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
                                   "    sys.exit(main())\n")
    venv.console_script.chmod(0o755)
    return venv


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """A clean-start interpreter for import guards and the hook benchmark (see ``FreshVenv``)."""
    return make_fresh_venv(tmp_path_factory.mktemp("fresh-venv"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Issue 34: nothing of the real logind fixture remains after the run. Checked by the controller (or a run
    without xdist) - the root conftest, so a whole-suite run checks it too (under xdist the controller never
    loads tests/reallogind's conftest) - for every instance whose owning pytest process is gone."""
    if hasattr(session.config, "workerinput"):
        return
    folder = Path(__file__).resolve().parent / "tests" / "reallogind"
    if not (folder / "real_logind.py").is_file():
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location("_reallogind_leftovers", folder / "real_logind.py")
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    left = [path for path in module.leftovers() if _reallogind_owner_gone(path)]
    if left:
        print(f"\n[real logind] left behind after the run: {left}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _reallogind_owner_gone(path: str) -> bool:
    """An instance folder or cgroup whose pytest owner (its ``owner`` file) no longer runs."""
    owner = Path(tempfile.gettempdir()) / Path(path).name / "owner"
    try:
        pid = int(owner.read_text())
    except (OSError, ValueError):
        return True
    return pid != os.getpid() and not Path(f"/proc/{pid}").exists()
