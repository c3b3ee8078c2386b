"""Real-OS contract tests: the backends against the real macOS and Windows (Linux: tests/reallogind, the
real systemd-logind + polkitd fixture, is the Linux contract and runs in .ci/run here).

Each test is marked ``@pytest.mark.real_os("macos"|"windows"|"linux")`` and runs only on that OS with
``LIDGUARD_REAL_OS=1`` (set by ci/test-os.sh and ci/contract-tests.sh in the workflows); anywhere else it is
collected and skipped with the reason. Every check is read-only or reverts itself (a power request or a
caffeinate assertion taken and released): none writes a power setting. The backends refuse real tools
under pytest (tests never change live power policy), so these tests read the real tools and bindings
directly and hand the outputs to the backends' own parsers.
"""

from __future__ import annotations

import os
import sys

import pytest

PLATFORMS = {"linux": "linux", "darwin": "macos", "win32": "windows"}
THIS_OS = PLATFORMS.get(sys.platform, sys.platform)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    enabled = os.environ.get("LIDGUARD_REAL_OS") == "1"
    for item in items:
        marker = item.get_closest_marker("real_os")
        if marker is None:
            continue
        wanted = marker.args[0]
        if wanted != THIS_OS:
            item.add_marker(pytest.mark.skip(reason=f"real {wanted} contract test (this is {THIS_OS})"))
        elif not enabled:
            item.add_marker(pytest.mark.skip(reason=f"real {wanted} contract test: set LIDGUARD_REAL_OS=1"))
