"""The config files each hook installer reads and rewrites, for the exclusive lock around
hook-install / hook-remove (REFERENCE row 42; the lock itself is ``platform.locking.config_lock``)."""

from __future__ import annotations

from pathlib import Path

from . import claude, codex, copilot, opencode

__all__ = ["config_files"]


def config_files(key: str, config: Path | None) -> list[Path]:
    """Every file ``install``/``remove`` of provider ``key`` may change; a provider this table does not
    know yet is locked by its configuration folder's sidecar (coarser, never unlocked)."""
    if key == "claude":
        return [(config if config is not None else claude.claude_dir() / "settings.json").absolute()]
    if key == "codex":
        hooks = (config if config is not None else codex.codex_home() / "hooks.json").absolute()
        return [hooks, codex.codex_home().absolute() / "config.toml"]
    if key == "copilot":
        files = [copilot.managed_file(config).absolute()]
        if config is None:
            home = copilot.copilot_home().absolute()
            files += [home / name for name in copilot.SETTINGS_FILES]
            files.append(home / "hooks" / copilot.LEGACY_NAME)
        return files
    if key == "opencode":
        return [opencode.plugin_file(config).absolute()]
    from . import PROVIDERS

    provider = PROVIDERS.get(key)
    return [config.absolute()] if config is not None else [root.absolute() for root in provider.roots()] \
        if provider is not None else []
