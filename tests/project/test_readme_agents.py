"""README's agent table is the registry's (``python3 -m lidguard.agents.table --write README.md``)."""

from __future__ import annotations

from pathlib import Path

from lidguard.agents import AGENTS
from lidguard.agents.table import BEGIN, END, render, replace_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_agent_table_is_the_one_the_registry_generates() -> None:
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert replace_table(text) == text, "run: python3 -m lidguard.agents.table --write README.md"


def test_the_table_has_one_row_per_agent_of_the_registry() -> None:
    rows = render().splitlines()[2:]
    assert len(rows) == len(AGENTS)
    for row, key in zip(rows, AGENTS, strict=True):
        assert f"`lidguard {key}-hook" in row
