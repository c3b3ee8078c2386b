"""Fixtures over a real systemd-logind + polkitd (``real_logind.py``): one instance per pytest-xdist
worker (``real_logind_session``), reset before each test (``real_logind``), a fresh one where a test
needs its own (``fresh_logind``), lidguard running inside (``lidguard_inside`` / ``lidguard_unprivileged``).

Where the machine cannot run it, the tests skip with the reason said once - unless
``LIDGUARD_REQUIRE_REAL_LOGIND=1`` (ci/test.sh under CI=true): then they fail.
A failing test gets the instance's logs (logind, polkitd, dbus, PID 1, the recorder) in its report.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inside_lidguard import InsideLidguard
from real_logind import TEST_USER, RealLogind, RealLogindUnavailable, sweep_stale, unusable_reason

_said: list[str] = []


def _unavailable(reason: str) -> None:
    if os.environ.get("LIDGUARD_REQUIRE_REAL_LOGIND", "") == "1":
        pytest.fail(f"real logind required here (LIDGUARD_REQUIRE_REAL_LOGIND=1) but: {reason}", pytrace=False)
    if not _said:
        _said.append(reason)
        print(f"\n[real logind] tests skip on this machine: {reason}", file=sys.stderr)
    pytest.skip(f"real logind: {reason}")


@pytest.fixture(scope="session")
def real_logind_session() -> Iterator[RealLogind]:
    reason = unusable_reason()
    if reason:
        _unavailable(reason)
    sweep_stale()
    try:
        instance = RealLogind()
    except RealLogindUnavailable as error:
        _unavailable(str(error))
    yield instance
    left = instance.stop()
    assert not left, f"the real logind instance left {left}"


@pytest.fixture
def real_logind(real_logind_session: RealLogind, request: pytest.FixtureRequest) -> Iterator[RealLogind]:
    real_logind_session.reset()
    request.node.stash[_INSTANCES] = [real_logind_session]
    yield real_logind_session


@pytest.fixture
def fresh_logind(request: pytest.FixtureRequest) -> Iterator[Callable[..., RealLogind]]:
    """``fresh_logind(handle_lid_switch="ignore")``: an instance of the test's own, stopped after it."""
    reason = unusable_reason()
    if reason:
        _unavailable(reason)
    started: list[RealLogind] = []
    request.node.stash[_INSTANCES] = started

    def start(**options: str) -> RealLogind:
        instance = RealLogind(**options)
        started.append(instance)
        return instance

    yield start
    for instance in started:
        assert not instance.stop(), "a fresh real logind instance left cgroups behind"


_INSTANCES = pytest.StashKey[list[RealLogind]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for instance in item.stash.get(_INSTANCES, []):
            report.sections.append((f"real logind {instance.id} logs", instance.log_tail()))


@pytest.fixture
def lidguard_inside(real_logind: RealLogind) -> Iterator[InsideLidguard]:
    """lidguard as root inside the worker's instance."""
    home = Path(tempfile.mkdtemp(prefix="lg-rl-home-"))
    inside = InsideLidguard(real_logind, home)
    yield inside
    inside.stop_runtimes()


@pytest.fixture
def lidguard_unprivileged(real_logind: RealLogind) -> Iterator[InsideLidguard]:
    """lidguard as the instance's unprivileged user lgtest (uid 4242) inside the worker's instance."""
    home = Path(tempfile.mkdtemp(prefix="lg-rl-home-"))
    home.chmod(0o755)
    inside = InsideLidguard(real_logind, home, uid=TEST_USER)
    yield inside
    inside.stop_runtimes()


@pytest.fixture
def inside() -> Iterator[Callable[..., InsideLidguard]]:
    """``inside(instance, uid=None)``: lidguard inside an instance of the test's own (``fresh_logind``)."""
    made: list[InsideLidguard] = []

    def make(instance: RealLogind, uid: int | None = None) -> InsideLidguard:
        home = Path(tempfile.mkdtemp(prefix="lg-rl-home-"))
        home.chmod(0o755)
        made.append(InsideLidguard(instance, home, uid=uid))
        return made[-1]

    yield make
    for lidguard in made:
        lidguard.stop_runtimes()
