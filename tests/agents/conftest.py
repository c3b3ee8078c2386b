"""tests/agents: the real Claude Code, Codex, Copilot and OpenCode CLIs against a scripted fake model."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# --import-mode=importlib puts no test folder on sys.path; the harness modules live here.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents_harness import AgentRun  # noqa: E402
from fake_model import FakeModel  # noqa: E402


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as model:
        yield model


@pytest.fixture
def agent(lidguard: Any, fake_model: FakeModel) -> Iterator[Callable[[str], AgentRun]]:
    runs: list[AgentRun] = []

    def make(name: str) -> AgentRun:
        run = AgentRun(name, lidguard, fake_model)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.close()
