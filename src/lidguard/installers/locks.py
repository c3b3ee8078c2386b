"""The config files each hook installer reads and rewrites, for the exclusive lock around
hook-install / hook-remove (REFERENCE row 42; the lock itself is ``platform.locking.config_lock``).
Each agent's installer names its own (``locked_files``)."""

from __future__ import annotations

from pathlib import Path

from ..agents import agent

__all__ = ["config_files"]


def config_files(key: str, config: Path | None) -> list[Path]:
    """Every file ``install``/``remove`` of agent ``key`` may change; [] for a key no agent has."""
    module = agent(key)
    return module.installer().locked_files(config) if module is not None else []
