"""Every test runs isolated: its own HOME, data and runtime folders, and the fake platform."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ["LIDGUARD_PLATFORM"] = "fake"


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
